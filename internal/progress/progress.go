// Package progress reports long work to a person: a live bar when the
// output is a terminal, and plain lines otherwise — one when a task
// starts, one every so often while it runs, one when it ends — so that a
// log file reads one line per event, with no carriage returns or escape
// codes.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Reporter starts tasks on one output. Its zero value and a nil Reporter
// report nothing.
type Reporter struct {
	w        io.Writer
	terminal bool
	// every is how often a plain line repeats a running task's count.
	every time.Duration
}

// New reports to w: bars when w is a terminal, lines otherwise; nothing
// when w is nil.
func New(w io.Writer) *Reporter {
	if w == nil {
		return nil
	}
	f, ok := w.(*os.File)
	return &Reporter{w: w, terminal: ok && term.IsTerminal(int(f.Fd())), every: 30 * time.Second}
}

// Lines reports to w in plain lines whatever w is, a line at most every
// interval while a task runs.
func Lines(w io.Writer, every time.Duration) *Reporter {
	return &Reporter{w: w, every: every}
}

// Task is one piece of work of a known or estimated size. Its methods
// may be called from several goroutines.
type Task struct {
	mu    sync.Mutex
	r     *Reporter
	bar   *progressbar.ProgressBar
	what  string
	total int
	done  int
	start time.Time
	last  time.Time
	// note is shown after the count: a second rate, such as evaluations
	// per second beside moves.
	note string
	// estimate: total is a guess, said with "about", and the end line
	// gives the count alone.
	estimate bool
}

// Start begins a task of total steps described by what.
func (r *Reporter) Start(total int, what string) *Task {
	return r.start(total, what, false)
}

// StartEstimate begins a task whose size is a guess, such as the moves of
// games not played yet.
func (r *Reporter) StartEstimate(total int, what string) *Task {
	return r.start(total, what, true)
}

func (r *Reporter) start(total int, what string, estimate bool) *Task {
	t := &Task{r: r, what: what, total: total, start: time.Now(), estimate: estimate}
	t.last = t.start
	switch {
	case r == nil || r.w == nil:
	case r.terminal:
		t.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(r.w),
			progressbar.OptionSetDescription(what),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
	case estimate:
		fmt.Fprintf(r.w, "%s: started, about %d to do\n", what, total)
	default:
		fmt.Fprintf(r.w, "%s: started, %d to do\n", what, total)
	}
	return t
}

// Add counts n more steps done. A task whose size was an estimate grows
// when the work passes it.
func (t *Task) Add(n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.done += n
	if t.done > t.total {
		t.total = t.done
		if t.bar != nil {
			t.bar.ChangeMax(t.total)
		}
	}
	switch {
	case t.bar != nil:
		t.bar.Add(n)
	case t.r != nil && t.r.w != nil:
		if now := time.Now(); now.Sub(t.last) >= t.r.every {
			t.last = now
			of := ""
			if t.estimate {
				of = "about "
			}
			fmt.Fprintf(t.r.w, "%s: %d of %s%d, %.1f/s%s\n", t.what, t.done, of, t.total, t.rate(now), t.suffix())
		}
	}
}

// Note sets what is shown after the count from now on (empty: nothing).
func (t *Task) Note(note string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if note == t.note {
		return
	}
	t.note = note
	if t.bar != nil {
		t.bar.Describe(t.what + t.suffix())
	}
}

func (t *Task) suffix() string {
	if t.note == "" {
		return ""
	}
	return ", " + t.note
}

func (t *Task) rate(now time.Time) float64 {
	if s := now.Sub(t.start).Seconds(); s > 0 {
		return float64(t.done) / s
	}
	return 0
}

// Close ends the task: the bar is cleared; a plain report says what was
// done in how long.
func (t *Task) Close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.bar != nil:
		t.bar.Close()
	case t.r != nil && t.r.w != nil:
		now := time.Now()
		count := fmt.Sprintf("%d of %d", t.done, t.total)
		if t.estimate {
			count = fmt.Sprint(t.done)
		}
		fmt.Fprintf(t.r.w, "%s: %s in %.1f s (%.1f/s%s)\n", t.what, count, now.Sub(t.start).Seconds(), t.rate(now), t.suffix())
	}
}
