//go:build unix

package atomicfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestWriteGivesTheUsualMode: under umask 022 a written file is 0644, as
// any file a program creates, not the 0600 of a temporary file.
func TestWriteGivesTheUsualMode(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	for _, replace := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "f")
		if replace {
			if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := WriteBytes(path, []byte("x")); err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != 0o644 {
			t.Errorf("replacing %v: mode %v, want 0644", replace, info.Mode().Perm())
		}
	}
}
