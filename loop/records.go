package loop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// GameLine is one self-play game as its record line gives it.
type GameLine struct {
	Moves []string
	// Outcome is the winner's name (white, black) or draw, or a
	// one-player game's "score N"; the game may have ended by
	// resignation before the rules end it.
	Outcome string
	Game    string
}

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

// ReadGames reads at most limit games of a record file, and no more than
// maxBytes of it, under the run folder's policy for record files
// (runfolder.ReadRecords): the file may come from elsewhere, and a line
// that is not a record (no outcome after a tab) is skipped and counted.
func ReadGames(path string, limit int, maxBytes int64) (games []GameLine, skipped int, err error) {
	games, skipped, err = runfolder.ReadRecords(path, maxBytes, runfolder.Start, parseGameLine)
	if err != nil {
		return nil, 0, fmt.Errorf("games: %w", err)
	}
	return games[:min(len(games), limit)], skipped, nil
}

// parseGameLine reads a line as FormatGame writes it: moves separated by
// ";", a tab, the outcome, and (in newer files) a tab and the game.
func parseGameLine(line []byte) (GameLine, error) {
	fields := strings.Split(string(line), "\t")
	if len(fields) < 2 {
		return GameLine{}, errors.New("no outcome after a tab")
	}
	g := GameLine{Outcome: fields[1]}
	if len(fields) > 2 {
		g.Game = fields[2]
	}
	if fields[0] != "" {
		g.Moves = strings.Split(fields[0], ";")
	}
	return g, nil
}

// The phases of a generation as the status file names them.
const (
	PhaseSelfPlay = "self-play"
	PhaseTraining = "training"
	PhaseArena    = "arena"
	// PhaseStopped: the loop has ended (a limit, Ctrl-C, an error); a
	// loop killed outright leaves its last phase, and Updated tells.
	PhaseStopped = "stopped"
)

// Status is the run's status.json: the generation in progress, for the
// run's page. The loop writes it whole at each phase change, at most once
// a second as the phase progresses, and at least every Heartbeat seconds
// while it runs, so that a loop that stopped without a word (killed,
// crashed) is told from one that is busy.
type Status struct {
	Generation int    `json:"generation"`
	Phase      string `json:"phase"`
	// GenerationStarted and PhaseStarted are RFC 3339 times.
	GenerationStarted string `json:"generation_started"`
	PhaseStarted      string `json:"phase_started"`
	// Done of Total Unit: moves (an estimate, from the last generation's
	// games) in self-play, games in the arena and from remote workers,
	// steps in training.
	Done    int    `json:"done"`
	Total   int    `json:"total"`
	Unit    string `json:"unit,omitempty"`
	Updated string `json:"updated"`
	// Heartbeat is the most seconds between two writes while the loop
	// runs; Host and PID say which process writes.
	Heartbeat float64 `json:"heartbeat_seconds,omitempty"`
	Host      string  `json:"host,omitempty"`
	PID       int     `json:"pid,omitempty"`
}

// Silent says that a status not marked stopped has not been written for
// several heartbeats at now: its loop stopped without a word.
func (s Status) Silent(now time.Time) bool {
	if s.Phase == PhaseStopped || s.Heartbeat <= 0 {
		return false
	}
	updated, err := time.Parse(time.RFC3339Nano, s.Updated)
	if err != nil {
		return false
	}
	return now.Sub(updated).Seconds() > max(silentBeats*s.Heartbeat, minSilence.Seconds())
}

// A loop is silent after five missed heartbeats, and never sooner than
// ten seconds: a busy machine may be slow to schedule the writer.
const (
	silentBeats = 5
	minSilence  = 10 * time.Second
)

// ReadStatus reads a run's status file.
func ReadStatus(path string) (Status, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Status{}, fmt.Errorf("status: %w", err)
	}
	var s Status
	if err := json.Unmarshal(raw, &s); err != nil {
		return Status{}, fmt.Errorf("status %s: %w", path, err)
	}
	return s, nil
}

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
