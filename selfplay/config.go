// Package selfplay turns CPU time into stronger networks: self-play
// workers that run many games at once over one batched evaluator per
// core, the training loop that alternates self-play and training with
// checkpoints that survive a kill, and the arena that compares versions.
package selfplay

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

// Config is a run's configuration, read from a YAML file in configs/.
type Config struct {
	Game     string         `yaml:"game"`
	Network  NetworkConfig  `yaml:"network"`
	Search   SearchConfig   `yaml:"search"`
	SelfPlay SelfPlayConfig `yaml:"selfplay"`
	Train    TrainConfig    `yaml:"train"`
	Window   WindowConfig   `yaml:"window"`
	Arena    ArenaConfig    `yaml:"arena"`
}

// ArenaConfig has the loop measure each new network: a match against the
// network that plays self-play (the previous one, or the best so far when
// gating) and one against a fixed baseline, recorded in the run's
// matches.jsonl and rated. Off unless Games is set: on two cores the
// matches cost about as much as a generation of self-play.
type ArenaConfig struct {
	// Games per match (0: no matches).
	Games int `yaml:"games"`
	// Playouts per move of the networks.
	Playouts int `yaml:"playouts"`
	// Baseline is a player name: random, greedy, mcts:N, ...
	Baseline string `yaml:"baseline"`
	// Gate is the score (draws half) a new network needs against the
	// self-play network to replace it (AlphaGo Zero's 0.55); 0 promotes
	// every new network.
	Gate float64 `yaml:"gate"`
}

// NetworkConfig sizes the residual tower.
type NetworkConfig struct {
	Blocks  int `yaml:"blocks"`
	Filters int `yaml:"filters"`
}

// SearchConfig tunes the PUCT search.
type SearchConfig struct {
	CPuct            float64 `yaml:"cpuct"`
	FPUReduction     float64 `yaml:"fpu_reduction"`
	FPUReductionRoot float64 `yaml:"fpu_reduction_root"`
	// DirichletAlphaTotal is spread over the legal moves: alpha =
	// total / legal moves (KataGo scales it so), e.g. 10.
	DirichletAlphaTotal float64 `yaml:"dirichlet_alpha_total"`
	NoiseWeight         float64 `yaml:"noise_weight"`
	// PlayoutsFull is used for the moves that become training targets,
	// PlayoutsFast for the rest; FullSearchFraction of the moves get a
	// full search (KataGo's playout cap randomization).
	PlayoutsFull       int     `yaml:"playouts_full"`
	PlayoutsFast       int     `yaml:"playouts_fast"`
	FullSearchFraction float64 `yaml:"full_search_fraction"`
	ForcedPlayouts     bool    `yaml:"forced_playouts"`
}

// SelfPlayConfig says how games are played.
type SelfPlayConfig struct {
	GamesPerGeneration int `yaml:"games_per_generation"`
	// ConcurrentGames are in play at once per worker; a worker gathers
	// their leaves into batches of BatchSize. Workers is how many run in
	// parallel (0: one per core).
	ConcurrentGames int `yaml:"concurrent_games"`
	BatchSize       int `yaml:"batch_size"`
	Workers         int `yaml:"workers"`
	// The move-choice temperature starts at Temperature and decays
	// towards FinalTemperature, halving the gap every
	// TemperatureHalfLife plies (KataGo's schedule; 0 picks the most
	// visited move).
	Temperature         float64 `yaml:"temperature"`
	TemperatureHalfLife float64 `yaml:"temperature_half_life"`
	FinalTemperature    float64 `yaml:"final_temperature"`
	// A game is resigned when the mover's root value stays below
	// ResignThreshold for ResignMoves consecutive moves; NoResignFraction
	// of the games never resign, to measure false resignations.
	ResignThreshold  float64 `yaml:"resign_threshold"`
	ResignMoves      int     `yaml:"resign_moves"`
	NoResignFraction float64 `yaml:"no_resign_fraction"`
}

