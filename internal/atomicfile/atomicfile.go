// Package atomicfile writes files so that a reader, or a restart after a
// crash, sees either the old file or the whole new one, never a part.
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// Write creates path through write: the bytes go to a temporary file in
// the same folder, which is synced, closed and renamed over path, the
// rename itself made to survive a crash (replace). The file
// gets the usual mode, 0666 less the umask (0644 under umask 022), as
// any file a program creates.
func Write(path string, write func(w io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	tmp, err := createTemp(dir, "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, folderError(dir, err))
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	buffered := bufio.NewWriterSize(tmp, 1<<16)
	if err := write(buffered); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := buffered.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	return replace(tmp.Name(), path)
}

// createTemp creates a new file prefix+random in dir with mode 0666, which
// the umask narrows (os.CreateTemp makes 0600 files, which a rename would
// keep).
func createTemp(dir, prefix string) (*os.File, error) {
	for try := 0; ; try++ {
		name := filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) && try < 100 {
			continue
		}
		return f, err
	}
}

// folderError says why no file could be created in dir in the user's
// terms, the folder's, rather than the temporary file's, whose name the
// user never gave: "folder out does not exist", "out is not a folder".
// The error still wraps the system's (errors.Is(err, fs.ErrNotExist)).
func folderError(dir string, err error) error {
	var pathErr *fs.PathError
	if !errors.As(err, &pathErr) {
		return err
	}
	info, statErr := os.Stat(dir)
	switch {
	case errors.Is(statErr, fs.ErrNotExist):
		return reason{fmt.Sprintf("folder %s does not exist", dir), pathErr.Err}
	case statErr == nil && !info.IsDir():
		return reason{fmt.Sprintf("%s is not a folder", dir), pathErr.Err}
	}
	return fmt.Errorf("create a file in folder %s: %w", dir, pathErr.Err)
}

// reason is an error said in words of its own that still wraps the
// system's error it stands for.
type reason struct {
	text string
	err  error
}

func (r reason) Error() string { return r.text }
func (r reason) Unwrap() error { return r.err }

// WriteBytes writes data to path atomically.
func WriteBytes(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
