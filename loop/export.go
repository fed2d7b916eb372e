package loop

import (
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/runfolder"
)

// Model is a generation of a run as a model to play with or to write in
// another format: the inference network and what a player wants to know
// of it.
type Model struct {
	Network *nn.Folded
	Step    int64
	// Metadata: generation, the date of the checkpoint, samples_total
	// (positions seen in training) and rating when the arena measured one.
	Metadata map[string]string
}

// LoadModel reads generation gen of a run (the newest when gen is
// negative), resolving its game in games (nil: the built-in games).
func LoadModel(run runfolder.Folder, gen int, games Games) (Model, error) {
	opts := LoopOptions{Games: games}
	opts.defaults()
	gens, err := run.Generations()
	if err != nil {
		return Model{}, err
	}
	if len(gens) == 0 {
		return Model{}, fmt.Errorf("run %s has no checkpoints in %s", run, run.Models())
	}
	if gen < 0 {
		gen = gens[len(gens)-1]
	} else if i := sort.SearchInts(gens, gen); i == len(gens) || gens[i] != gen {
		return Model{}, fmt.Errorf("run %s has no checkpoint of generation %d (it has %d to %d)", run, gen, gens[0], gens[len(gens)-1])
	}
	cfg, err := LoadConfig(run.Config(), opts.Games)
	if err != nil {
		return Model{}, err
	}
	g, err := opts.Games.ByName(cfg.Game)
	if err != nil {
		return Model{}, fmt.Errorf("run %s: %w", run, err)
	}
	c, err := nn.LoadCheckpoint(run.Checkpoint(gen), g)
	if err != nil {
		return Model{}, err
	}
	meta := map[string]string{
		"generation": strconv.Itoa(gen),
		"trained":    c.Created.UTC().Format(time.RFC3339),
	}
	if s, ok := c.Metadata["samples_total"]; ok {
		meta["samples_total"] = s
	} else if gen == 0 {
		meta["samples_total"] = "0"
	}
	if ms, err := ReadMetrics(run.Metrics()); err == nil {
		for _, m := range ms {
			if m.Generation == gen && m.Rating != nil {
				meta["rating"] = strconv.FormatFloat(*m.Rating, 'f', 0, 64)
			}
		}
	}
	return Model{Network: c.Network.Fold(), Step: c.Step, Metadata: meta}, nil
}

// Export writes generation gen of a run (the newest when gen is negative)
// to out as a self-contained model file: the game, the architecture, the
// inference weights with batch norm folded in, and Model's metadata. It
// returns the metadata written.
func Export(run runfolder.Folder, gen int, out string, games Games) (map[string]string, error) {
	m, err := LoadModel(run, gen, games)
	if err != nil {
		return nil, err
	}
	if err := nn.SaveFolded(out, m.Network, m.Step, m.Metadata); err != nil {
		return nil, err
	}
	return m.Metadata, nil
}
