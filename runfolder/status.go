package runfolder

import (
	"encoding/json"
	"fmt"
	"os"
	"time"
)

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
