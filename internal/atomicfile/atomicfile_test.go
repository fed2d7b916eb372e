package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestWriteReplacesWhole(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := WriteBytes(path, []byte("old")); err != nil {
		t.Fatal(err)
	}
	if err := WriteBytes(path, []byte("new contents")); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "new contents" {
		t.Fatalf("read %q, %v", got, err)
	}
}

func TestFailedWriteKeepsOldFileAndLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := WriteBytes(path, []byte("old")); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(path, func(w io.Writer) error {
		w.Write([]byte("half"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want boom", err)
	}
	got, _ := os.ReadFile(path)
	if string(got) != "old" {
		t.Errorf("old file changed to %q", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("%d files in the folder, want only the old one", len(entries))
	}
}

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
