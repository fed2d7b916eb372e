package othello

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/envtest"
)

var allGames = []env.Game{Reversi(), Othello(), Single()}

func TestConformance(t *testing.T) {
	for _, g := range allGames {
		t.Run(g.Name(), func(t *testing.T) {
			envtest.Run(t, g, envtest.Options{Seed: 7})
		})
	}
}

// startPerft is the rules doc's perft from the start, depths 1..11.
var startPerft = []uint64{4, 12, 56, 244, 1396, 8200, 55092, 390216, 3005288, 24571284, 212258800}

func TestPerftStart(t *testing.T) {
	checkStartPerft(t, 1, 9)
}

// TestPerftStartDeep takes about two seconds.
func TestPerftStartDeep(t *testing.T) {
	if testing.Short() {
		t.Skip("perft depths 10 and 11 take seconds; run without -short")
	}
	checkStartPerft(t, 10, 11)
}

func checkStartPerft(t *testing.T, from, to int) {
	for _, g := range []env.Game{Reversi(), Othello()} {
		s := g.NewState().(*State)
		for d := from; d <= to; d++ {
			if got := s.Perft(d); got != startPerft[d-1] {
				t.Errorf("%s perft(%d) = %d, want %d", g.Name(), d, got, startPerft[d-1])
			}
		}
	}
}

// hidePerft wraps a state so that env.Perft cannot see its Perft method
// and walks the tree through LegalActions and Apply.
type hidePerft struct{ env.State }

func (h hidePerft) Clone() env.State            { return hidePerft{h.State.Clone()} }
func (h hidePerft) CopyFrom(src env.State)      { h.State.CopyFrom(src.(hidePerft).State) }
func (h hidePerft) Game() env.Game              { return hideGame{h.State.Game()} }
func (h hidePerft) Transformed(i int) env.State { return hidePerft{h.State.Transformed(i)} }

type hideGame struct{ env.Game }

func (g hideGame) NewState() env.State { return hidePerft{g.Game.NewState()} }

// singlePerft is reversi-single's perft from the start, depths 1..8. The
// test checks it three ways: the engine's Perft (direction masks counted
// at the last ply), the generic walk through LegalActions and Apply, and
// the square-by-square reference engine (to depth 7).
var singlePerft = []uint64{4, 12, 64, 340, 2244, 14688, 114328, 938684}

func TestPerftSingle(t *testing.T) {
	s := Single().NewState().(*State)
	for d := 1; d <= len(singlePerft); d++ {
		want := singlePerft[d-1]
		if got := s.Perft(d); got != want {
			t.Errorf("Perft(%d) = %d, want %d", d, got, want)
		}
		if got := env.Perft(hidePerft{s}, d); got != want {
			t.Errorf("generic walk to depth %d: %d, want %d", d, got, want)
		}
		if d <= 7 {
			if got := refPerft(refStart(true), d); got != want {
				t.Errorf("reference engine to depth %d: %d, want %d", d, got, want)
			}
		}
	}
}

// TestPerftReference checks Perft against the reference engine from
// positions met in random games, where passes and finished games occur.
func TestPerftReference(t *testing.T) {
	for _, g := range allGames {
		for i, p := range envtest.RandomPositions(g, 40, 11) {
			s := p.(*State)
			ref := refFromState(s)
			for d := 1; d <= 4; d++ {
				if got, want := s.Perft(d), refPerft(ref, d); got != want {
					t.Fatalf("%s position %d depth %d: Perft %d, reference %d, in\n%v", g.Name(), i, d, got, want, s)
				}
			}
		}
	}
}

func refFromState(s *State) refBoard {
	b := refBoard{toMove: int8(s.ToMove()) + 1, single: s.variant == variantSingle}
	black, white := s.Boards()
	for c := range b.cells {
		b.cells[c] = int8(black>>c&1) + 2*int8(white>>c&1)
	}
	return b
}

