package play

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/flipzero/flipzero/engine"
	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/mcts"
	"github.com/flipzero/flipzero/nn"
)

// PageFile is the name of the file the page reads first to learn who
// answers its requests.
const PageFile = "page.json"

// The engines a page can have.
const (
	// EngineServer: the server that serves the page answers its
	// requests ("flipzero serve").
	EngineServer = "server"
	// EnginePage: the page's own engine does, compiled to WebAssembly,
	// with the network in ONNX Runtime Web (an exported page).
	EnginePage = "page"
)

// Page is page.json: who answers the page's requests and, for a page
// with its own engine, what that engine plays and how.
type Page struct {
	Engine string `json:"engine"`
	// Game, Model (the ONNX file, relative to the page) and Network are
	// the network's; Strength and Search how the engine plays; Human the
	// person's side in the first game. Only a page with its own engine
	// has them.
	Game  string `json:"game,omitempty"`
	Model string `json:"model,omitempty"`
	// Input is the shape of a position as the network reads it:
	// planes, height, width.
	Input    []int        `json:"input,omitempty"`
	Network  *Network     `json:"network,omitempty"`
	Strength *Strength    `json:"strength,omitempty"`
	Search   *mcts.Config `json:"search,omitempty"`
	Human    string       `json:"human,omitempty"`
	// Seed fixes the deals of a game with chance events; 0 draws them
	// from the clock of the page's engine, so that each visit deals anew.
	Seed uint64 `json:"seed,omitempty"`
	// Version is the flipzero that wrote the page.
	Version string `json:"version,omitempty"`
}

// ReadPage reads a page.json of a page with its own engine and checks
// that it describes a game and an engine that can play it: the page's
// engine reads its file with it, so that a damaged one is reported on the
// page.
func ReadPage(raw []byte, reg engine.Games) (Page, env.Game, error) {
	var p Page
	if err := json.Unmarshal(raw, &p); err != nil {
		return Page{}, nil, fmt.Errorf("%s: %w", PageFile, err)
	}
	if p.Engine != EnginePage {
		return Page{}, nil, fmt.Errorf("%s: engine %q, want %q", PageFile, p.Engine, EnginePage)
	}
	g, err := reg.ByName(p.Game)
	if err != nil {
		return Page{}, nil, fmt.Errorf("%s: %w", PageFile, err)
	}
	if planes, h, w := g.EncodedShape(); len(p.Input) != 3 || p.Input[0] != planes || p.Input[1] != h || p.Input[2] != w {
		return Page{}, nil, fmt.Errorf("%s: input %v, but %s positions are %d×%d×%d", PageFile, p.Input, g.Name(), planes, h, w)
	}
	if p.Strength == nil || p.Search == nil {
		return Page{}, nil, fmt.Errorf("%s: no strength or search", PageFile)
	}
	if _, err := p.Options(); err != nil {
		return Page{}, nil, err
	}
	if p.Human != "" {
		if _, err := env.ParsePlayer(g, p.Human); err != nil {
			return Page{}, nil, fmt.Errorf("%s: human: %w", PageFile, err)
		}
	}
	return p, g, nil
}

// Options are the engine options the page plays with, less the backend.
func (p Page) Options() (engine.EngineOptions, error) {
	o := engine.EngineOptions{Playouts: p.Strength.Playouts, Search: *p.Search, Seed: p.Seed,
		MoveTime: time.Duration(p.Strength.Seconds * float64(time.Second))}
	if o.MoveTime == 0 && (o.Playouts < 1 || o.Playouts > MaxPlayouts) || p.Strength.Seconds < 0 || p.Strength.Seconds > MaxSeconds {
		return o, fmt.Errorf("%s: strength %+v, want 1 to %d playouts or up to %d seconds", PageFile, *p.Strength, MaxPlayouts, MaxSeconds)
	}
	if err := p.Search.Validate(); err != nil {
		return o, fmt.Errorf("%s: search: %w", PageFile, err)
	}
	return o, nil
}

// PageSession is the game a page's own engine plays: p's engine over inf,
// the network's inference (ONNX Runtime Web's, in the browser).
func PageSession(p Page, g env.Game, inf nn.Inference) (*Session, error) {
	opts, err := p.Options()
	if err != nil {
		return nil, err
	}
	if opts.Seed == 0 {
		opts.Seed = uint64(time.Now().UnixNano())
	}
	eval, err := nn.NewBatchEvaluator(g, inf)
	if err != nil {
		return nil, err
	}
	e, err := engine.NewEngine(g, eval, opts)
	if err != nil {
		return nil, err
	}
	human := env.Player(0)
	if p.Human != "" {
		human, _ = env.ParsePlayer(g, p.Human)
	}
	return New(e, human, p.Network)
}
