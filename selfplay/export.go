package selfplay

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/nn"
)

// Checkpoints lists the generations of a run's checkpoints, oldest first.
func Checkpoints(runDir string) ([]int, error) {
	entries, err := os.ReadDir(filepath.Join(runDir, modelsDir))
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", runDir, err)
	}
	var gens []int
	for _, e := range entries {
		if m := checkpointName.FindStringSubmatch(e.Name()); m != nil {
			n, _ := strconv.Atoi(m[1])
			gens = append(gens, n)
		}
	}
	sort.Ints(gens)
	return gens, nil
}

// Export writes the checkpoint of generation gen of a run (the newest
// when gen is negative) to out as a self-contained model file: the game,
// the architecture, the inference weights with batch norm folded in, and
// the metadata a player wants to see — generation, positions seen in
// training, the date of the checkpoint, and the rating when the arena
// measured one. It returns the metadata written.
func Export(runDir string, gen int, out string) (map[string]string, error) {
	gens, err := Checkpoints(runDir)
	if err != nil {
		return nil, err
	}
	if len(gens) == 0 {
		return nil, fmt.Errorf("run %s has no checkpoints in %s", runDir, modelsDir)
	}
	if gen < 0 {
		gen = gens[len(gens)-1]
	} else if i := sort.SearchInts(gens, gen); i == len(gens) || gens[i] != gen {
		return nil, fmt.Errorf("run %s has no checkpoint of generation %d (it has %d to %d)", runDir, gen, gens[0], gens[len(gens)-1])
	}
	cfg, err := LoadConfig(filepath.Join(runDir, runConfigName))
	if err != nil {
		return nil, err
	}
	g, err := games.ByName(cfg.Game)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", runDir, err)
	}
	c, err := nn.LoadCheckpoint(checkpointPath(runDir, gen), g)
	if err != nil {
		return nil, err
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
	if ms, err := ReadMetrics(filepath.Join(runDir, metricsName)); err == nil {
		for _, m := range ms {
			if m.Generation == gen && m.Rating != nil {
				meta["rating"] = strconv.FormatFloat(*m.Rating, 'f', 0, 64)
			}
		}
	}
	if err := nn.SaveFolded(out, c.Network.Fold(), c.Step, meta); err != nil {
		return nil, err
	}
	return meta, nil
}
