//go:build !windows

package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// replace renames tmp over path, then syncs the folder, so that the
// rename survives a crash.
func replace(tmp, path string) error {
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename into %s: %w", path, err)
	}
	dir := filepath.Dir(path)
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync folder %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync folder %s: %w", dir, err)
	}
	return nil
}
