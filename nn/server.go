package nn

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Multiplexed is implemented by a backend whose inference runs best on
// large batches gathered from every search worker at once — a GPU, where
// a batch of 32 costs nearly what one of 512 does. Pipelines is how many
// gathered batches it keeps in flight: with two, the GPU computes one
// while the next is gathered and the workers encode and expand.
type Multiplexed interface {
	Pipelines() int
}

// Reloadable is an Inference that takes the weights of another snapshot
// of the same architecture in place, keeping what it prepared for its
// batch sizes (a GPU's chosen algorithms and captured graphs).
type Reloadable interface {
	Reload(f *Folded) error
}

// Evaluators hands out the search evaluators of one network to the
// workers of self-play or a match. On a multiplexed backend they share
// one batching server (KataGo's neural-net server threads, lc0's
// multiplexing backend); elsewhere each has its own inference, as the
// CPU wants. Close it after the evaluators.
type Evaluators struct {
	backend Backend
	batch   int
	workers int
	server  *Server

	mu sync.Mutex
	f  *Folded
	// cache is the one the evaluators share (nil: none).
	cache *evalCache
	// own are the evaluators handed out with inferences of their own (no
	// server), which Reload gives the new weights in place.
	own []*BatchEvaluator
}

// NewEvaluators prepares evaluators of f for workers searching batches
// of up to batch positions each.
func NewEvaluators(backend Backend, f *Folded, workers, batch int) (*Evaluators, error) {
	if workers < 1 || batch < 1 {
		return nil, fmt.Errorf("evaluators: %d workers of batch %d, want at least 1 each", workers, batch)
	}
	e := &Evaluators{backend: backend, f: f, batch: batch, workers: workers}
	if err := e.serve(); err != nil {
		return nil, err
	}
	return e, nil
}

// serve starts the batching server on a multiplexed backend.
func (e *Evaluators) serve() error {
	m, ok := e.backend.(Multiplexed)
	if !ok || e.workers < 2 {
		return nil
	}
	server, err := NewServer(e.backend, e.f, max(e.batch, min(e.workers*e.batch, maxServerBatch)), m.Pipelines())
	if err != nil {
		return err
	}
	e.server = server
	return nil
}

// Reload makes the evaluators evaluate f, a network of the same
// architecture: those handed out take its weights in place (the server's
// inferences, or each evaluator's own), and later ones start with it. A
// server whose inferences cannot take them starts anew, which only
// evaluators handed out later can use: with any still open, that is an
// error. No evaluator may be evaluating.
func (e *Evaluators) Reload(f *Folded) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.f = f
	if e.cache != nil {
		// Counted before the weights change (no evaluator is evaluating):
		// the last network's answers are misses from the next call on.
		e.cache.network.Add(1)
	}
	if e.server == nil {
		return e.reloadOwn(f)
	}
	err := e.server.Reload(f)
	if err == nil || !errors.Is(err, errNotReloadable) {
		return err
	}
	if open := e.server.clients.Load(); open > 0 {
		return fmt.Errorf("evaluators: %w, and %d evaluators are open", err, open)
	}
	e.server.Close()
	e.server = nil
	return e.serve()
}

// reloadOwn gives the open evaluators with inferences of their own f's
// weights, forgetting the closed ones.
func (e *Evaluators) reloadOwn(f *Folded) error {
	e.forgetClosed()
	for _, be := range e.own {
		r, ok := be.inf.(Reloadable)
		if !ok {
			return fmt.Errorf("evaluators: %w", errNotReloadable)
		}
		if err := r.Reload(f); err != nil {
			return fmt.Errorf("evaluators: %w", err)
		}
	}
	return nil
}

// forgetClosed drops the closed evaluators from own, so that their
// buffers can go.
func (e *Evaluators) forgetClosed() {
	open := e.own[:0]
	for _, be := range e.own {
		if !be.closed.Load() {
			open = append(open, be)
		}
	}
	clear(e.own[len(open):])
	e.own = open
}

// maxServerBatch bounds a gathered batch: past a few thousand positions a
// GPU gains little, and each pipeline's buffers grow with it.
const maxServerBatch = 4096

