package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"strings"
	"time"

	"github.com/flipzero/flipzero/engine"
	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/gtp"
	"github.com/flipzero/flipzero/loop"
	"github.com/flipzero/flipzero/mcts"
	"github.com/flipzero/flipzero/terminal"
	"github.com/flipzero/flipzero/web"
	"github.com/flipzero/flipzero/web/play"
)

// engineFlags are the flags of the commands that play a model.
type engineFlags struct {
	model    *string
	playouts *int
	seconds  *float64
	search   *string
	seed     func() uint64
	device   deviceFlag
}

func addEngineFlags(fs *flagSet) engineFlags {
	return engineFlags{
		model:    fs.String("model", "", "model file (from flipzero export) or checkpoint"),
		playouts: fs.Int("playouts", 400, "search playouts per decision"),
		seconds:  fs.Float64("seconds", 0, "search time per decision in seconds, instead of --playouts"),
		search:   fs.String("search", "", "search settings over the play defaults, as in a config's search section: 'cpuct: 2, leaves_per_tree: 1'"),
		seed:     addSeedFlag(fs, "seed of the deals of a game with chance events (the solitaire's hidden tokens)"),
		device:   addDeviceFlag(fs),
	}
}

// engine loads the model into an engine with the strength asked for, on
// the device asked for; say tells a log which device that is, once the
// command has checked the rest of its flags.
func (f engineFlags) engine() (e *engine.Engine, say func(io.Writer), err error) {
	if *f.model == "" {
		return nil, nil, usagef("--model is required")
	}
	if *f.seconds < 0 || math.IsNaN(*f.seconds) || *f.seconds > 24*3600 {
		return nil, nil, usagef("--seconds must be between 0 and a day, got %v", *f.seconds)
	}
	opts := engine.EngineOptions{Playouts: *f.playouts, MoveTime: time.Duration(*f.seconds * float64(time.Second)), Seed: f.seed()}
	if opts.MoveTime == 0 && opts.Playouts < 1 {
		return nil, nil, usagef("--playouts must be at least 1, got %d", opts.Playouts)
	}
	if *f.search != "" {
		if opts.Search, err = loop.ParseSearchSettings(*f.search, mcts.PlayConfig()); err != nil {
			return nil, nil, usageError{fmt.Errorf("--search: %w", err)}
		}
	}
	backend, say, err := f.device.open()
	if err != nil {
		return nil, nil, err
	}
	opts.Backend = backend
	e, err = engine.NewModelEngine(*f.model, nil, opts)
	if err != nil {
		return nil, nil, usageError{err}
	}
	return e, say, nil
}

// sideFlag reads --as: the person's side, the first player's by default.
func sideFlag(g env.Game, name string) (env.Player, error) {
	if name == "" {
		return 0, nil
	}
	p, err := env.ParsePlayer(g, name)
	if err != nil {
		return 0, usageError{fmt.Errorf("--as: %w", err)}
	}
	return p, nil
}

func runPlay(ctx context.Context, args []string, io stdio) error {
	fs := newFlags("play", "play --model FILE [--as SIDE] [--playouts N | --seconds S]\n\n"+
		"A game against the model in the terminal. Type moves in the game's notation,\n"+
		"or: undo (take back your last move), hint (the model's advice), moves (the\n"+
		"legal moves), resign, quit. In a one-player game (reversi-solitaire) you play,\n"+
		"the tokens are dealt from --seed, and bot lets the model play your move.", io.out)
	ef := addEngineFlags(fs)
	as := fs.String("as", "", "your side: black or white (default: the side that moves first)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	e, say, err := ef.engine()
	if err != nil {
		return err
	}
	human, err := sideFlag(e.Game(), *as)
	if err != nil {
		return err
	}
	say(io.err)
	return terminal.Play(ctx, e, human, io.in, io.out)
}

func runGTP(ctx context.Context, args []string, io stdio) error {
	fs := newFlags("gtp", "gtp --model FILE [--playouts N | --seconds S]\n\n"+
		"Plays the model as an engine speaking the Go Text Protocol on standard input\n"+
		"and output, as Othello GUIs and engines use it: moves like F5 and PASS; for\n"+
		"YINSH, moves in flipzero's notation (P E5, M E5 E9, R C4 G4, X K8, PASS), one\n"+
		"decision per genmove. The evaluation of each genmove goes to standard error.", io.out)
	ef := addEngineFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	e, say, err := ef.engine()
	if err != nil {
		return err
	}
	if env.Players(e.Game()) == 1 {
		return usagef("--model: %s is a one-player game, and GTP is a protocol between two players", e.Game().Name())
	}
	say(io.err)
	return gtp.Serve(ctx, gtpController{e}, io.in, io.out, io.err)
}

// gtpController is the engine as the GTP server drives it.
type gtpController struct{ *engine.Engine }

func (c gtpController) GenMove(ctx context.Context) (int, string, error) { return c.Decide(ctx) }

func runServe(ctx context.Context, args []string, io stdio) error {
	fs := newFlags("serve", "serve --model FILE [--run DIR] [--addr 127.0.0.1:8080] [--playouts N | --seconds S]\n"+
		"       serve --run DIR [--addr 127.0.0.1:8080]\n\n"+
		"Serves a web page to play against the model in a browser (one game per\n"+
		"server) and, with --run, the live page of a training run: its curves, the\n"+
		"generation in progress, its matches and its recent self-play games to\n"+
		"replay, following the run while the loop writes it (at /run, or at / without\n"+
		"--model). It listens on the loopback interface unless --addr says otherwise.", io.out)
	ef := addEngineFlags(fs)
	runDir := fs.String("run", "", "a training run's folder to show as a live page")
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on")
	as := fs.String("as", "", "your side in the first game (default: the side that moves first)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *ef.model == "" && *runDir == "" {
		return usagef("--model or --run is required")
	}
	var run *web.Run
	if *runDir != "" {
		r, err := web.NewRun(*runDir, games.Builtin(), loop.Summarizer(games.Builtin()))
		if err != nil {
			return usageError{fmt.Errorf("--run: %w", err)}
		}
		r.Check = loop.RunChecks
		run = r
	}
	var game *web.Game
	var gameName string
	// The model's engine says which device it runs on once the server
	// listens.
	announce := func() {}
	if *ef.model != "" {
		e, say, err := ef.engine()
		if err != nil {
			return err
		}
		announce = func() { say(io.err) }
		human, err := sideFlag(e.Game(), *as)
		if err != nil {
			return err
		}
		// The page says which network it plays: the file's header and
		// size, read again beside the engine's copy.
		c, _, err := engine.LoadModel(*ef.model, nil)
		if err != nil {
			return usageError{err}
		}
		if game, err = web.NewNetworkGame(e, human, play.NetworkOf(c.Network.Fold(), c.Step, c.Created, c.Metadata["generation"])); err != nil {
			return err
		}
		gameName = e.Game().Name()
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return usageError{fmt.Errorf("--addr: %w", err)}
	}
	announce()
	var pages []string
	if game != nil {
		pages = append(pages, fmt.Sprintf("flipzero plays %s at http://%s/", gameName, ln.Addr()))
	}
	if run != nil {
		pages = append(pages, fmt.Sprintf("the run %s is at http://%s/run", *runDir, ln.Addr()))
	}
	fmt.Fprintln(io.out, strings.Join(pages, "; ")+" (Ctrl-C stops)")
	return web.Serve(ctx, ln, web.Handler(game, run))
}
