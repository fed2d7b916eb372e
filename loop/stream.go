package loop

import (
	"context"
	"time"

	"github.com/flipzero/flipzero/selfplay"
)

// playStream plays generation first and those after as one stream of
// games (see localSelfPlay): generations a stopped run played ahead are
// taken as they are, then the stream fills each of the others with the
// next cfg.SelfPlay.Games games to end, writes it and hands it over.
func (s *localSelfPlay) playStream(ctx context.Context, first int) error {
	for {
		games, ok := s.saved[first]
		if !ok {
			break
		}
		number := first
		s.update(func() { s.done[number] = games })
		first++
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f := &filling{s: s, number: first, quota: s.cfg.SelfPlay.Games, whole: make(chan wholeGeneration, 2)}
	s.update(func() { s.playing, s.roundStart, s.base = first, time.Now(), selfplay.Stats{} })
	s.moves.Store(0)
	s.evaluations.Store(0)
	s.cached.Store(0)
	// The writer stores each whole generation while the games go on.
	written := make(chan error, 1)
	go func() { written <- s.writeWhole(f.whole, cancel) }()

	settings := s.cfg.SelfPlay
	settings.Forks = &s.forks
	settings.Progress = s.count
	gate := &streamGate{s: s, first: first, quota: settings.Games}
	seed := s.seed ^ uint64(first)*0x9e3779b97f4a7c15
	_, err := selfplay.PlayStream(ctx, s.stream, s.game, s.cfg.Search, settings, seed, s.evals.New, gate, f.add)
	close(f.whole)
	if werr := <-written; werr != nil {
		return werr
	}
	return err
}

// streamGate lets a stream start the games of the generations the loop
// has asked for and of the ahead after them, once a network is published.
type streamGate struct {
	s       *localSelfPlay
	first   int // the stream's first generation
	quota   int // games a generation
	started int // games started, guarded by s.mu
}

func (g *streamGate) Start() bool {
	s := g.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.net == nil || g.started >= (s.asked+s.ahead-g.first+1)*g.quota {
		return false
	}
	g.started++
	return true
}

func (g *streamGate) Changed() <-chan struct{} {
	g.s.mu.Lock()
	defer g.s.mu.Unlock()
	return g.s.changed
}

// filling gathers the ended games into the generation being filled and
// hands each whole one to the writer. Its add is called from one
// goroutine at a time.
type filling struct {
	s       *localSelfPlay
	number  int
	quota   int
	games   RemoteGames
	records []string
	whole   chan wholeGeneration
}

// wholeGeneration is a generation's games, to be stored.
type wholeGeneration struct {
	number  int
	games   RemoteGames
	records []string
}

func (f *filling) add(r selfplay.GameRecord) {
	s := f.s
	f.games.Samples = append(f.games.Samples, r.Samples...)
	f.records = append(f.records, FormatGame(s.game, r))
	f.games.Add(r)
	if f.games.Games < f.quota {
		return
	}
	number, now := f.number, time.Now()
	moves := int(s.moves.Swap(0))
	sofar := selfplay.Stats{Evaluations: s.evaluations.Load(), Cached: s.cached.Load()}
	s.update(func() {
		s.finished[number] = roundStats{moves, sofar.Evaluations - s.base.Evaluations, sofar.Cached - s.base.Cached,
			now.Sub(s.roundStart).Seconds()}
		s.playing, s.roundStart, s.base = number+1, now, sofar
	})
	f.whole <- wholeGeneration{number, f.games, f.records}
	f.number++
	f.games, f.records = RemoteGames{}, nil
}

// writeWhole stores the whole generations as they come and hands each
// over, until whole closes; on a failure it stops the stream.
func (s *localSelfPlay) writeWhole(whole <-chan wholeGeneration, stop func()) error {
	var failed error
	for w := range whole {
		if failed != nil {
			continue
		}
		if err := s.store(w.number, &w.games, w.records); err != nil {
			failed = err
			stop()
			continue
		}
		s.update(func() { s.done[w.number] = w.games })
	}
	return failed
}
