package nn

import (
	"testing"

	"github.com/flipzero/flipzero/env/tictactoe"
)

func TestLearnablesShareTheNetworksArrays(t *testing.T) {
	net, err := New(tictactoe.Game{}, tinyConfig, 1)
	if err != nil {
		t.Fatal(err)
	}
	ls := net.Learnables()
	if len(ls) != len(net.learnables) || len(net.Statistics()) != len(net.stats) {
		t.Fatalf("%d learnables and %d statistics, want %d and %d", len(ls), len(net.Statistics()), len(net.learnables), len(net.stats))
	}
	ls[0].Data[0] = 42
	if net.stem.w.data[0] != 42 || ls[0].Name != "stem.w" || !ls[0].Decay {
		t.Fatalf("first learnable %s (decay %v) does not alias the stem's weights", ls[0].Name, ls[0].Decay)
	}
}
