package atomicfile

import (
	"fmt"
	"os"

	"golang.org/x/sys/windows"
)

// replace renames tmp over path and returns once the rename is on disk:
// Windows cannot sync a folder (FlushFileBuffers needs a handle open for
// writing, which a folder's never is), so MoveFileEx writes the rename
// through instead.
func replace(tmp, path string) error {
	from, err := windows.UTF16PtrFromString(tmp)
	if err != nil {
		return fmt.Errorf("rename into %s: %w", path, err)
	}
	to, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return fmt.Errorf("rename into %s: %w", path, err)
	}
	if err := windows.MoveFileEx(from, to, windows.MOVEFILE_REPLACE_EXISTING|windows.MOVEFILE_WRITE_THROUGH); err != nil {
		return fmt.Errorf("rename into %s: %w", path, &os.LinkError{Op: "rename", Old: tmp, New: path, Err: err})
	}
	return nil
}
