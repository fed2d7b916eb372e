package selfplay

import (
	"math/rand/v2"

	"github.com/flipzero/flipzero/env"
)

// Forks keeps the positions finished games set aside for later games to
// start from (Settings.ForkFraction): KataGo's forked games, which send
// self-play down lines that the network's own choices would rarely
// reach again. A caller that plays generation after generation passes
// the same Forks to each (Settings.Forks), so that the forks of one
// generation's games start the next one's; each worker keeps its own,
// so that a run stays the same from its seed.
//
// A Forks is used by one PlayGames or PlayStream at a time.
type Forks struct {
	queues []*forkQueue
}

// Len is how many forks wait for a game to start from them.
func (f *Forks) Len() int {
	n := 0
	for _, q := range f.queues {
		n += len(q.forks)
	}
	return n
}

// queue is worker w's queue, made on first use.
func (f *Forks) queue(w int) *forkQueue {
	for len(f.queues) <= w {
		f.queues = append(f.queues, &forkQueue{})
	}
	return f.queues[w]
}

// fork is a position a finished game set aside: the game's actions up to
// one of its searched positions, then a move the game did not play there.
type fork struct {
	actions []int
	ply     int // decisions among actions
}

// forkQueue is one worker's forks, oldest first, at most limit of them:
// a full queue drops its oldest, so that forks come from recent games.
type forkQueue struct {
	forks []fork
	limit int
}

func (q *forkQueue) push(f fork) {
	if q.limit < 1 {
		return
	}
	if len(q.forks) >= q.limit {
		copy(q.forks, q.forks[1:])
		q.forks = q.forks[:len(q.forks)-1]
	}
	q.forks = append(q.forks, f)
}

// pop takes the oldest fork, if there is one.
func (q *forkQueue) pop() (fork, bool) {
	if len(q.forks) == 0 {
		return fork{}, false
	}
	f := q.forks[0]
	copy(q.forks, q.forks[1:])
	q.forks = q.forks[:len(q.forks)-1]
	return f, true
}

// setAside picks a fork from a finished game: one of its searched
// positions, every one as likely, and there a move other than the one
// played, drawn by the search's policy target (evenly where the target
// gives the others nothing). A fork whose move ends the game is no game
// to play, and is dropped.
func setAside(g env.Game, actions []int, pending []pendingSample, rng *rand.Rand) (fork, bool) {
	if len(pending) == 0 {
		return fork{}, false
	}
	p := &pending[rng.IntN(len(pending))]
	played := -1 // the last search of a resigned game played nothing
	if p.at < len(actions) {
		played = actions[p.at]
	}
	alternative, ok := drawOther(p.sample.Legal, p.sample.Policy, played, rng)
	if !ok {
		return fork{}, false
	}
	f := fork{actions: make([]int, p.at+1), ply: p.ply + 1}
	copy(f.actions, actions[:p.at])
	f.actions[p.at] = alternative
	s := g.NewState()
	for _, a := range f.actions {
		s.Apply(a)
	}
	if s.Terminal() {
		return fork{}, false
	}
	return f, true
}

// drawOther draws one of legal other than played, by the weights policy
// gives them, or evenly where those sum to nothing.
func drawOther(legal []int32, policy []float32, played int, rng *rand.Rand) (int, bool) {
	total, others := 0.0, 0
	for i, a := range legal {
		if int(a) != played {
			total += float64(policy[i])
			others++
		}
	}
	if others == 0 {
		return 0, false
	}
	if total > 0 {
		x := rng.Float64() * total
		last := 0
		for i, a := range legal {
			if int(a) == played || policy[i] <= 0 {
				continue
			}
			last = int(a)
			if x -= float64(policy[i]); x < 0 {
				return int(a), true
			}
		}
		return last, true // rounding left x a hair above zero
	}
	k := rng.IntN(others)
	for _, a := range legal {
		if int(a) == played {
			continue
		}
		if k == 0 {
			return int(a), true
		}
		k--
	}
	return 0, false
}
