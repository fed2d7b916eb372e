package nn

import (
	"crypto/sha256"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/flipzero/flipzero/env/tictactoe"
	"github.com/flipzero/flipzero/internal/memtest"
)

// FuzzLoadCheckpoint loads files of arbitrary bytes with a valid checksum
// after them, as a buggy or hostile writer's would have, so that every
// check past the checksum is reached: the header, the architecture, the
// sizes, the arrays. It must not panic, must allocate no more than the
// file's size justifies, must refuse with one of the package's errors,
// and a file it accepts holds only finite values and saves and loads back
// to the same network. Every input new to the coverage is minimized by
// loading it thousands of times, a minute each by default: fuzz with
// -fuzzminimizetime 0s to spend that minute on new inputs instead.
func FuzzLoadCheckpoint(f *testing.F) {
	tr := trainedTicTacToe(f)
	dir := f.TempDir()
	saves := []func(string) error{
		func(p string) error { return SaveCheckpoint(p, tr, map[string]string{"generation": "3"}) },
		func(p string) error { return SaveModel(p, tr.Network(), 3, nil) },
		func(p string) error { return SaveAveragedCheckpoint(p, tr, tr.Network().Clone(), nil) },
		func(p string) error { return SaveFolded(p, tr.Network().Fold(), 3, nil) },
	}
	for _, save := range saves {
		p := filepath.Join(dir, "seed.fznet")
		if err := save(p); err != nil {
			f.Fatal(err)
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw[:len(raw)-checksumLen])
	}
	fuzzed, saved := filepath.Join(dir, "fuzzed.fznet"), filepath.Join(dir, "saved.fznet")
	f.Fuzz(func(t *testing.T, body []byte) {
		sum := sha256.Sum256(body)
		if err := os.WriteFile(fuzzed, append(body, sum[:]...), 0o644); err != nil {
			t.Fatal(err)
		}
		var c *Checkpoint
		var err error
		used := memtest.Allocated(func() { c, err = LoadCheckpoint(fuzzed, tictactoe.Game{}) })
		// The arrays are the file's floats, held once or twice (a folded
		// model unfolds into a second set); the rest is small.
		if used > 4<<20+8*uint64(len(body)) {
			t.Fatalf("loading %d bytes allocated %d KiB", len(body)+checksumLen, used>>10)
		}
		if err != nil {
			known := []error{ErrNotNetwork, ErrVersion, ErrTruncated, ErrCorrupt, ErrWrongGame, ErrWrongArch, ErrWrongEncoding}
			if c != nil || !isOneOf(err, known) {
				t.Fatalf("error %v (checkpoint %v), want one of the package's errors and nothing", err, c != nil)
			}
			return
		}
		arrays := c.Network.arrays()
		if c.Training != nil {
			arrays = append(arrays, c.Training.Velocity...)
		}
		for k, a := range arrays {
			for i, v := range a {
				if v-v != 0 {
					t.Fatalf("accepted a file with value %d of array %d %v", i, k, v)
				}
			}
		}
		if err := SaveModel(saved, c.Network, c.Step, c.Metadata); err != nil {
			t.Fatalf("an accepted network does not save: %v", err)
		}
		back, err := LoadCheckpoint(saved, tictactoe.Game{})
		if err != nil {
			t.Fatalf("an accepted network saved does not load: %v", err)
		}
		for k, a := range c.Network.arrays() {
			b := back.Network.arrays()[k]
			for i := range a {
				if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
					t.Fatalf("value %d of array %d: %v saved, %v loaded", i, k, a[i], b[i])
				}
			}
		}
	})
}

func isOneOf(err error, targets []error) bool {
	for _, target := range targets {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}
