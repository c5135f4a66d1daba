package cli

import (
	"context"
	"net/http"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/tollgate/tollgate/internal/exepages"
)

// Memory a burst of requests made the Go heap grow to stays with the
// process after it: once requests stop, nothing allocates, so no
// collection runs (the runtime forces one only every two minutes) and the
// garbage of the last requests, and the heap it sits in, stay resident.
// idleRelease notices the end of a burst, a whole idleCheck with no
// request started after one with some, and then collects and returns
// what is free to the operating system at once: one collection per
// burst, when there is nothing else to do. Streams still in flight are
// not requests started, and lose nothing by it.
const idleCheck = 10 * time.Second

type idleRelease struct {
	started atomic.Uint64 // requests started, ever
	seen    uint64        // started at the last tick
	busy    bool          // a request started between the last two ticks
}

// wrap counts the requests h serves.
func (i *idleRelease) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i.started.Add(1)
		h.ServeHTTP(w, r)
	})
}

// tick reports, once an interval has passed, whether a burst has just
// ended: no request started in the interval, and some in the one before.
func (i *idleRelease) tick() bool {
	n := i.started.Load()
	busy := n != i.seen
	end := i.busy && !busy
	i.seen, i.busy = n, busy
	return end
}

// run calls release at each tick that ends a burst, until ctx ends.
func (i *idleRelease) run(ctx context.Context, ticks <-chan time.Time, release func()) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticks:
			if i.tick() {
				release()
			}
		}
	}
}

// releaseMemory collects and returns the heap's free pages to the
// operating system: about 5 ms of one core for a heap of a few MiB live
// and 8 MiB free (BenchmarkReleaseMemory), once per burst.
func releaseMemory() {
	debug.FreeOSMemory()
	// And the executable's pages the burst ran: they stay in the page
	// cache, and the next request maps back what it runs (minor faults).
	exepages.Trim(false)
}
