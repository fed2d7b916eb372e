package main

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/games"
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
	diff := regexp.MustCompile(`^mcts:20 minus (\S+): [+-]\d+\.\d+ \[[+-]\d+\.\d+, [+-]\d+\.\d+\] per deal, paired over 12 deals; ahead in (\d+), level in (\d+), behind in (\d+)$`)
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
