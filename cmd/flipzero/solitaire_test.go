package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/arena"
	"github.com/flipzero/flipzero/data"
	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/loop"
	"github.com/flipzero/flipzero/web"
)

// TestArenaSolitaire: the one-player arena plays every player on the same
// deals and prints each one's mean score with its interval and the
// paired differences; the records replay to their scores, and the match
// log takes both comparisons, which ratings rate.
func TestArenaSolitaire(t *testing.T) {
	dir := t.TempDir()
	records := filepath.Join(dir, "games.txt")
	run := filepath.Join(dir, "run")
	code, out, errOut := runCLI(t, "", "arena", "--game", "reversi-solitaire", "--a", "mcts:20", "--b", "greedy",
		"--player", "random", "--games", "12", "--records", records, "--run", run)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 6 || !strings.HasPrefix(lines[0], "reversi-solitaire: 12 deals, each played by 3 players") {
		t.Fatalf("output:\n%s", out)
	}
	player := regexp.MustCompile(`^(\S+): mean score (\d+\.\d+) \[(\d+\.\d+), (\d+\.\d+)\], min \d+, max \d+; the best score, 24, in \d+ deals?$`)
	for i, name := range []string{"mcts:20", "greedy", "random"} {
		m := player.FindStringSubmatch(lines[1+i])
		if m == nil || m[1] != name {
			t.Fatalf("line %q: want %s's mean score and interval", lines[1+i], name)
		}
		mean, _ := strconv.ParseFloat(m[2], 64)
		low, _ := strconv.ParseFloat(m[3], 64)
		high, _ := strconv.ParseFloat(m[4], 64)
		if !(low <= mean && mean <= high && mean >= 0 && mean <= 24) {
			t.Errorf("%s: mean %v outside [%v, %v] or the score's range", name, mean, low, high)
		}
	}
	diff := regexp.MustCompile(`^mcts:20 minus (\S+): [+-]\d+\.\d+ \[[+-]\d+\.\d+, [+-]\d+\.\d+\] per deal, paired over 12 deals; deal by deal W-D-L (\d+)-(\d+)-(\d+) \(ahead, level, behind\)$`)
	for i, other := range []string{"greedy", "random"} {
		m := diff.FindStringSubmatch(lines[4+i])
		if m == nil || m[1] != other {
			t.Fatalf("line %q: want the paired difference from %s", lines[4+i], other)
		}
		n := 0
		for _, c := range m[2:] {
			k, _ := strconv.Atoi(c)
			n += k
		}
		if n != 12 {
			t.Errorf("line %q: %d deals compared, want 12", lines[4+i], n)
		}
	}
	raw, err := os.ReadFile(records)
	if err != nil {
		t.Fatal(err)
	}
	g, _ := games.ByName("reversi-solitaire")
	recs := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(recs) != 36 {
		t.Fatalf("%d records, want 36", len(recs))
	}
	for i, line := range recs {
		f := strings.Split(line, "\t")
		if len(f) != 5 || f[2] != "reversi-solitaire" || f[4] != "deal "+strconv.Itoa(i%12) {
			t.Fatalf("record %q: want moves, outcome, game, player, deal %d", line, i%12)
		}
		s, err := env.Play(g, f[0])
		if err != nil || !s.Terminal() || env.ResultName(s) != f[1] {
			t.Errorf("record %d %q does not replay to its outcome (%v)", i+1, line, err)
		}
	}
	code, out, errOut = runCLI(t, "", "ratings", "--run", run)
	if code != 0 || !strings.Contains(out, "mcts:20") || !strings.Contains(out, "greedy") {
		t.Fatalf("ratings: exit %d:\n%s%s", code, out, errOut)
	}
}

func TestArenaSolitaireUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"arena", "--game", "reversi-solitaire", "--b", "greedy"},
		{"arena", "--game", "reversi-solitaire", "--a", "greedy", "--b", "greedy"},
		{"arena", "--game", "reversi-solitaire", "--a", "greedy", "--player", "greedy"},
		{"arena", "--game", "reversi-solitaire", "--a", "greedy", "--sprt"},
		{"arena", "--game", "reversi-solitaire", "--a", "greedy", "--opening-plies", "2"},
		{"arena", "--game", "reversi-solitaire", "--a", "alphabeta:2"},
		{"arena", "--game", "reversi-solitaire", "--a", "perfect"},
		{"arena", "--game", "reversi-solitaire", "--a", "greedy", "--games", "0"},
		{"arena", "--game", "reversi-solitaire", "--a", "greedy", "--games", "2000000000"},
		{"arena", "--game", "reversi-solitaire", "--a", "greedy", "--run", t.TempDir()},
		{"arena", "--game", "othello", "--a", "greedy", "--b", "random", "--player", "mcts:2"},
	} {
		code, out, errOut := runCLI(t, "", args...)
		if code != 2 || strings.Count(errOut, "\n") != 1 || out != "" {
			t.Errorf("%v: exit %d, %q / %q; want 2 and one line on standard error", args, code, out, errOut)
		}
	}
}

