package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestShippedModels loads every network in models/ as a player would
// and checks that each still reads, names its game, and plays it: its
// policy alone, one playout a move, beats the greedy player, which an
// untrained network does not. A change to the model format that
// orphans the shipped files fails here, not in a user's hands.
func TestShippedModels(t *testing.T) {
	models, err := filepath.Glob(filepath.Join("..", "..", "models", "*.fznet"))
	if err != nil {
		t.Fatal(err)
	}
	if len(models) == 0 {
		t.Fatal("no models/*.fznet: the shipped networks are missing")
	}
	for _, model := range models {
		t.Run(filepath.Base(model), func(t *testing.T) {
			code, out, errOut := runCLI(t, "", "info", model)
			if code != 0 || !strings.Contains(out, "checksum ok") {
				t.Fatalf("info: exit %d: %s%s", code, out, errOut)
			}
			game := ""
			for _, line := range strings.Split(out, "\n") {
				if f := strings.Fields(line); len(f) == 2 && f[0] == "game:" {
					game = f[1]
				}
			}
			if game == "" {
				t.Fatalf("info names no game:\n%s", out)
			}
			const games = 20
			code, out, errOut = runCLI(t, "", "arena", "--game", game, "--a", model, "--b", "greedy",
				"--games", fmt.Sprint(games), "--playouts", "1", "--progress=false")
			if code != 0 {
				t.Fatalf("arena: exit %d: %s", code, errOut)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(lines) < 2 {
				t.Fatalf("arena output:\n%s", out)
			}
			var wins, draws, losses int
			if _, err := fmt.Sscanf(strings.TrimPrefix(lines[1], model+" "), "W-D-L %d-%d-%d", &wins, &draws, &losses); err != nil {
				t.Fatalf("score line %q: %v", lines[1], err)
			}
			if wins+draws+losses != games || wins < games*3/4 {
				t.Errorf("%s's policy against greedy: W-D-L %d-%d-%d, want at least %d wins of %d", model, wins, draws, losses, games*3/4, games)
			}
		})
	}
}
