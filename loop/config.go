package loop

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/flipzero/flipzero/data"
	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/mcts"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/player"
	"github.com/flipzero/flipzero/selfplay"
)

// Config is a run's configuration, read from a YAML file (configs/ has
// one per game). Each section is the settings type of the module that
// uses it, documented there with its defaults and the reasons for them;
// a key a file leaves out keeps its default.
type Config struct {
	// Game is the registry name of the game to learn (required).
	Game string `yaml:"game"`
	// Network is the architecture (nn.Config; defaults by the board's
	// size: nn.DefaultConfig).
	Network nn.Config `yaml:"network"`
	// Search is each self-play move's search (selfplay.Search: the
	// mcts.Config constants and the playout cap).
	Search selfplay.Search `yaml:"search"`
	// SelfPlay is how games are played (selfplay.Settings).
	SelfPlay selfplay.Settings `yaml:"selfplay"`
	// Train is the optimizer and how much it trains (TrainConfig).
	Train TrainConfig `yaml:"train"`
	// Window sizes the replay window (data.WindowConfig).
	Window data.WindowConfig `yaml:"window"`
	// Arena measures each new network (ArenaConfig; off by default).
	Arena ArenaConfig `yaml:"arena"`
	// Eval measures the network on held-out game records (EvalConfig;
	// off by default).
	Eval EvalConfig `yaml:"eval"`
	// Start pretrains a new run's generation 0 on game records before
	// its self-play (StartConfig; off by default).
	Start StartConfig `yaml:"start"`
}

// TrainConfig is the optimizer (nn.TrainConfig: momentum, weight decay,
// batch-norm momentum) and how much the loop trains.
type TrainConfig struct {
	nn.TrainConfig `yaml:",inline"`
	// BatchSize is the training batch (default 128: large enough for
	// batch norm's statistics, small enough for two cores).
	BatchSize int `yaml:"batch_size"`
	// LearningRate is a schedule: the rate of the last entry reached
	// applies (default 0.02, then 0.006 and 0.002). Its entries are
	// training steps or minutes of the run's wall time (resumes count
	// from where the run stopped): minutes put the drops at the same
	// point of an hour on a machine that makes 900 steps in it and on one
	// that makes 2,300, where steps put them where the data is.
	LearningRate []LRStep `yaml:"learning_rate"`
	// ScheduleMinutes, above 0, is the length of run that a schedule by
	// minutes is written for: a run given another time limit (--minutes)
	// has every minute of it scaled to its own, so that its drops come at
	// the same point of its time (a two hours' schedule at 60 and 104
	// drops at 360 and 624 in twelve hours, at 15 and 26 in half an
	// hour). A run without a time limit keeps the minutes as written.
	// Default 0: minutes as written whatever the limit.
	ScheduleMinutes float64 `yaml:"schedule_minutes"`
	// ReplayRatio is how many times each new sample is used in training
	// on average: steps per generation = new samples × ratio / batch
	// (default 4: KataGo's order, which keeps the network from
	// overfitting a small window).
	ReplayRatio float64 `yaml:"replay_ratio"`
	// MinSamples is how many samples the window must hold before training
	// starts (default 2,000: a first batch from more than one game).
	MinSamples int `yaml:"min_samples"`
	// AverageHalfLife, above 0, makes the network that plays (self-play,
	// the arena, each generation's checkpoint and what is exported from
	// it) an exponential moving average of the trained weights with this
	// half-life in training steps, updated after each generation's
	// training, as KataGo and lc0 average theirs; training goes on from
	// the trained weights. Default 0: the newest weights play.
	AverageHalfLife float64 `yaml:"average_half_life"`
}

// LRStep is one entry of the learning-rate schedule: a rate from a
// training step or from a minute of the run on. A schedule gives every
// entry a step or every entry a minute.
type LRStep struct {
	Step   int     `yaml:"step"`
	Minute float64 `yaml:"minute"`
	Rate   float64 `yaml:"rate"`
}