// SetCache makes the evaluators handed out from now on share a new cache
// of entries answers (a power of two; 0: none), which answers only for
// the network that gave them: Reload makes them misses.
func (e *Evaluators) SetCache(entries int) error {
	if err := checkCacheEntries(entries); err != nil {
		return fmt.Errorf("evaluators: %w", err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.cache = nil
	if entries > 0 {
		e.cache = newEvalCache(entries)
	}
	return nil
}

// New returns one worker's evaluator, for one goroutine at a time. Close
// it (if it is an io.Closer) when the worker is done, so that the server
// stops waiting for it.
func (e *Evaluators) New() (*BatchEvaluator, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var be *BatchEvaluator
	var err error
	if e.server == nil {
		be, err = NewEvaluator(e.backend, e.f, e.batch)
		if err == nil {
			e.forgetClosed()
			e.own = append(e.own, be)
		}
	} else {
		var c *Client
		if c, err = e.server.Client(e.batch); err == nil {
			be, err = NewBatchEvaluator(e.f.Game(), c)
		}
	}
	if err != nil {
		return nil, err
	}
	be.shareCache(e.cache)
	return be, nil
}

// Batch is the size of the batches the backend computes: the server's
// gathered batch, or each worker's own.
func (e *Evaluators) Batch() int {
	if e.server != nil {
		return e.server.maxBatch
	}
	return e.batch
}

// Close stops the server, if there is one.
func (e *Evaluators) Close() error {
	if e.server == nil {
		return nil
	}
	return e.server.Close()
}

// Server gathers the batches of many clients into batches of up to
// maxBatch positions and runs them on its pipelines, each its own
// inference of the network, so that one batch computes while the next is
// gathered.
type Server struct {
	maxBatch int
	size     int // values of one encoded position
	actions  int
	requests chan *request
	infs     []Inference
	done     sync.WaitGroup
	// clients counts the clients not yet closed; outstanding the requests
	// made and not yet answered, queued or taken. A pipeline stops
	// gathering once every open client has a request outstanding: no other
	// can come.
	clients     atomic.Int64
	outstanding atomic.Int64
	// open guards the queue: clients send under its read lock, Close
	// closes the queue under its write lock, so that a late client gets
	// an error rather than a send on a closed channel.
	open      sync.RWMutex
	closed    bool
	closeOnce sync.Once
}

// request is one client's batch: its positions, where the results go,
// and where to say they are there.
type request struct {
	inputs      []float32
	count       int
	logits, wdl []float32
	done        chan error
}

// linger bounds how long a pipeline waits for more clients once it has
// a request: long enough for workers busy expanding their trees to come
// back, short against a GPU batch's milliseconds.
const linger = 2 * time.Millisecond

// NewServer starts pipelines inferences of f on backend for batches of up
// to maxBatch positions.
func NewServer(backend Backend, f *Folded, maxBatch, pipelines int) (*Server, error) {
	if pipelines < 1 || maxBatch < 1 {
		return nil, fmt.Errorf("batching server: %d pipelines of batch %d, want at least 1 each", pipelines, maxBatch)
	}
	l := f.Layers()
	s := &Server{maxBatch: maxBatch, size: l.Planes * l.Height * l.Width, actions: l.Actions, requests: make(chan *request, 1024)}
	for range pipelines {
		inf, err := backend.NewInference(f, maxBatch)
		if err != nil {
			for _, i := range s.infs {
				closeInference(i)
			}
			return nil, fmt.Errorf("batching server: %w", err)
		}
		s.infs = append(s.infs, inf)
	}
	for _, inf := range s.infs {
		s.done.Add(1)
		go s.pipeline(inf)
	}
	return s, nil
}

func closeInference(inf Inference) {
	if c, ok := inf.(interface{ Close() error }); ok {
		c.Close()
	}
}

// Close stops the pipelines once the queued requests are answered and
// frees their inferences. Clients must not evaluate after it.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.open.Lock()
		s.closed = true
		close(s.requests)
		s.open.Unlock()
		s.done.Wait()
		for _, inf := range s.infs {
			closeInference(inf)
		}
	})
	return nil
}

// errNotReloadable says that an inference of the server cannot take a
// new network's weights in place.
var errNotReloadable = errors.New("the backend's inference cannot take new weights in place")

// Reload gives every pipeline f's weights. No client may be evaluating.
func (s *Server) Reload(f *Folded) error {
	for _, inf := range s.infs {
		r, ok := inf.(Reloadable)
		if !ok {
			return fmt.Errorf("batching server: %w", errNotReloadable)
		}
		if err := r.Reload(f); err != nil {
			return fmt.Errorf("batching server: %w", err)
		}
	}
	return nil
}