// TestMovesSolitaire: moves lists placements and reveals, and a finished
// game's line is its score; two-player games keep their words.
func TestMovesSolitaire(t *testing.T) {
	g, _ := games.ByName("reversi-solitaire")
	// A finished game with a score: random games until one captures.
	var seq []string
	var score float64
	for seed := uint64(1); score == 0; seed++ {
		r := env.NewRandom(g, rand.New(rand.NewPCG(seed, 1)))
		s := g.NewState()
		seq = seq[:0]
		for !s.Terminal() {
			a := r.Action(s)
			seq = append(seq, g.FormatAction(a))
			s.Apply(a)
		}
		score = s.(env.Scorer).Score()
	}
	input := "\n" + "d3:gold\n" + strings.Join(seq, ";") + "\n" + strings.Join(seq, ";") + ";d3:gold\n" + "d3:white\n"
	code, out, errOut := runCLI(t, input, "moves", "--game", "reversi-solitaire")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	want := []string{
		"c4:gold;c5:black;d3:gold;d6:black;e3:black;e6:gold;f4:black;f5:gold",
		"reveal:black;reveal:gold",
		"over score " + strconv.FormatFloat(score, 'g', -1, 64),
		"error: ",
		"error: ",
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), out)
	}
	for i, w := range want {
		if lines[i] != w && !(w == "error: " && strings.HasPrefix(lines[i], w)) {
			t.Errorf("line %d: %q, want %q", i+1, lines[i], w)
		}
	}
}

// TestGTPRefusesSolitaire: GTP is a protocol between two players, so a
// one-player model is refused with one line.
func TestGTPRefusesSolitaire(t *testing.T) {
	code, out, errOut := runCLI(t, "", "gtp", "--model", untrainedModel(t, "reversi-solitaire"))
	if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "one-player") {
		t.Errorf("exit %d, %q / %q; want 2 and one line saying why", code, out, errOut)
	}
}

