package engine

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/othello"
	"github.com/flipzero/flipzero/env/tictactoe"
	"github.com/flipzero/flipzero/mcts"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/nn/cpu"
)

func rolloutEngine(t *testing.T, opts EngineOptions) *Engine {
	t.Helper()
	eval, err := mcts.NewRollout(1, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	opts.Search = mcts.RolloutConfig()
	opts.Search.DirichletWeight = 0
	e, err := NewEngine(tictactoe.Game{}, eval, opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestEngineFindsTheWinAndBlocks(t *testing.T) {
	tests := []struct {
		moves, want string
		opts        EngineOptions
	}{
		{"a1;b1;a2;b2", "a3", EngineOptions{Playouts: 800}},
		{"a1;b2;a2", "a3", EngineOptions{Playouts: 2000}},
		{"a1;b1;a2;b2", "a3", EngineOptions{MoveTime: 100 * time.Millisecond}},
	}
	for _, tt := range tests {
		e := rolloutEngine(t, tt.opts)
		for _, m := range strings.Split(tt.moves, ";") {
			if _, err := e.PlayMove(m); err != nil {
				t.Fatal(err)
			}
		}
		mover := e.State().ToMove()
		a, err := e.GenMove(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if a.Move != tt.want || a.Mover != mover {
			t.Errorf("after %s: played %s by player %d, want %s by %d", tt.moves, a.Move, a.Mover, tt.want, mover)
		}
		if tt.opts.Playouts > 0 && a.Playouts < tt.opts.Playouts {
			t.Errorf("after %s: %d playouts, want at least %d", tt.moves, a.Playouts, tt.opts.Playouts)
		}
		if a.Playouts == 0 || len(a.Candidates) == 0 || a.Candidates[0].Move != a.Move {
			t.Errorf("after %s: %d playouts, candidates %+v", tt.moves, a.Playouts, a.Candidates)
		}
		if len(e.History()) != len(strings.Split(tt.moves, ";"))+1 || e.History()[len(e.History())-1] != a.Best {
			t.Errorf("after %s: history %v does not end with the engine's move", tt.moves, e.History())
		}
		if tt.want == "a3" && strings.Count(tt.moves, ";") == 3 && (!e.State().Terminal() || a.Value < 0.9) {
			t.Errorf("after %s: the winning move's value is %.2f, the game over: %v", tt.moves, a.Value, e.State().Terminal())
		}
	}
}

func TestEngineUndoAndErrors(t *testing.T) {
	e := rolloutEngine(t, EngineOptions{Playouts: 50})
	for _, m := range []string{"b2", "a1"} {
		if _, err := e.PlayMove(m); err != nil {
			t.Fatal(err)
		}
	}
	before := e.State().String()
	if _, err := e.GenMove(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ok, err := e.Undo(); !ok || err != nil {
		t.Fatalf("undo: %v %v", ok, err)
	}
	if e.State().String() != before || len(e.History()) != 2 {
		t.Errorf("after undo:\n%s\nwant\n%s", e.State(), before)
	}
	for _, bad := range []string{"b2", "z9", ""} {
		if _, err := e.PlayMove(bad); err == nil {
			t.Errorf("move %q accepted", bad)
		}
	}
	if err := e.Play(-3); err == nil {
		t.Error("action -3 accepted")
	}
	if len(e.History()) != 2 || e.State().String() != before {
		t.Error("refused moves changed the game")
	}
	if err := e.NewGame(); err != nil {
		t.Fatal(err)
	}
	if ok, _ := e.Undo(); ok || len(e.History()) != 0 {
		t.Error("undo at the start did something")
	}
	for _, m := range []string{"a1", "b1", "a2", "b2", "a3"} {
		e.PlayMove(m)
	}
	if _, err := e.GenMove(context.Background()); err == nil {
		t.Error("genmove in a finished game")
	}
	if _, err := e.PlayMove("c3"); err == nil {
		t.Error("a move in a finished game")
	}
	if _, err := NewEngine(tictactoe.Game{}, mcts.Uniform{}, EngineOptions{}); err == nil {
		t.Error("an engine without playouts or time")
	}
}

// TestLoadModel loads model files of two games by their header, and
// refuses what is not one.
func TestLoadModel(t *testing.T) {
	dir := t.TempDir()
	for _, g := range []env.Game{tictactoe.Game{}, othello.Othello()} {
		net, err := nn.New(g, nn.Config{Blocks: 1, Filters: 4, PolicyFilters: 1, ValueFilters: 1, ValueHidden: 4}, 1)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, g.Name()+".fznet")
		if err := nn.SaveFolded(path, net.Fold(), 5, nil); err != nil {
			t.Fatal(err)
		}
		c, lg, err := LoadModel(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if lg.Name() != g.Name() || c.Step != 5 {
			t.Errorf("%s: loaded game %s step %d", g.Name(), lg.Name(), c.Step)
		}
		e, err := NewModelEngine(path, nil, EngineOptions{Backend: cpu.Backend(), Playouts: 8})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.GenMove(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	junk := filepath.Join(dir, "junk")
	os.WriteFile(junk, []byte("not a model"), 0o644)
	for _, path := range []string{junk, filepath.Join(dir, "missing")} {
		if _, _, err := LoadModel(path, nil); err == nil || !strings.Contains(err.Error(), filepath.Base(path)) {
			t.Errorf("%s: error %v, want one naming the file", path, err)
		}
	}
}

// BenchmarkEngineGenMove measures a decision of the engine people play
// against: 64 playouts of an Othello network (the default architecture,
// untrained) from the start position, the tree started afresh each time.
func BenchmarkEngineGenMove(b *testing.B) {
	g := othello.Othello()
	net, err := nn.New(g, nn.DefaultConfig(g), 1)
	if err != nil {
		b.Fatal(err)
	}
	eval, err := nn.NewEvaluator(cpu.Backend(), net.Fold(), mcts.DefaultConfig().LeavesPerTree)
	if err != nil {
		b.Fatal(err)
	}
	e, err := NewEngine(g, eval, EngineOptions{Playouts: 64})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.GenMove(ctx); err != nil {
			b.Fatal(err)
		}
		e.Undo()
	}
	b.ReportMetric(float64(b.N*64)/b.Elapsed().Seconds(), "playouts/s")
}

// The engine's default search proves what it can and says so: with an
// evaluator that sees nothing, black still plays the win at a3 and calls
// it proven.
func TestEngineSaysProvenWin(t *testing.T) {
	e, err := NewEngine(tictactoe.Game{}, mcts.Uniform{}, EngineOptions{Playouts: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"a1", "b1", "a2", "b2"} {
		if _, err := e.PlayMove(m); err != nil {
			t.Fatal(err)
		}
	}
	a, err := e.GenMove(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if a.Move != "a3" || a.Proof != mcts.ProvenWin {
		t.Errorf("played %s, proof %v; want a3, a proven win", a.Move, a.Proof)
	}
	if s := a.Summary(tictactoe.Game{}); !strings.HasPrefix(s, "a proven win for black") {
		t.Errorf("summary %q, want it to say a proven win for black", s)
	}
}

// TestSetStrength: a new strength applies from the next search on, and
// one out of range is refused with the old kept.
func TestSetStrength(t *testing.T) {
	e := rolloutEngine(t, EngineOptions{Playouts: 50})
	tests := []struct {
		playouts int
		moveTime time.Duration
		ok       bool
	}{
		{120, 0, true},
		{0, 0, false},
		{-5, 0, false},
		{0, -time.Second, false},
		{0, 30 * time.Millisecond, true},
	}
	for _, tt := range tests {
		before := e.Options()
		err := e.SetStrength(tt.playouts, tt.moveTime)
		if (err == nil) != tt.ok {
			t.Fatalf("SetStrength(%d, %v): error %v, want ok %v", tt.playouts, tt.moveTime, err, tt.ok)
		}
		if !tt.ok {
			if got := e.Options(); got.Playouts != before.Playouts || got.MoveTime != before.MoveTime {
				t.Errorf("a refused strength changed it: %+v → %+v", before, got)
			}
			continue
		}
		a, err := e.Analyze(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if tt.moveTime == 0 && a.Playouts != tt.playouts {
			t.Errorf("after SetStrength(%d playouts) the search ran %d", tt.playouts, a.Playouts)
		}
		if tt.moveTime > 0 && a.Elapsed < tt.moveTime {
			t.Errorf("after SetStrength(%v) the search took %v", tt.moveTime, a.Elapsed)
		}
		if err := e.tree.Reset(e.State()); err != nil {
			t.Fatal(err)
		}
	}
}