// ArenaConfig has the loop measure each new network: a match against the
// network that plays self-play (the previous one, or the best so far when
// gating) and one against a fixed baseline, recorded in the run's match
// log and rated. Off unless Games is set: on two cores the matches cost
// about as much as a generation of self-play.
type ArenaConfig struct {
	// Games per match (default 0: no matches).
	Games int `yaml:"games"`
	// Playouts per move of the networks (default 100).
	Playouts int `yaml:"playouts"`
	// Baseline is a player name: random, greedy, mcts:N, ... (default
	// greedy).
	Baseline string `yaml:"baseline"`
	// Gate is the score (draws half) a new network needs against the
	// self-play network to replace it (AlphaGo Zero's 0.55); default 0
	// promotes every new network.
	Gate float64 `yaml:"gate"`
	// PolicyMatch has the new network's policy alone (one playout: the
	// move its prior rates best, nothing searched) play the baseline too,
	// a third match: what the network itself has learned, which a search
	// can hide. In tic-tac-toe 32 playouts of an untrained network already
	// draw every game against perfect play; its policy loses. Two-player
	// games; default off.
	PolicyMatch bool `yaml:"policy_match"`
}

// DefaultConfig is the configuration of a run of game g that sets nothing
// but the game.
func DefaultConfig(g env.Game) Config {
	return Config{
		Game:     g.Name(),
		Network:  nn.DefaultConfig(g),
		Search:   selfplay.DefaultSearch(),
		SelfPlay: selfplay.DefaultSettings(),
		Train: TrainConfig{
			TrainConfig:  nn.DefaultTrainConfig(),
			BatchSize:    128,
			LearningRate: []LRStep{{Rate: 0.02}, {Step: 20000, Rate: 0.006}, {Step: 60000, Rate: 0.002}},
			ReplayRatio:  4,
			MinSamples:   2000,
		},
		Window: data.WindowConfig{Min: 50000, Alpha: 0.75, Beta: 0.4, Max: 500000},
		Arena:  ArenaConfig{Playouts: 100, Baseline: "greedy"},
		Eval:   DefaultEvalConfig(),
		Start:  DefaultStartConfig(),
	}
}

// LearningRateAt is the scheduled rate at a training step, minutes into
// the run.
func (t TrainConfig) LearningRateAt(step int, minutes float64) float64 {
	rate := t.LearningRate[0].Rate
	for _, s := range t.LearningRate {
		if step >= s.Step && minutes >= s.Minute {
			rate = s.Rate
		}
	}
	return rate
}

// FittedTo is the config with its schedule's minutes scaled from
// ScheduleMinutes to a run of the given length (see ScheduleMinutes),
// and a line saying so for the run's log ("" where nothing was scaled).
// The schedule is copied: t's own is left as it was.
func (t TrainConfig) FittedTo(limit time.Duration) (TrainConfig, string) {
	if t.ScheduleMinutes <= 0 || limit <= 0 || !byMinute(t.LearningRate) {
		return t, ""
	}
	scale := limit.Minutes() / t.ScheduleMinutes
	lrs := make([]LRStep, len(t.LearningRate))
	var b strings.Builder
	for i, s := range t.LearningRate {
		s.Minute *= scale
		lrs[i] = s
		if i == 0 {
			fmt.Fprintf(&b, "learning rate %v", s.Rate)
		} else {
			fmt.Fprintf(&b, ", %v from minute %.4g", s.Rate, s.Minute)
		}
	}
	t.LearningRate = lrs
	fmt.Fprintf(&b, " (the schedule's %.4g minutes fitted to the run's %.4g)", t.ScheduleMinutes, limit.Minutes())
	return t, b.String()
}

// Optimizer is the trainer's configuration at a training step, minutes
// into the run.
func (t TrainConfig) Optimizer(step int, minutes float64) nn.TrainConfig {
	c := t.TrainConfig
	c.LearningRate = t.LearningRateAt(step, minutes)
	return c
}

// ConfigError is a config that cannot be used: unreadable, not YAML, an
// unknown key or game, a value out of range. It is the user's to fix.
type ConfigError struct{ Err error }

func (e ConfigError) Error() string { return e.Err.Error() }
func (e ConfigError) Unwrap() error { return e.Err }

// LoadConfig reads and checks a config file, resolving its game in games.
// Unknown keys and values out of range are errors that name the key and
// the file; every error is a ConfigError.
func LoadConfig(path string, games Games) (Config, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Config{}, ConfigError{fmt.Errorf("config: %w", err)}
	}
	cfg, err := ParseConfig(raw, games)
	if err != nil {
		return Config{}, ConfigError{fmt.Errorf("config %s: %w", path, err)}
	}
	return cfg, nil
}

