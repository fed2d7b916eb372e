package player

import (
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/games"
)

func game(t testing.TB, name string) env.Game {
	t.Helper()
	g, err := games.ByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func player(t testing.TB, name string) Player {
	t.Helper()
	p, err := ParsePlayer(name, PlayerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
