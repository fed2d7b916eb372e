package dlopen

import (
	"strings"
	"sync"
	"testing"
)

// TestOpenKeepsTheReason: a library that is not there fails with the
// loader's reason naming it, and NotFound says it is absent, every time,
// also from many goroutines at once, when the runtime is most likely to
// move them between threads (dlerror's message is the thread's).
func TestOpenKeepsTheReason(t *testing.T) {
	const name = "libflipzero-absent.so.0"
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if _, err := Open(name, Local); err == nil || !strings.Contains(err.Error(), name) || !NotFound(err) {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("opening %s: error %v, want the loader's reason naming it, one NotFound accepts", name, err)
	}
}
