package gateway

import (
	"sync"
	"sync/atomic"

	"github.com/tollgate/tollgate/internal/route"
)

// generation is what a configuration reload replaces: the route table
// (models, providers, prices, breakers) and the limits. A request takes
// the generation current when it starts and keeps it to its end, so that
// one request never mixes two configurations and a stream in flight goes
// on with the providers it started with.
type generation struct {
	routes *route.Table
	limits Limits

	users   atomic.Int64 // requests holding it
	retired atomic.Bool  // a newer one is current
	once    sync.Once
	drained chan struct{} // closed once retired and no request holds it
}

func newGeneration(routes *route.Table, limits Limits) *generation {
	return &generation{routes: routes, limits: limits, drained: make(chan struct{})}
}

// acquire returns the current generation, counted as held until release.
func (g *Gateway) acquire() *generation {
	for {
		gen := g.gen.Load()
		gen.users.Add(1)
		// Checked after counting: Swap marks the old generation retired
		// before it looks at the count, so either Swap sees this request
		// or this request sees retired and takes the new generation.
		if !gen.retired.Load() {
			return gen
		}
		gen.release()
	}
}

func (gen *generation) release() {
	if gen.users.Add(-1) == 0 && gen.retired.Load() {
		gen.once.Do(func() { close(gen.drained) })
	}
}

// Swap makes routes and limits apply to the requests that start from now
// on; requests in flight keep those they started with. The channel it
// returns is closed when the last request of the previous generation has
// ended (at once when there is none), when the providers it alone used
// may close their idle connections.
func (g *Gateway) Swap(routes *route.Table, limits Limits) <-chan struct{} {
	old := g.gen.Swap(newGeneration(routes, limits))
	old.retired.Store(true)
	if old.users.Load() == 0 {
		old.once.Do(func() { close(old.drained) })
	}
	return old.drained
}

// Routes is the route table in force (for pages that show it, such as the
// console's): read without waiting for a reload being prepared.
func (g *Gateway) Routes() *route.Table { return g.gen.Load().routes }
