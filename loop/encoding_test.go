package loop

import (
	"errors"
	"os"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/env/othello"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/nn/cpu"
	"github.com/flipzero/flipzero/runfolder"
)

// oldReversi is reversi as encoded before its side-to-move plane.
type oldReversi struct{ env.Game }

func (oldReversi) EncodedShape() (int, int, int) { return 4, 8, 8 }

// A run whose checkpoints predate the game's encoding is refused, not
// restarted from scratch over its own files.
func TestResumeRefusesAnOlderEncoding(t *testing.T) {
	cfg, err := LoadConfig("../configs/reversi.yaml", games.Builtin())
	if err != nil {
		t.Fatal(err)
	}
	// The wrapper hides reversi's policy map, so the old network takes
	// the dense policy head.
	cfg.Network.Blocks, cfg.Network.Filters, cfg.Network.PolicyHead = 1, 8, "dense"
	old := oldReversi{othello.Reversi()}
	net, err := nn.New(old, cfg.Network, 1)
	if err != nil {
		t.Fatal(err)
	}
	trainer, err := cpu.NewTrainer(net, nn.DefaultTrainConfig())
	if err != nil {
		t.Fatal(err)
	}
	run := runfolder.Folder(t.TempDir())
	if err := run.Create(); err != nil {
		t.Fatal(err)
	}
	path := run.Checkpoint(3)
	if err := nn.SaveCheckpoint(path, trainer, nil); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, err = loadNewestCheckpoint(run, othello.Reversi(), cfg, LoopOptions{Backend: cpu.Backend(), Seed: 1}, t.Logf)
	if !errors.Is(err, nn.ErrWrongEncoding) {
		t.Fatalf("resuming: error %v, want %v", err, nn.ErrWrongEncoding)
	}
	if _, err := os.Stat(run.Checkpoint(0)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a new generation 0 was written beside the old run's checkpoints")
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("the old checkpoint was changed")
	}
}