// TrainConfig tunes the optimizer.
type TrainConfig struct {
	BatchSize   int     `yaml:"batch_size"`
	Momentum    float64 `yaml:"momentum"`
	WeightDecay float64 `yaml:"weight_decay"`
	// LearningRate is a schedule: the rate of the last entry whose step
	// has been reached applies.
	LearningRate []LRStep `yaml:"learning_rate"`
	// ReplayRatio is how many times each new sample is used in training
	// on average: steps per generation = new samples × ratio / batch.
	ReplayRatio float64 `yaml:"replay_ratio"`
	// MinSamples is how many samples the window must hold before training
	// starts.
	MinSamples int `yaml:"min_samples"`
}

// LRStep is one entry of the learning-rate schedule.
type LRStep struct {
	Step int     `yaml:"step"`
	Rate float64 `yaml:"rate"`
}

// WindowConfig sizes the replay window (see data.WindowConfig).
type WindowConfig struct {
	Min   int     `yaml:"min"`
	Alpha float64 `yaml:"alpha"`
	Beta  float64 `yaml:"beta"`
	Max   int     `yaml:"max"`
}

// LearningRateAt is the scheduled rate at a training step.
func (t TrainConfig) LearningRateAt(step int) float64 {
	rate := t.LearningRate[0].Rate
	for _, s := range t.LearningRate {
		if step >= s.Step {
			rate = s.Rate
		}
	}
	return rate
}

// LoadConfig reads and checks a config file. Unknown keys and values out
// of range are errors that name the key and the file.
func LoadConfig(path string) (Config, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	cfg, err := ParseConfig(raw)
	if err != nil {
		return Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	return cfg, nil
}

// ParseConfig reads and checks a config.
func ParseConfig(raw []byte) (Config, error) {
	var cfg Config
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		return Config{}, errors.New(cleanYAMLError(err))
	}
	return cfg, cfg.Validate()
}

// cleanYAMLError makes yaml's multi-line errors one line and names the
// key by its YAML name.
func cleanYAMLError(err error) string {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "yaml: unmarshal errors:\n")
	msg = strings.ReplaceAll(msg, "\n", "; ")
	msg = strings.Join(strings.Fields(msg), " ")
	msg = strings.Replace(msg, "in type selfplay.", "in section ", -1)
	return msg
}

