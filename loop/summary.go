package loop

import (
	"fmt"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/mcts"
	"github.com/flipzero/flipzero/selfplay"
)

// Summary reads a run's config and sums it up for the run's page: the
// game, and the settings a person looks for first, as name and value.
func Summary(raw []byte, games Games) (game string, settings [][2]string, err error) {
	cfg, err := ParseConfig(raw, games)
	if err != nil {
		return "", nil, err
	}
	solo := false
	if g, err := games.ByName(cfg.Game); err == nil {
		solo = env.Players(g) == 1
	}
	sp := cfg.SelfPlay
	arenaText := "off"
	if a := cfg.Arena; a.Games > 0 && solo {
		arenaText = fmt.Sprintf("%d deals played by the new network, the self-play network and %s, %d playouts", a.Games, a.Baseline, a.Playouts)
	} else if a.Games > 0 {
		arenaText = fmt.Sprintf("%d games against the self-play network and %s, %d playouts", a.Games, a.Baseline, a.Playouts)
		if a.PolicyMatch {
			arenaText += fmt.Sprintf("; the policy alone (1 playout) against %s too", a.Baseline)
		}
		if a.Gate > 0 {
			arenaText += fmt.Sprintf(", gate %.2f", a.Gate)
		}
	}
	return cfg.Game, [][2]string{
		{"network", cfg.Network.String()},
		{"self-play", fmt.Sprintf("%d games a generation, %d at once per worker, batches of %d", sp.Games, sp.Concurrent, sp.BatchSize)},
		{"search", searchText(cfg.Search)},
		{"training", fmt.Sprintf("batches of %d, each position used %.1f times", cfg.Train.BatchSize, cfg.Train.ReplayRatio)},
		{"window", fmt.Sprintf("%d to %d positions", cfg.Window.Min, cfg.Window.Max)},
		{"arena", arenaText},
	}, nil
}

// searchText sums up self-play's search: its mode and playouts, and the
// playout cap where some moves are searched less.
func searchText(search selfplay.Search) string {
	mode := "PUCT"
	if search.Mode == mcts.Gumbel {
		mode = "Gumbel"
	}
	if search.FullFraction >= 1 || search.Full == search.Fast {
		return fmt.Sprintf("%s, %d playouts on every move", mode, search.Full)
	}
	return fmt.Sprintf("%s, %d playouts on %.0f%% of moves, %d on the rest", mode, search.Full, 100*search.FullFraction, search.Fast)
}

// Summarizer is Summary over games, in the form the run's page takes.
func Summarizer(games Games) func(config []byte) (string, [][2]string, error) {
	return func(config []byte) (string, [][2]string, error) { return Summary(config, games) }
}
