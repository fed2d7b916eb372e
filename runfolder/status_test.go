package runfolder

import (
	"testing"
	"time"
)

func TestStatusSilent(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	at := func(ago time.Duration) string { return now.Add(-ago).Format(time.RFC3339Nano) }
	for _, tc := range []struct {
		s    Status
		want bool
	}{
		{Status{Phase: PhaseSelfPlay, Heartbeat: 2, Updated: at(3 * time.Second)}, false},
		{Status{Phase: PhaseSelfPlay, Heartbeat: 2, Updated: at(11 * time.Second)}, true},
		{Status{Phase: PhaseTraining, Heartbeat: 0.1, Updated: at(5 * time.Second)}, false}, // ten seconds at least
		{Status{Phase: PhaseSelfPlay, Heartbeat: 30, Updated: at(100 * time.Second)}, false},
		{Status{Phase: PhaseStopped, Heartbeat: 2, Updated: at(time.Hour)}, false},
		{Status{Phase: PhaseSelfPlay, Updated: at(time.Hour)}, false}, // a loop that wrote no heartbeat
		{Status{Phase: PhaseSelfPlay, Heartbeat: 2, Updated: "yesterday"}, false},
	} {
		if got := tc.s.Silent(now); got != tc.want {
			t.Errorf("%+v: silent %v, want %v", tc.s, got, tc.want)
		}
	}
}