// TestAgainstReference plays random games with both engines side by side,
// comparing legal actions and positions after every move.
func TestAgainstReference(t *testing.T) {
	for _, g := range allGames {
		rng := rand.New(rand.NewPCG(3, 4))
		buf := make([]int, 0, g.ActionSpace())
		for game := 0; game < 300; game++ {
			s := g.NewState().(*State)
			ref := refStart(s.variant == variantSingle)
			for ply := 0; ; ply++ {
				if s.Terminal() != ref.over() {
					t.Fatalf("%s game %d ply %d: terminal %v, reference %v", g.Name(), game, ply, s.Terminal(), ref.over())
				}
				if s.Terminal() {
					break
				}
				moves := ref.moves(ref.toMove)
				var want []int
				for _, m := range moves {
					want = append(want, m.action())
				}
				if len(moves) == 0 {
					want = []int{g.ActionSpace() - 1}
				}
				legal := s.LegalActions(buf)
				if !slices.Equal(legal, want) {
					t.Fatalf("%s game %d ply %d: legal %v, reference %v in\n%v", g.Name(), game, ply, legal, want, s)
				}
				k := rng.IntN(len(legal))
				s.Apply(legal[k])
				if len(moves) == 0 {
					ref.toMove = 3 - ref.toMove
				} else {
					ref.play(moves[k])
				}
				if !ref.sameAs(s) {
					t.Fatalf("%s game %d ply %d: positions differ after %s:\n%v", g.Name(), game, ply, g.FormatAction(legal[k]), s)
				}
			}
		}
	}
}

func TestNotation(t *testing.T) {
	tests := []struct {
		game   env.Game
		text   string
		action int
		ok     bool
	}{
		{Othello(), "a1", 0, true},
		{Othello(), "h1", 7, true},
		{Othello(), "a8", 56, true},
		{Othello(), "h8", 63, true},
		{Othello(), "F5", 4*8 + 5, true},
		{Othello(), "pass", Pass, true},
		{Reversi(), "d3", 2*8 + 3, true},
		{Othello(), "i1", 0, false},
		{Othello(), "a9", 0, false},
		{Othello(), "f5:n", 0, false},
		{Single(), "f5:n", (4*8+5)*8 + dirN, true},
		{Single(), "a1:nw", dirNW, true},
		{Single(), "h8:SE", 63*8 + dirSE, true},
		{Single(), "pass", SinglePass, true},
		{Single(), "f5", 0, false},
		{Single(), "f5:", 0, false},
		{Single(), "f5:up", 0, false},
		{Single(), ":n", 0, false},
	}
	for _, tt := range tests {
		a, err := tt.game.ParseAction(tt.text)
		if (err == nil) != tt.ok {
			t.Errorf("%s %q: error %v, want ok=%v", tt.game.Name(), tt.text, err, tt.ok)
			continue
		}
		if tt.ok && a != tt.action {
			t.Errorf("%s %q = %d, want %d", tt.game.Name(), tt.text, a, tt.action)
		}
		if !tt.ok && !strings.Contains(err.Error(), tt.text) {
			t.Errorf("%s %q: error %q does not name the move", tt.game.Name(), tt.text, err)
		}
	}
}

func TestStartMoves(t *testing.T) {
	tests := []struct {
		game env.Game
		want []string
	}{
		{Othello(), []string{"d3", "c4", "f5", "e6"}},
		{Single(), []string{"d3:s", "c4:e", "f5:w", "e6:n"}},
	}
	for _, tt := range tests {
		s := tt.game.NewState()
		var got []string
		for _, a := range s.LegalActions(nil) {
			got = append(got, tt.game.FormatAction(a))
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s start moves %v, want %v", tt.game.Name(), got, tt.want)
		}
	}
}

// tieGame plays to the end of a game that finishes 32–32 (found by
// random play of the standard rules; the test checks the finish).
func tieGame(t *testing.T) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 6))
	buf := make([]int, 0, Pass+1)
	for game := 0; game < 100000; game++ {
		s := Othello().NewState().(*State)
		var moves []string
		for !s.Terminal() {
			legal := s.LegalActions(buf)
			a := legal[rng.IntN(len(legal))]
			moves = append(moves, Othello().FormatAction(a))
			s.Apply(a)
		}
		if b, w := s.Discs(); b == 32 && w == 32 {
			return strings.Join(moves, ";")
		}
	}
	t.Fatal("no 32-32 game in 100000 random games")
	return ""
}

func TestTieReversiVersusOthello(t *testing.T) {
	moves := tieGame(t)
	tests := []struct {
		game   env.Game
		winner env.Player
		result string
	}{
		{Reversi(), 1, "white"},
		{Othello(), env.NoPlayer, "draw"},
	}
	for _, tt := range tests {
		s, err := env.Play(tt.game, moves)
		if err != nil {
			t.Fatalf("%s: %v", tt.game.Name(), err)
		}
		if !s.Terminal() {
			t.Fatalf("%s: the game %s is not over", tt.game.Name(), moves)
		}
		if b, w := s.(*State).Discs(); b != 32 || w != 32 {
			t.Fatalf("%s: discs %d-%d, want 32-32", tt.game.Name(), b, w)
		}
		if s.Winner() != tt.winner || env.ResultName(s) != tt.result {
			t.Errorf("%s: winner %d (%s), want %d (%s)", tt.game.Name(), s.Winner(), env.ResultName(s), tt.winner, tt.result)
		}
	}
}