// tinySolitaireConfig is configs/reversi-solitaire.yaml shrunk to seconds:
// a tiny network, short searches, small generations, and the arena on, so
// that a generation measures its network on deals.
func tinySolitaireConfig(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("../../configs/reversi-solitaire.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	for _, r := range [][2]string{
		{"blocks: 3", "blocks: 1"}, {"filters: 40", "filters: 8"},
		{"playouts_full: 128", "playouts_full: 12"}, {"playouts_fast: 32", "playouts_fast: 4"},
		{"games_per_generation: 128", "games_per_generation: 8"}, {"concurrent_games: 48", "concurrent_games: 4"},
		{"batch_size: 24", "batch_size: 8"}, {"batch_size: 128", "batch_size: 16"}, {"min_samples: 1000", "min_samples: 16"},
		{"games: 0 ", "games: 4 "}, {"playouts: 100", "playouts: 4"},
	} {
		if !strings.Contains(text, r[0]) {
			t.Fatalf("the shipped config has no %q", r[0])
		}
		text = strings.Replace(text, r[0], r[1], 1)
	}
	path := filepath.Join(t.TempDir(), "solitaire.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLoopSolitaire trains the solitaire through the command: a
// generation, then a resumed one. Each keeps samples of decisions only,
// valued by their game's final normalised score; its games end in a
// score; its metrics carry the mean score of self-play and of the
// arena's deals; the arena logs its comparisons and rates the network;
// and the run's page reads it all and replays a game to its score.
func TestLoopSolitaire(t *testing.T) {
	run := filepath.Join(t.TempDir(), "run")
	if code, out, errOut := runCLI(t, "", "loop", "--config", tinySolitaireConfig(t), "--run", run, "--generations", "1", "--seed", "4", "--quiet"); code != 0 {
		t.Fatalf("loop: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := runCLI(t, "", "loop", "--run", run, "--generations", "1", "--seed", "5", "--quiet")
	if code != 0 || !strings.Contains(out+errOut, "generation 1,") {
		t.Fatalf("resume: exit %d\n%s%s", code, out, errOut)
	}
	g, _ := games.ByName("reversi-solitaire")
	ms, err := loop.ReadMetrics(filepath.Join(run, "metrics.jsonl"))
	if err != nil || len(ms) != 2 {
		t.Fatalf("metrics: %d generations, %v", len(ms), err)
	}
	for _, m := range ms {
		if m.Games != 8 || m.Score == nil || *m.Score < 0 || *m.Score > 24 || m.ArenaScore == nil || *m.ArenaScore < 0 || *m.ArenaScore > 24 || m.Rating == nil {
			t.Errorf("generation %d metrics: %+v", m.Generation, m)
		}
	}
	if ms[1].Step <= ms[0].Step {
		t.Errorf("no training in the resumed generation: steps %d then %d", ms[0].Step, ms[1].Step)
	}
	for gen := 1; gen <= 2; gen++ {
		samples, err := data.ReadShard(filepath.Join(run, "data", fmt.Sprintf("gen-%06d.shard", gen)), g)
		if err != nil || len(samples) == 0 {
			t.Fatalf("generation %d shard: %d samples, %v", gen, len(samples), err)
		}
		for i, s := range samples {
			if k := (s.Outcome + 1) / 2 * 24; math.Abs(float64(k)-math.Round(float64(k))) > 1e-4 {
				t.Fatalf("generation %d sample %d: outcome %v is no score of 24 tokens", gen, i, s.Outcome)
			}
			for _, a := range s.Legal {
				if strings.HasPrefix(g.FormatAction(int(a)), "reveal:") {
					t.Fatalf("generation %d sample %d is a chance node", gen, i)
				}
			}
		}
		raw, err := os.ReadFile(filepath.Join(run, "games", fmt.Sprintf("gen-%06d.txt", gen)))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
		sum := 0.0
		for _, line := range lines {
			f := strings.Split(line, "\t")
			s, err := env.Play(g, f[0])
			if err != nil || !s.Terminal() || f[1] != env.ResultName(s) {
				t.Fatalf("game record %q does not replay to its score (%v)", line, err)
			}
			sum += s.(env.Scorer).Score()
		}
		if len(lines) != 8 || math.Abs(sum/8-*ms[gen-1].Score) > 1e-9 {
			t.Errorf("generation %d: %d games with mean score %v, metrics say %v", gen, len(lines), sum/8, *ms[gen-1].Score)
		}
	}
	matches, _, err := arena.ReadMatches(filepath.Join(run, "matches.jsonl"))
	if err != nil || len(matches) != 4 {
		t.Fatalf("matches: %d, %v; want two a generation", len(matches), err)
	}
	for _, m := range matches {
		if m.MeanA == nil || m.MeanB == nil || m.Wins+m.Draws+m.Losses != 4 {
			t.Errorf("match %+v: want both means over 4 deals", m)
		}
	}
	if matches[1].B != "greedy" || *matches[1].MeanA != *ms[0].ArenaScore {
		t.Errorf("generation 1 against the baseline: %+v, arena score %v", matches[1], *ms[0].ArenaScore)
	}
	// The run's page.
	r, err := web.NewRun(run, games.Builtin(), loop.Summarizer(games.Builtin()))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(web.Handler(nil, r))
	defer srv.Close()
	get := func(path string, v any) {
		t.Helper()
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if res.StatusCode != http.StatusOK || json.NewDecoder(res.Body).Decode(v) != nil {
			t.Fatalf("%s: %s", path, res.Status)
		}
	}
	var view struct {
		Game     string
		Metrics  []loop.GenerationMetrics
		Matches  []arena.MatchRecord
		Problems []string
	}
	get("/api/run", &view)
	if view.Game != "reversi-solitaire" || len(view.Metrics) != 2 || len(view.Matches) != 4 || len(view.Problems) != 0 {
		t.Fatalf("/api/run: %+v", view)
	}
	var replay struct {
		Cells  []env.Cell
		Frames []struct{ Pieces map[string]string }
		Result string
		Error  string
	}
	get("/api/run/game?gen=2&game=0", &replay)
	if replay.Error != "" || len(replay.Cells) != 64 || len(replay.Frames) < 2 || !strings.HasPrefix(replay.Result, "score ") ||
		replay.Frames[0].Pieces["c1"] != "token" {
		t.Errorf("replay: %+v", replay)
	}
}

// TestBenchSolitaire: the benchmarks measure the solitaire, self-play
// from its shipped config.
func TestBenchSolitaire(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "env", "--game", "reversi-solitaire", "--seconds", "0.05"},
		{"bench", "mcts", "--game", "reversi-solitaire", "--playouts", "300", "--seconds", "0.05"},
		{"bench", "mcts", "--game", "reversi-solitaire", "--evaluator", "rollout", "--playouts", "300", "--seconds", "0.05"},
		{"bench", "selfplay", "--game", "reversi-solitaire", "--config", "../../configs/reversi-solitaire.yaml",
			"--seconds", "0.3", "--workers", "1", "--concurrent", "4", "--batch", "4", "--device", "cpu"},
	} {
		code, out, errOut := runCLI(t, "", args...)
		if code != 0 || !strings.Contains(out, "reversi-solitaire") {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
	}
}