// pipeline gathers requests into batches and runs them until the queue
// closes.
func (s *Server) pipeline(inf Inference) {
	defer s.done.Done()
	in := make([]float32, s.maxBatch*s.size)
	var held *request // a request that did not fit the last batch
	batch := make([]*request, 0, 64)
	// One timer for the pipeline's lingering, stopped between batches:
	// since Go 1.23 a stopped timer's channel holds no stale tick.
	timer := time.NewTimer(linger)
	timer.Stop()
	for {
		first := held
		held = nil
		if first == nil {
			r, ok := <-s.requests
			if !ok {
				return
			}
			first = r
		}
		batch = append(batch[:0], first)
		total := first.count
		held = s.gather(&batch, &total, timer)
		s.run(inf, in, batch, total)
	}
}

// gather adds queued requests to the batch until it is full, every open
// client is accounted for, the queue closes or linger passes on timer,
// stopped on entry and on return; it returns a request taken that did
// not fit.
func (s *Server) gather(batch *[]*request, total *int, timer *time.Timer) *request {
	waiting := false
	defer timer.Stop()
	for *total < s.maxBatch {
		var r *request
		var ok bool
		select {
		case r, ok = <-s.requests:
		default:
			if s.outstanding.Load() >= s.clients.Load() {
				return nil
			}
			if !waiting {
				timer.Reset(linger)
				waiting = true
			}
			select {
			case r, ok = <-s.requests:
			case <-timer.C:
				return nil
			}
		}
		if !ok {
			return nil
		}
		if *total+r.count > s.maxBatch {
			return r
		}
		*batch = append(*batch, r)
		*total += r.count
	}
	return nil
}

// run computes one gathered batch and answers its requests.
func (s *Server) run(inf Inference, in []float32, batch []*request, total int) {
	off := 0
	for _, r := range batch {
		copy(in[off*s.size:], r.inputs[:r.count*s.size])
		off += r.count
	}
	logits, wdl, err := inf.Forward(in[:total*s.size], total)
	off = 0
	for _, r := range batch {
		if err == nil {
			copy(r.logits, logits[off*s.actions:(off+r.count)*s.actions])
			copy(r.wdl, wdl[off*valueOutputs:(off+r.count)*valueOutputs])
		}
		off += r.count
		s.outstanding.Add(-1)
		r.done <- err
	}
}

// Client returns an Inference of batches up to batch positions that runs
// through the server: one goroutine's, until its Close.
func (s *Server) Client(batch int) (*Client, error) {
	if batch < 1 || batch > s.maxBatch {
		return nil, fmt.Errorf("batching server: a client of batch %d, want 1..%d", batch, s.maxBatch)
	}
	s.clients.Add(1)
	return &Client{s: s, batch: batch, req: request{
		logits: make([]float32, batch*s.actions), wdl: make([]float32, batch*valueOutputs), done: make(chan error, 1),
	}}, nil
}

// Client is one worker's way to the server, an Inference.
type Client struct {
	s      *Server
	batch  int
	req    request
	closed bool
}

// MaxBatch is the largest batch Forward takes.
func (c *Client) MaxBatch() int { return c.batch }

// Forward queues the positions with the server and waits for their
// results, valid until the next call.
func (c *Client) Forward(inputs []float32, count int) (logits, wdl []float32, err error) {
	if c.closed {
		return nil, nil, errors.New("batching server: client closed")
	}
	if count < 1 || count > c.batch || len(inputs) != count*c.s.size {
		return nil, nil, fmt.Errorf("batching server: %d positions in %d values, want 1..%d of %d", count, len(inputs), c.batch, c.s.size)
	}
	c.req.inputs, c.req.count = inputs, count
	c.s.open.RLock()
	if c.s.closed {
		c.s.open.RUnlock()
		return nil, nil, errors.New("batching server: closed")
	}
	c.s.outstanding.Add(1)
	c.s.requests <- &c.req
	c.s.open.RUnlock()
	if err := <-c.req.done; err != nil {
		return nil, nil, err
	}
	return c.req.logits[:count*c.s.actions], c.req.wdl[:count*valueOutputs], nil
}

// Close tells the server not to wait for this client any more.
func (c *Client) Close() error {
	if !c.closed {
		c.closed = true
		c.s.clients.Add(-1)
	}
	return nil
}