// TestReversiOthelloAgree replays random finished games under both rules:
// the winner differs exactly when the game ends 32-32.
func TestReversiOthelloAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 13))
	buf := make([]int, 0, Pass+1)
	ties := 0
	for game := 0; game < 3000; game++ {
		o := Othello().NewState().(*State)
		r := Reversi().NewState().(*State)
		for !o.Terminal() {
			legal := o.LegalActions(buf)
			a := legal[rng.IntN(len(legal))]
			o.Apply(a)
			r.Apply(a)
		}
		if !r.Terminal() {
			t.Fatalf("game %d over under othello but not under reversi", game)
		}
		black, white := o.Discs()
		tie := black == white
		if tie {
			ties++
		}
		if (o.Winner() != r.Winner()) != tie {
			t.Fatalf("game %d, %d-%d: othello winner %d, reversi winner %d", game, black, white, o.Winner(), r.Winner())
		}
	}
	if ties == 0 {
		t.Error("no tie in 3000 random games: the check above never saw the difference")
	}
}

func TestResults(t *testing.T) {
	// White is wiped out after 9 plies (13 discs to 0), the shortest
	// possible game; found by a depth-first search.
	const wipeout = "d3;c3;b3;d2;e1;d6;d7;e3;f4"
	tests := []struct {
		game         env.Game
		moves        string
		over         bool
		winner       env.Player
		black, white int // final WOF score
	}{
		{Othello(), wipeout, true, 0, 64, 0},
		{Reversi(), wipeout, true, 0, 64, 0},
		{Othello(), "f5;d6", false, 0, 0, 0},
	}
	for _, tt := range tests {
		s, err := env.Play(tt.game, tt.moves)
		if err != nil {
			t.Fatalf("%s %s: %v", tt.game.Name(), tt.moves, err)
		}
		st := s.(*State)
		if st.Terminal() != tt.over {
			t.Fatalf("%s %s: terminal %v, want %v", tt.game.Name(), tt.moves, st.Terminal(), tt.over)
		}
		if !tt.over {
			continue
		}
		if st.Winner() != tt.winner {
			t.Errorf("%s %s: winner %d, want %d", tt.game.Name(), tt.moves, st.Winner(), tt.winner)
		}
		if b, w := st.FinalScore(); b != tt.black || w != tt.white {
			t.Errorf("%s %s: final score %d-%d, want %d-%d", tt.game.Name(), tt.moves, b, w, tt.black, tt.white)
		}
	}
}

func TestFinalScore(t *testing.T) {
	tests := []struct {
		black, white         uint64
		wantBlack, wantWhite int
	}{
		{0xFF, 0xFF00, 32, 32},         // 8-8 with 48 empty: shared
		{0xFFFF, 0xFF0000, 16 + 40, 8}, // empties to the winner
		{0x1, 0xFFFF0000, 1, 63},       // empties to White
		{0x00000000FFFFFFFF, 0xFFFFFFFF00000000, 32, 32},
	}
	for _, tt := range tests {
		s := State{own: tt.black, opp: tt.white}
		if b, w := s.FinalScore(); b != tt.wantBlack || w != tt.wantWhite {
			t.Errorf("%x/%x: %d-%d, want %d-%d", tt.black, tt.white, b, w, tt.wantBlack, tt.wantWhite)
		}
	}
}

// TestPass plays into a position where White must pass: the pass is the
// only legal action, and Black then moves again.
func TestPass(t *testing.T) {
	// Found by random play: after these moves White has no move but Black
	// has.
	rng := rand.New(rand.NewPCG(8, 9))
	buf := make([]int, 0, Pass+1)
	found := 0
	for game := 0; game < 2000 && found < 20; game++ {
		s := Othello().NewState().(*State)
		for !s.Terminal() {
			legal := s.LegalActions(buf)
			if s.MoveMask() == 0 {
				found++
				if !slices.Equal(legal, []int{Pass}) || !s.IsLegal(Pass) {
					t.Fatalf("no move: legal %v, want only the pass, in\n%v", legal, s)
				}
				before := s.ToMove()
				s.Apply(Pass)
				if s.ToMove() != before.Other() || s.MoveMask() == 0 {
					t.Fatalf("after a pass the opponent must be to move and able to move:\n%v", s)
				}
				continue
			}
			if s.IsLegal(Pass) {
				t.Fatalf("pass legal with moves available in\n%v", s)
			}
			s.Apply(legal[rng.IntN(len(legal))])
		}
	}
	if found == 0 {
		t.Fatal("no pass met in 2000 random games")
	}
}