// ParseSearchSettings reads search settings given on a command line —
// keys of a config's search section in YAML, "cpuct: 2, mode: gumbel",
// braces optional — over base, a player's own settings, and checks the
// result. Playout counts are not among them: a player's playouts are
// its own flag.
func ParseSearchSettings(spec string, base mcts.Config) (mcts.Config, error) {
	text := strings.TrimSpace(spec)
	if !strings.HasPrefix(text, "{") {
		text = "{" + text + "}"
	}
	cfg := base
	if err := decodeKnown([]byte(text), &cfg); err != nil {
		return mcts.Config{}, fmt.Errorf("search settings %q: %w", spec, err)
	}
	// The base's exact endgame backs up through its solver: turning the
	// solver off and leaving the endgame as it was turns both off, rather
	// than refusing a setting the person never gave.
	if base.Solver && !cfg.Solver && cfg.EndgameSolve == base.EndgameSolve {
		cfg.EndgameSolve = 0
	}
	if err := cfg.Validate(); err != nil {
		return mcts.Config{}, fmt.Errorf("search settings %q: %w", spec, err)
	}
	return cfg, nil
}

// Games finds a game by its registry name.
type Games interface {
	ByName(name string) (env.Game, error)
}

// ParseConfig reads and checks a config: the game first, then every key
// over that game's defaults.
func ParseConfig(raw []byte, games Games) (Config, error) {
	var head struct {
		Game string `yaml:"game"`
	}
	if err := yaml.Unmarshal(raw, &head); err != nil {
		return Config{}, ConfigError{errors.New(cleanYAMLError(err))}
	}
	if head.Game == "" {
		return Config{}, ConfigError{errors.New("game: is required")}
	}
	g, err := games.ByName(head.Game)
	if err != nil {
		return Config{}, ConfigError{fmt.Errorf("game: %w", err)}
	}
	cfg := DefaultConfig(g)
	if err := decodeKnown(raw, &cfg); err != nil {
		return Config{}, ConfigError{err}
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, ConfigError{err}
	}
	if cfg.Arena.PolicyMatch && cfg.Arena.Games > 0 && env.Players(g) == 1 {
		return Config{}, ConfigError{fmt.Errorf("arena.policy_match: %s is a one-player game, measured by its scores on the arena's deals; the policy's match is for two-player games", g.Name())}
	}
	if _, ok := g.(env.PolicyMap); cfg.Network.ConvPolicy() && !ok {
		return Config{}, ConfigError{fmt.Errorf("network.policy_head: conv: %s does not lay its actions out on its board (dense works for every game)", g.Name())}
	}
	return cfg, nil
}

// decodeKnown decodes YAML over v, refusing a key v does not have (named
// with its section, and the nearest key there is), with yaml's error
// made one line.
func decodeKnown(raw []byte, v any) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return errors.New(cleanYAMLError(err))
	}
	if err := unknownKey(&doc, reflect.TypeOf(v)); err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		return errors.New(cleanYAMLError(err))
	}
	return nil
}

var unknownField = regexp.MustCompile(`field (\S+) not found in type \S+`)

// cleanYAMLError makes yaml's multi-line errors one line, naming keys
// rather than Go types.
func cleanYAMLError(err error) string {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "yaml: unmarshal errors:\n")
	msg = unknownField.ReplaceAllString(msg, "unknown key $1")
	msg = strings.ReplaceAll(msg, "\n", "; ")
	return strings.Join(strings.Fields(msg), " ")
}

// Validate checks every section, naming the first key out of range as
// section.key.
func (c Config) Validate() error {
	sections := []struct {
		name string
		err  error
	}{
		{"network", c.Network.Validate()},
		{"search", c.Search.Validate()},
		{"selfplay", c.SelfPlay.Validate()},
		{"train", c.Train.Validate()},
		{"window", c.Window.Validate()},
		{"arena", c.Arena.Validate()},
		{"eval", c.Eval.Validate()},
		{"start", c.Start.Validate()},
	}
	for _, s := range sections {
		if s.err != nil {
			return fmt.Errorf("%s.%w", s.name, s.err)
		}
	}
	if c.SelfPlay.GumbelTemperature && c.Search.Mode != mcts.Gumbel {
		return fmt.Errorf("selfplay.gumbel_temperature: true needs search.mode: gumbel (a PUCT search's move takes the temperature itself)")
	}
	return nil
}

