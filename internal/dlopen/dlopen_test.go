package dlopen

import (
	"strings"
	"sync"
	"testing"

	"github.com/ebitengine/purego"
)

// TestOpenKeepsTheReason: a library that is not there fails with dlerror's
// reason every time, also from many goroutines at once, when the runtime
// is most likely to move them between threads.
func TestOpenKeepsTheReason(t *testing.T) {
	const name = "libflipzero-absent.so.0"
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if _, err := Open(name, purego.RTLD_NOW|purego.RTLD_LOCAL); err == nil || !strings.Contains(err.Error(), name) {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("opening %s: error %v, want dlerror's reason naming it", name, err)
	}
}
