package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestBenchSelfPlayCache: bench selfplay plays a model's network with the
// evaluation cache it is given and says how much of self-play the cache
// answered; games that all start from one position share their first
// searches, so some of it is answered.
func TestBenchSelfPlayCache(t *testing.T) {
	model := untrainedModel(t, "othello")
	code, out, errOut := runCLI(t, "", "bench", "selfplay", "--model", model, "--config", "../../configs/othello.yaml",
		"--seconds", "0.5", "--workers", "2", "--concurrent", "4", "--batch", "4", "--cache", "4096", "--standalone=false", "--device", "cpu")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.HasPrefix(out, "othello: 1 blocks × 8 filters,") || !strings.Contains(out, "cache 4096") {
		t.Errorf("%q, want the model's network and the cache", strings.SplitN(out, "\n", 2)[0])
	}
	if strings.Contains(out, "standalone") {
		t.Errorf("a standalone measure with --standalone=false:\n%s", out)
	}
	m := regexp.MustCompile(`(?m)^the cache answered ([0-9.]+)% of the positions: [0-9]+ positions/s in all$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no line on the cache:\n%s", out)
	}
	if share, _ := strconv.ParseFloat(m[1], 64); share <= 0 || share >= 100 {
		t.Errorf("the cache answered %g%%, want some but not all", share)
	}
	for _, args := range [][]string{
		{"--cache", "1000"},
		{"--cache", "-2"},
	} {
		code, _, errOut := runCLI(t, "", append([]string{"bench", "selfplay", "--game", "othello", "--config", "../../configs/othello.yaml", "--seconds", "0.1"}, args...)...)
		if code != 2 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "eval_cache") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line naming eval_cache", args, code, errOut)
		}
	}
}