func TestSymmetryDirections(t *testing.T) {
	// rot180 turns n into s and e into w; transpose swaps n and w.
	g := Single()
	syms := g.Symmetries()
	byName := map[string]env.Symmetry{}
	for _, s := range syms {
		byName[s.Name] = s
	}
	tests := []struct {
		sym, from, to string
	}{
		{"identity", "f5:n", "f5:n"},
		{"rot180", "a1:se", "h8:nw"},
		{"transpose", "b1:e", "a2:s"},
		{"flip-x", "a1:e", "h1:w"},
		{"flip-y", "a1:s", "a8:n"},
	}
	for _, tt := range tests {
		sym, ok := byName[tt.sym]
		if !ok {
			t.Fatalf("no symmetry %s", tt.sym)
		}
		from, _ := g.ParseAction(tt.from)
		if got := g.FormatAction(sym.Action[from]); got != tt.to {
			t.Errorf("%s of %s = %s, want %s", tt.sym, tt.from, got, tt.to)
		}
	}
}

func TestString(t *testing.T) {
	s := Othello().NewState()
	want := "  a b c d e f g h\n" +
		"1 . . . . . . . .\n" +
		"2 . . . . . . . .\n" +
		"3 . . . . . . . .\n" +
		"4 . . . O X . . .\n" +
		"5 . . . X O . . .\n" +
		"6 . . . . . . . .\n" +
		"7 . . . . . . . .\n" +
		"8 . . . . . . . .\n" +
		"black to move\n"
	if got := s.String(); got != want {
		t.Errorf("start:\n%s\nwant\n%s", got, want)
	}
}

func TestNoAllocs(t *testing.T) {
	for _, g := range allGames {
		positions := envtest.RandomPositions(g, 50, 1)
		buf := make([]int, 0, g.ActionSpace())
		dst := make([]float32, planes*Squares)
		var st State
		allocs := testing.AllocsPerRun(20, func() {
			for _, p := range positions {
				s := p.(*State)
				st = *s
				for _, a := range st.LegalActions(buf) {
					c := st
					c.Apply(a)
				}
				st.Encode(dst)
				_ = st.Terminal()
				_ = st.Perft(2)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per run, want 0", g.Name(), allocs)
		}
	}
}

// The same discs seen from the mover's side, once with Black and once with
// White to move: under the tie-to-White rules the two are worth different
// amounts, so the encodings must differ; under othello's they are the same
// position for the network.
func TestEncodingSaysWhoMoves(t *testing.T) {
	start := NewState(Game{variantReversi})
	mover, other := start.own, start.opp
	for _, g := range allGames {
		v := g.(Game).variant
		black := State{own: mover, opp: other, toMove: 0, variant: v}
		white := State{own: mover, opp: other, toMove: 1, variant: v}
		p, h, w := g.EncodedShape()
		size := p * h * w
		eb, ew := make([]float32, size), make([]float32, size)
		black.Encode(eb)
		white.Encode(ew)
		if !slices.Equal(eb[:4*Squares], ew[:4*Squares]) {
			t.Fatalf("%s: the board planes differ with the same discs from the mover's side", g.Name())
		}
		differs := !slices.Equal(eb, ew)
		if wantDiffer := g.Name() != "othello"; differs != wantDiffer {
			t.Errorf("%s: encodings with Black and White to move differ: %v, want %v", g.Name(), differs, wantDiffer)
		}
		if !differs {
			continue
		}
		if p != 5 {
			t.Fatalf("%s: %d planes, want 5", g.Name(), p)
		}
		for c := 0; c < Squares; c++ {
			if eb[4*Squares+c] != 0 || ew[4*Squares+c] != 1 {
				t.Fatalf("%s: side-to-move plane at cell %d is %v (Black to move) and %v (White), want 0 and 1",
					g.Name(), c, eb[4*Squares+c], ew[4*Squares+c])
			}
		}
	}
}

// In play the side-to-move plane follows ToMove, move after move.
func TestSideToMovePlaneFollowsPlay(t *testing.T) {
	g := Reversi()
	s, err := env.Play(g, "f5;d6")
	if err != nil {
		t.Fatal(err)
	}
	p, h, w := g.EncodedShape()
	enc := make([]float32, p*h*w)
	for ply := 0; ply < 6 && !s.Terminal(); ply++ {
		s.Encode(enc)
		want := float32(s.ToMove())
		for c := 4 * Squares; c < 5*Squares; c++ {
			if enc[c] != want {
				t.Fatalf("ply %d, %s to move: plane 4 holds %v, want %v", ply, g.PlayerName(s.ToMove()), enc[c], want)
			}
		}
		legal := s.LegalActions(nil)
		s.Apply(legal[0])
	}
}
