package othello

import (
	"math/bits"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/envtest"
)

// naiveMobility counts the empty squares where the owner of mine could
// play, walking the eight directions square by square.
func naiveMobility(mine, theirs uint64) int {
	n := 0
	for sq := 0; sq < 64; sq++ {
		if (mine|theirs)>>sq&1 != 0 {
			continue
		}
		for _, d := range [8][2]int{{0, 1}, {1, 1}, {1, 0}, {1, -1}, {0, -1}, {-1, -1}, {-1, 0}, {-1, 1}} {
			x, y, seen := sq%8+d[0], sq/8+d[1], 0
			for x >= 0 && x < 8 && y >= 0 && y < 8 && theirs>>(8*y+x)&1 != 0 {
				x, y, seen = x+d[0], y+d[1], seen+1
			}
			if seen > 0 && x >= 0 && x < 8 && y >= 0 && y < 8 && mine>>(8*y+x)&1 != 0 {
				n++
				break
			}
		}
	}
	return n
}

func TestHeuristic(t *testing.T) {
	start := Othello().NewState().(*State)
	if h := start.Heuristic(0); h != 0 {
		t.Errorf("the symmetric start position scores %v", h)
	}
	const cornerSquares = 1<<0 | 1<<7 | 1<<56 | 1<<63
	for _, s := range envtest.RandomPositions(Othello(), 500, 6) {
		st := s.(*State)
		black, white := st.Boards()
		for _, p := range []env.Player{0, 1} {
			mine, theirs := black, white
			if p == 1 {
				mine, theirs = white, black
			}
			want := 10*float64(bits.OnesCount64(mine&cornerSquares)-bits.OnesCount64(theirs&cornerSquares)) +
				2*float64(naiveMobility(mine, theirs)-naiveMobility(theirs, mine)) +
				float64(bits.OnesCount64(mine)-bits.OnesCount64(theirs))
			if got := st.Heuristic(p); got != want {
				t.Fatalf("heuristic for %d is %v, want %v\n%v", p, got, want, s)
			}
		}
	}
}

func BenchmarkHeuristic(b *testing.B) {
	positions := envtest.RandomPositions(Othello(), 256, 4)
	b.ReportAllocs()
	sum := 0.0
	for i := 0; i < b.N; i++ {
		sum += positions[i%len(positions)].(*State).Heuristic(0)
	}
	_ = sum
}
