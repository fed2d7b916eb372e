package nn

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/flipzero/flipzero/env/tictactoe"
)

func TestMoveToward(t *testing.T) {
	g := tictactoe.Game{}
	src, err := New(g, tinyConfig, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, share := range []float64{0, 0.25, 1} {
		dst, err := New(g, tinyConfig, 2)
		if err != nil {
			t.Fatal(err)
		}
		before := dst.Clone()
		if err := dst.MoveToward(src, share); err != nil {
			t.Fatal(err)
		}
		from, was := src.arrays(), before.arrays()
		for i, a := range dst.arrays() {
			for j, v := range a {
				want := was[i][j] + float32(share)*(from[i][j]-was[i][j])
				if math.Abs(float64(v-want)) > 1e-6 {
					t.Fatalf("share %v: array %d value %d is %v, want %v", share, i, j, v, want)
				}
			}
		}
	}
	dst, _ := New(g, tinyConfig, 2)
	if err := dst.MoveToward(src, 1.5); err == nil {
		t.Error("a share of 1.5 was accepted")
	}
	wider := tinyConfig
	wider.Filters++
	other, _ := New(g, wider, 1)
	if err := dst.MoveToward(other, 0.5); !errors.Is(err, ErrWrongArch) {
		t.Errorf("toward another architecture: error %v, want %v", err, ErrWrongArch)
	}
}

func TestCloneSharesNothing(t *testing.T) {
	net, err := New(tictactoe.Game{}, tinyConfig, 1)
	if err != nil {
		t.Fatal(err)
	}
	c := net.Clone()
	orig := net.arrays()
	for i, a := range c.arrays() {
		if maxAbsDiff(a, orig[i]) != 0 {
			t.Fatalf("array %d differs in the clone", i)
		}
		a[0]++
		if a[0] == orig[i][0] {
			t.Fatalf("array %d is shared with the clone", i)
		}
	}
}

func TestAverageShare(t *testing.T) {
	tests := []struct {
		steps    int
		halfLife float64
		want     float64
	}{
		{0, 100, 0},
		{100, 100, 0.5},
		{200, 100, 0.75},
		{30, 60, 1 - math.Sqrt(0.5)},
	}
	for _, tc := range tests {
		got, err := AverageShare(tc.steps, tc.halfLife)
		if err != nil || math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("AverageShare(%d, %v) = %v, %v; want %v", tc.steps, tc.halfLife, got, err, tc.want)
		}
	}
	for _, hl := range []float64{0, -1, math.Inf(1), math.NaN()} {
		if _, err := AverageShare(10, hl); err == nil {
			t.Errorf("half-life %v accepted", hl)
		}
	}
}

// TestAveragedCheckpointRoundTrip: the average comes back as the
// network that plays, the trained weights and momentum as the trainer's,
// in a version 3 file; a checkpoint without an average stays version 2.
func TestAveragedCheckpointRoundTrip(t *testing.T) {
	tr := trainedTicTacToe(t)
	average, err := New(tictactoe.Game{}, tinyConfig, 9)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "averaged.fznet")
	if err := SaveAveragedCheckpoint(path, tr, average, map[string]string{"generation": "4"}); err != nil {
		t.Fatal(err)
	}
	c, err := LoadCheckpointAs(path, tictactoe.Game{}, tinyConfig)
	if err != nil {
		t.Fatal(err)
	}
	if c.Training == nil || c.Training.Network == c.Network || c.Step != tr.Steps() || c.Metadata["generation"] != "4" {
		t.Fatalf("training state %v (own network: %v), step %d, metadata %v", c.Training != nil, c.Training != nil && c.Training.Network != c.Network, c.Step, c.Metadata)
	}
	same := func(what string, got, want [][]float32) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d arrays, want %d", what, len(got), len(want))
		}
		for i := range want {
			if maxAbsDiff(got[i], want[i]) != 0 {
				t.Fatalf("%s: array %d differs", what, i)
			}
		}
	}
	same("the network (the average)", c.Network.arrays(), average.arrays())
	same("the trained weights", c.Training.Network.arrays(), tr.s.Network.arrays())
	same("the momentum", c.Training.Velocity, tr.s.Velocity)

	info, err := ReadInfo(path)
	if err != nil || info.Version != 3 || !info.Averaged || !info.Optimizer {
		t.Errorf("info %+v, %v: want version 3, averaged, with optimizer", info, err)
	}
	plain := filepath.Join(dir, "plain.fznet")
	if err := SaveCheckpoint(plain, tr, nil); err != nil {
		t.Fatal(err)
	}
	if info, err := ReadInfo(plain); err != nil || info.Version != 2 || info.Averaged {
		t.Errorf("a checkpoint without an average: info %+v, %v; want version 2", info, err)
	}

	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.fznet")
	if err := os.WriteFile(bad, good[:len(good)-200], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCheckpoint(bad, tictactoe.Game{}); !errors.Is(err, ErrTruncated) {
		t.Errorf("cut short: error %v, want %v", err, ErrTruncated)
	}
	wider := tinyConfig
	wider.Filters++
	other, _ := New(tictactoe.Game{}, wider, 1)
	if err := SaveAveragedCheckpoint(filepath.Join(dir, "mixed.fznet"), tr, other, nil); !errors.Is(err, ErrWrongArch) {
		t.Errorf("an average of another architecture: error %v, want %v", err, ErrWrongArch)
	}
}
