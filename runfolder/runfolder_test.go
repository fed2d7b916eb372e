package runfolder

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheck: each way a path can fail to be a run folder gets its own
// one-line error naming the path, and only a missing folder or one with
// no config is "no run" (where a new run may start).
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "README.md")
	if err := os.WriteFile(file, []byte("# a file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := Folder(filepath.Join(dir, "run"))
	if err := run.Create(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(run.Config(), []byte("game: tictactoe\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path  string
		want  string // "" for no error
		noRun bool
	}{
		{string(run), "", false},
		{file, file + " is a file, not a run folder", false},
		{filepath.Join(dir, "missing"), filepath.Join(dir, "missing") + " does not exist", true},
		{empty, empty + " is not a run folder (no config.yaml)", true},
		{filepath.Join(file, "run"), filepath.Join(file, "run") + ": " + file + " is a file, not a folder", false},
		{filepath.Join(file, "a", "run"), filepath.Join(file, "a", "run") + ": " + file + " is a file, not a folder", false},
	}
	for _, tt := range tests {
		err := Folder(tt.path).Check()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v, want a run", tt.path, err)
		case tt.want != "" && (err == nil || err.Error() != tt.want):
			t.Errorf("%s: error %v, want %q", tt.path, err, tt.want)
		case err != nil && errors.Is(err, ErrNoRun) != tt.noRun:
			t.Errorf("%s: errors.Is(%v, ErrNoRun) = %v, want %v", tt.path, err, !tt.noRun, tt.noRun)
		case err != nil && strings.Contains(err.Error(), "\n"):
			t.Errorf("%s: error %q is more than a line", tt.path, err)
		}
	}
}
