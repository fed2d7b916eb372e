package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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

// TestWriteIntoNoFolderNamesTheFolder: a write into a folder that is
// missing, or is a file, says so of the folder the caller named, not of
// the temporary file the caller never saw, and leaves nothing behind.
func TestWriteIntoNoFolderNamesTheFolder(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	tests := []struct {
		path string
		want string
		is   error
	}{
		{filepath.Join(missing, "m.fznet"), "write " + filepath.Join(missing, "m.fznet") + ": folder " + missing + " does not exist", fs.ErrNotExist},
		{filepath.Join(missing, "deeper", "m.fznet"), "folder " + filepath.Join(missing, "deeper") + " does not exist", fs.ErrNotExist},
		{filepath.Join(file, "m.fznet"), "write " + filepath.Join(file, "m.fznet") + ": " + file + " is not a folder", syscall.ENOTDIR},
	}
	for _, tt := range tests {
		err := WriteBytes(tt.path, []byte("model"))
		if err == nil || !strings.HasSuffix(err.Error(), tt.want) || strings.Contains(err.Error(), ".tmp-") {
			t.Errorf("%s: error %v, want one ending %q and no temporary name", tt.path, err, tt.want)
		}
		if !errors.Is(err, tt.is) {
			t.Errorf("%s: error %v is not %v", tt.path, err, tt.is)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("%d entries in the folder, want only the file", len(entries))
	}
}