// byMinute says whether a schedule drops by minutes of the run (its
// second entry sets a minute; validSchedule holds the rest to that).
func byMinute(lrs []LRStep) bool { return len(lrs) > 1 && lrs[1].Minute != 0 }

// validSchedule checks a learning-rate schedule: rates in (0, 10], the
// first entry at step or minute 0, then steps or minutes (not both) in
// increasing order.
func validSchedule(lrs []LRStep) error {
	if len(lrs) == 0 || lrs[0].Step != 0 || lrs[0].Minute != 0 {
		return errors.New("learning_rate: must list at least one {step, rate} or {minute, rate}, the first at 0")
	}
	minutes := byMinute(lrs)
	for i, lr := range lrs {
		var ordered bool
		switch {
		case i == 0:
			ordered = true
		case minutes:
			ordered = lr.Step == 0 && lr.Minute > lrs[i-1].Minute && !math.IsInf(lr.Minute, 0)
		default:
			ordered = lr.Minute == 0 && lr.Step > lrs[i-1].Step
		}
		if !(lr.Rate > 0 && lr.Rate <= 10) || !ordered {
			return fmt.Errorf("learning_rate[%d]: {step: %d, minute: %v, rate: %v} needs a rate in (0, 10], and every entry a step or every entry a minute, in increasing order", i, lr.Step, lr.Minute, lr.Rate)
		}
	}
	return nil
}

// Validate names the first setting out of range by its key.
func (t TrainConfig) Validate() error {
	c := t.TrainConfig
	if err := validSchedule(t.LearningRate); err != nil {
		return err
	}
	c.LearningRate = t.LearningRate[0].Rate
	if err := c.Validate(); err != nil {
		return err
	}
	switch {
	case t.BatchSize < 1 || t.BatchSize > 4096:
		return fmt.Errorf("batch_size: %d, must be 1..4096", t.BatchSize)
	case !(t.ReplayRatio > 0 && t.ReplayRatio <= 100):
		return fmt.Errorf("replay_ratio: %v, must be in (0, 100]", t.ReplayRatio)
	case t.MinSamples < 0:
		return fmt.Errorf("min_samples: %d, must be 0 or more", t.MinSamples)
	case !(t.AverageHalfLife >= 0 && t.AverageHalfLife <= 1e6):
		return fmt.Errorf("average_half_life: %v, must be 0 (off) or a number of steps up to 1e6", t.AverageHalfLife)
	case !(t.ScheduleMinutes >= 0 && t.ScheduleMinutes <= 1e6):
		return fmt.Errorf("schedule_minutes: %v, must be 0 (off) or a number of minutes up to 1e6", t.ScheduleMinutes)
	case t.ScheduleMinutes > 0 && len(t.LearningRate) > 1 && !byMinute(t.LearningRate):
		return fmt.Errorf("schedule_minutes: %v scales a learning_rate by minutes; this one is by steps", t.ScheduleMinutes)
	}
	return nil
}

// Validate names the first setting out of range by its key.
func (a ArenaConfig) Validate() error {
	switch {
	case a.Games < 0 || a.Games > 100_000:
		return fmt.Errorf("games: %d, must be 0 (off) to 100000", a.Games)
	case a.Games == 0:
		return nil
	case a.Playouts < 1 || a.Playouts > 1_000_000:
		return fmt.Errorf("playouts: %d, must be 1..1000000", a.Playouts)
	case !validBaseline(a.Baseline):
		return fmt.Errorf("baseline: %q, must name a player: random, greedy, perfect, mcts:N, alphabeta:D", a.Baseline)
	case !(a.Gate >= 0 && a.Gate < 1):
		return fmt.Errorf("gate: %v, must be in [0, 1) (0: no gating)", a.Gate)
	}
	return nil
}

func validBaseline(name string) bool {
	if strings.HasPrefix(name, "gtp:") {
		return len(name) > len("gtp:")
	}
	_, err := player.ParsePlayer(name, player.PlayerOptions{})
	return err == nil
}
