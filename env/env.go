// Package env defines the contract every game implements: a start position,
// the player to move, legal actions as indices into a fixed action space,
// the step that applies one, the end of the game and its result, notation,
// a tensor encoding from the mover's point of view, and the board's
// symmetries. The search, the network and the training loop see games only
// through these interfaces.
package env

import (
	"fmt"
	"strings"
)

// Player identifies a side: 0 is the player who moves first, 1 the other.
// What each side is called (black, white) is up to the game.
type Player int8

// NoPlayer is the winner of a drawn game.
const NoPlayer Player = -1

// Other returns the opponent of p.
func (p Player) Other() Player { return 1 - p }

// Game describes one game: everything that does not depend on a position.
// A Game is immutable and safe to share between goroutines.
type Game interface {
	// Name is the game's registry name, e.g. "othello".
	Name() string
	// NewState returns the start position.
	NewState() State
	// PlayerName is what the rules call a side: "black" or "white".
	PlayerName(p Player) string
	// ActionSpace is the size of the fixed action space: every action is an
	// index in [0, ActionSpace()).
	ActionSpace() int
	// ParseAction reads an action in the game's notation. It checks only
	// the notation, not whether the action is legal in some position.
	ParseAction(text string) (int, error)
	// FormatAction writes an action in the game's notation.
	FormatAction(action int) string
	// EncodedShape is the shape of State.Encode's output: planes of
	// height × width cells.
	EncodedShape() (planes, height, width int)
	// Symmetries lists the board's symmetries, the identity first.
	Symmetries() []Symmetry
}

// State is a position together with whose decision it is. States are
// mutable: Apply changes the receiver. The search copies states constantly,
// so CopyFrom must be cheap and must not allocate.
type State interface {
	Game() Game
	// ToMove is the player who makes the next decision. The same player may
	// decide several times in a row, and a player may have to pass (the
	// pass is then their only legal action).
	ToMove() Player
	// LegalActions appends the legal actions to buf[:0] in increasing order
	// and returns the result. A buffer of ActionSpace() capacity never
	// grows. A terminal state has no legal actions.
	LegalActions(buf []int) []int
	// Apply plays a legal action. Applying an illegal action leaves the
	// state undefined; check legality with IsLegal or LegalActions first.
	Apply(action int)
	// IsLegal reports whether action may be played now.
	IsLegal(action int) bool
	// Terminal reports whether the game has ended.
	Terminal() bool
	// Winner is the winning player of a terminal state, NoPlayer for a draw.
	Winner() Player
	// Encode writes the position, seen from the player to move, into dst,
	// which must hold planes*height*width values (see Game.EncodedShape).
	Encode(dst []float32)
	// Clone returns an independent copy.
	Clone() State
	// CopyFrom makes the receiver a copy of src, a state of the same game.
	CopyFrom(src State)
	// Transformed returns a copy of the position under Game().Symmetries()[i].
	Transformed(i int) State
	// String draws the position for people.
	String() string
}

// Symmetry is a symmetry of the board, as maps of encoded cells and of
// actions. Both are permutations: an encoding transformed by the symmetry
// has src[c] of every plane moved to cell Cell[c]; action a becomes
// Action[a].
type Symmetry struct {
	Name   string
	Cell   []int
	Action []int
}

// TransformEncoding writes into dst the encoding src transformed by sym;
// planeSize is height*width of the game's encoding.
func (sym Symmetry) TransformEncoding(dst, src []float32, planeSize int) {
	for base := 0; base+planeSize <= len(src); base += planeSize {
		for c, to := range sym.Cell {
			dst[base+to] = src[base+c]
		}
	}
}

// Value is the result of a terminal state for player p: 1 for a win,
// -1 for a loss, 0 for a draw. A one-player game's result is its score
// normalized to [-1, 1] (see NormalizedScore), so that callers need not
// tell the kinds of game apart.
func Value(s State, p Player) float32 {
	if sc, ok := s.(Scorer); ok {
		return NormalizedScore(sc.Score(), sc.MaxScore())
	}
	switch s.Winner() {
	case NoPlayer:
		return 0
	case p:
		return 1
	default:
		return -1
	}
}

// ResultName is the result of a terminal state as the command line writes
// it: the winner's name, or "draw"; for a one-player game "score N".
func ResultName(s State) string {
	if sc, ok := s.(Scorer); ok {
		return fmt.Sprintf("score %g", sc.Score())
	}
	w := s.Winner()
	if w == NoPlayer {
		return "draw"
	}
	return s.Game().PlayerName(w)
}

// ParseLegal parses text as an action and checks that it is legal in s.
func ParseLegal(s State, text string) (int, error) {
	g := s.Game()
	action, err := g.ParseAction(text)
	if err != nil {
		return 0, err
	}
	if s.Terminal() {
		return 0, fmt.Errorf("move %q: the game is over", text)
	}
	if !s.IsLegal(action) {
		return 0, fmt.Errorf("move %q is not legal here", text)
	}
	return action, nil
}

// Play parses a move sequence in the command-line form — moves separated
// by ";", blank for the start position — and plays it from the start.
// The error names the first move that is unparseable or illegal.
func Play(g Game, sequence string) (State, error) {
	s := g.NewState()
	if err := PlayOn(s, sequence); err != nil {
		return nil, err
	}
	return s, nil
}

// PlayOn plays a move sequence (see Play) on s.
func PlayOn(s State, sequence string) error {
	if strings.TrimSpace(sequence) == "" {
		return nil
	}
	for i, text := range strings.Split(sequence, ";") {
		text = strings.TrimSpace(text)
		action, err := ParseLegal(s, text)
		if err != nil {
			return fmt.Errorf("move %d: %w", i+1, err)
		}
		s.Apply(action)
	}
	return nil
}

// ParsePlayer reads a side by its name in the game, or the name's first
// letter, in any case: "black", "B", "white".
func ParsePlayer(g Game, name string) (Player, error) {
	for _, p := range []Player{0, 1} {
		if strings.EqualFold(name, g.PlayerName(p)) || (len(name) == 1 && strings.EqualFold(name, g.PlayerName(p)[:1])) {
			return p, nil
		}
	}
	return 0, fmt.Errorf("unknown side %q: %s plays %s and %s", name, g.Name(), g.PlayerName(0), g.PlayerName(1))
}

// AnyCase returns text in the case the game's notation reads it, trying
// it as written, in lower and in upper case, so that people and engines
// may type moves in either ("F5", "m e5 e9"); text itself when none
// parses, for the parser's error.
func AnyCase(g Game, text string) string {
	for _, t := range []string{text, strings.ToLower(text), strings.ToUpper(text)} {
		if t == "PASS" {
			continue
		}
		if _, err := g.ParseAction(t); err == nil {
			return t
		}
	}
	return text
}
