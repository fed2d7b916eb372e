package cluster

import (
	"testing"

	"github.com/flipzero/flipzero/selfplay"
)

// TestOutboxBehind: pending games go out as soon as a newer network is in
// play (or another run's), not before, and go out once.
func TestOutboxBehind(t *testing.T) {
	var o outbox
	gen3 := State{RunID: "a", Generation: 3}
	for range 2 {
		if _, due := o.add(selfplay.GameRecord{}, gen3, 1000, 10); due {
			t.Fatal("two games of ten made a batch due")
		}
	}
	for _, tc := range []struct {
		st   State
		want bool
	}{
		{State{RunID: "a", Generation: 3}, false},
		{State{RunID: "a", Generation: 2}, false},
		{State{RunID: "a", Generation: 4}, true},
		{State{RunID: "a", Generation: 5}, false}, // already sent
	} {
		b, due := o.behind(tc.st)
		if due != tc.want {
			t.Fatalf("behind generation %d: due %v, want %v", tc.st.Generation, due, tc.want)
		}
		if due && (len(b.games) != 2 || b.state != gen3) {
			t.Fatalf("batch of %d games of %+v, want the 2 of generation 3", len(b.games), b.state)
		}
	}
	o.add(selfplay.GameRecord{}, gen3, 1000, 10)
	if _, due := o.behind(State{RunID: "b", Generation: 1}); !due {
		t.Error("games of another run were kept waiting")
	}
}
