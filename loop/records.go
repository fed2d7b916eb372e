package loop

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/internal/atomicfile"
	"github.com/flipzero/flipzero/runfolder"
	"github.com/flipzero/flipzero/selfplay"
)

// A generation's self-play games are kept one a line in the format of
// flipzero convert (the moves joined by ';', a tab, the outcome, a tab,
// the game), so the run's page can replay them and other tools can read
// them; they cost a fraction of the shard that holds their positions.

// GameLine is one game of a record file (runfolder.GameLine).
type GameLine = runfolder.GameLine

// FormatGame is the record line of a finished game, without its newline:
// moves separated by ";", a tab, the outcome, a tab, the game.
func FormatGame(g env.Game, r selfplay.GameRecord) string {
	moves := make([]string, len(r.Actions))
	for i, a := range r.Actions {
		moves[i] = g.FormatAction(a)
	}
	outcome := r.Result
	if outcome == "" {
		outcome = "draw"
		if r.Winner != env.NoPlayer {
			outcome = g.PlayerName(r.Winner)
		}
	}
	return strings.Join(moves, ";") + "\t" + outcome + "\t" + g.Name()
}

// writeGames writes a generation's record lines.
func writeGames(path string, lines []string) error {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return atomicfile.WriteBytes(path, []byte(b.String()))
}

// ReadGames reads at most limit games of a record file
// (runfolder.ReadGames).
func ReadGames(path string, limit int, maxBytes int64) ([]GameLine, int, error) {
	return runfolder.ReadGames(path, limit, maxBytes)
}

// The status file is runfolder.Status; the loop writes it through
// statusFile.
type Status = runfolder.Status

// The phases of a generation as the status file names them.
const (
	PhaseSelfPlay = runfolder.PhaseSelfPlay
	PhaseTraining = runfolder.PhaseTraining
	PhaseArena    = runfolder.PhaseArena
	PhaseStopped  = runfolder.PhaseStopped
)

// ReadStatus reads a run's status file.
func ReadStatus(path string) (Status, error) { return runfolder.ReadStatus(path) }

// statusFile writes the status as the loop goes. Writing it is best
// effort: the page is a view of the run, and a run must not stop because
// its view could not be updated (the checkpoint and metrics writes report
// a full disk).
type statusFile struct {
	mu      sync.Mutex
	path    string
	s       Status
	written time.Time
}

const (
	statusEvery = time.Second
	// statusHeartbeat is how often a running loop rewrites its status
	// when nothing else has.
	statusHeartbeat = 2 * time.Second
)

func newStatusFile(path string) *statusFile {
	host, _ := os.Hostname()
	return &statusFile{path: path, s: Status{Heartbeat: statusHeartbeat.Seconds(), Host: host, PID: os.Getpid()}}
}

// phase starts a phase of total units (0: no count).
func (f *statusFile) phase(gen int, phase string, total int, unit string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now().UTC()
	if gen != f.s.Generation || f.s.GenerationStarted == "" {
		f.s.GenerationStarted = now.Format(time.RFC3339Nano)
	}
	f.s.Generation, f.s.Phase, f.s.Done, f.s.Total, f.s.Unit = gen, phase, 0, total, unit
	f.s.PhaseStarted = now.Format(time.RFC3339Nano)
	f.write(now)
}

// current is the status as last set.
func (f *statusFile) current() Status {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.s
}

// progress records done of the phase's total, written when a second has
// passed since the last write or the phase is complete. A count past an
// estimated total raises the total.
func (f *statusFile) progress(done int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.s.Done = done
	f.s.Total = max(f.s.Total, done)
	if now := time.Now().UTC(); now.Sub(f.written) >= statusEvery || done == f.s.Total {
		f.write(now)
	}
}

// heartbeat rewrites the status every statusHeartbeat until ctx ends.
func (f *statusFile) heartbeat(ctx context.Context) {
	tick := time.NewTicker(statusHeartbeat)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			f.mu.Lock()
			if now.Sub(f.written) >= statusHeartbeat/2 {
				f.write(now.UTC())
			}
			f.mu.Unlock()
		}
	}
}

func (f *statusFile) write(now time.Time) {
	f.s.Updated = now.Format(time.RFC3339Nano)
	raw, err := json.Marshal(f.s)
	if err != nil {
		return
	}
	if atomicfile.WriteBytes(f.path, append(raw, '\n')) == nil {
		f.written = now
	}
}