// Validate checks that every value is in range, naming the key of the
// first one that is not.
func (c Config) Validate() error {
	type check struct {
		key string
		ok  bool
		why string
	}
	s, p, t, w := c.Search, c.SelfPlay, c.Train, c.Window
	checks := []check{
		{"game", c.Game != "", "is required"},
		{"network.blocks", c.Network.Blocks >= 1 && c.Network.Blocks <= 40, "must be 1..40"},
		{"network.filters", c.Network.Filters >= 1 && c.Network.Filters <= 512, "must be 1..512"},
		{"search.cpuct", s.CPuct > 0 && s.CPuct <= 20, "must be in (0, 20]"},
		{"search.fpu_reduction", s.FPUReduction >= 0 && s.FPUReduction <= 2, "must be in [0, 2]"},
		{"search.fpu_reduction_root", s.FPUReductionRoot >= 0 && s.FPUReductionRoot <= 2, "must be in [0, 2]"},
		{"search.dirichlet_alpha_total", s.DirichletAlphaTotal > 0 && s.DirichletAlphaTotal <= 1000, "must be in (0, 1000]"},
		{"search.noise_weight", s.NoiseWeight >= 0 && s.NoiseWeight < 1, "must be in [0, 1)"},
		{"search.playouts_full", s.PlayoutsFull >= 1 && s.PlayoutsFull <= 1_000_000, "must be 1..1000000"},
		{"search.playouts_fast", s.PlayoutsFast >= 1 && s.PlayoutsFast <= s.PlayoutsFull, "must be 1..playouts_full"},
		{"search.full_search_fraction", s.FullSearchFraction > 0 && s.FullSearchFraction <= 1, "must be in (0, 1]"},
		{"selfplay.games_per_generation", p.GamesPerGeneration >= 1 && p.GamesPerGeneration <= 1_000_000, "must be 1..1000000"},
		{"selfplay.concurrent_games", p.ConcurrentGames >= 1 && p.ConcurrentGames <= 4096, "must be 1..4096"},
		{"selfplay.batch_size", p.BatchSize >= 1 && p.BatchSize <= 1024, "must be 1..1024"},
		{"selfplay.workers", p.Workers >= 0 && p.Workers <= 256, "must be 0..256 (0: one per core)"},
		{"selfplay.temperature", p.Temperature >= 0 && p.Temperature <= 10, "must be in [0, 10]"},
		{"selfplay.temperature_half_life", p.TemperatureHalfLife >= 0 && p.TemperatureHalfLife <= 1000, "must be in [0, 1000] plies"},
		{"selfplay.final_temperature", p.FinalTemperature >= 0 && p.FinalTemperature <= 10, "must be in [0, 10]"},
		{"selfplay.resign_threshold", p.ResignThreshold >= -1 && p.ResignThreshold <= 0, "must be in [-1, 0] (-1: never resign)"},
		{"selfplay.resign_moves", p.ResignMoves >= 0, "must be 0 or more"},
		{"selfplay.no_resign_fraction", p.NoResignFraction >= 0 && p.NoResignFraction <= 1, "must be in [0, 1]"},
		{"train.batch_size", t.BatchSize >= 1 && t.BatchSize <= 4096, "must be 1..4096"},
		{"train.momentum", t.Momentum >= 0 && t.Momentum < 1, "must be in [0, 1)"},
		{"train.weight_decay", t.WeightDecay >= 0 && t.WeightDecay <= 0.1, "must be in [0, 0.1]"},
		{"train.learning_rate", len(t.LearningRate) > 0 && t.LearningRate[0].Step == 0, "must list at least one {step, rate}, the first at step 0"},
		{"train.replay_ratio", t.ReplayRatio > 0 && t.ReplayRatio <= 100, "must be in (0, 100]"},
		{"train.min_samples", t.MinSamples >= 0, "must be 0 or more"},
		{"window.min", w.Min >= 1, "must be 1 or more"},
		{"window.alpha", w.Alpha > 0 && w.Alpha <= 1, "must be in (0, 1]"},
		{"window.beta", w.Beta >= 0 && w.Beta <= 10, "must be in [0, 10]"},
		{"window.max", w.Max >= 0, "must be 0 (none) or more"},
		{"arena.games", c.Arena.Games >= 0 && c.Arena.Games <= 100_000, "must be 0 (off) to 100000"},
		{"arena.playouts", c.Arena.Games == 0 || c.Arena.Playouts >= 1 && c.Arena.Playouts <= 1_000_000, "must be 1..1000000"},
		{"arena.baseline", c.Arena.Games == 0 || validBaseline(c.Arena.Baseline), "must name a player: random, greedy, perfect, mcts:N, alphabeta:D"},
		{"arena.gate", c.Arena.Gate >= 0 && c.Arena.Gate < 1, "must be in [0, 1) (0: no gating)"},
	}
	for i, lr := range t.LearningRate {
		checks = append(checks, check{fmt.Sprintf("train.learning_rate[%d]", i),
			lr.Rate > 0 && lr.Rate <= 10 && lr.Step >= 0 && (i == 0 || lr.Step > t.LearningRate[i-1].Step),
			"needs a rate in (0, 10] and steps in increasing order"})
	}
	for _, ch := range checks {
		if !ch.ok {
			return fmt.Errorf("%s: %v %s", ch.key, valueOf(c, ch.key), ch.why)
		}
	}
	return nil
}

func validBaseline(name string) bool {
	if name == "" || strings.HasPrefix(name, "gtp:") {
		return name != ""
	}
	_, err := ParsePlayer(name, PlayerOptions{})
	return err == nil
}

// valueOf finds the value a dotted YAML key names, for error messages.
func valueOf(c Config, key string) any {
	v := reflect.ValueOf(c)
	for _, part := range strings.Split(key, ".") {
		part, _, _ = strings.Cut(part, "[")
		found := false
		for i := 0; i < v.NumField(); i++ {
			if strings.Split(v.Type().Field(i).Tag.Get("yaml"), ",")[0] == part {
				v, found = v.Field(i), true
				break
			}
		}
		if !found {
			return "?"
		}
	}
	return v.Interface()
}
