package limiter

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// errRedisDown is what calls to Redis fail with, at once and without
// touching the network, while Redis is known to be unreachable.
var errRedisDown = errors.New("redis is unreachable (probing it in the background)")

// Probes of an unreachable Redis back off exponentially from probeMin to
// probeMax, so that an outage costs a few connection attempts, not one per
// request.
const (
	probeMin     = 100 * time.Millisecond
	probeMax     = 5 * time.Second
	probeTimeout = time.Second
)

// health tracks whether Redis answers. The first call that fails to reach
// it marks it down; calls then fail fast until one background probe, with
// backoff, gets an answer.
type health struct {
	// down holds the error calls fail with while Redis is down; nil when up.
	down atomicErr

	probe func(context.Context) error
	// wait returns after d, or false when stop closes first; rnd(n) is
	// in [0, n). Both are replaced in tests.
	wait func(d time.Duration, stop <-chan struct{}) bool
	rnd  func(n int64) int64

	mu     sync.Mutex
	onUp   func(probes int, downFor time.Duration)
	closed bool
	stop   chan struct{}
	wg     sync.WaitGroup
}

func newHealth(probe func(context.Context) error) *health {
	return &health{probe: probe, wait: sleep, rnd: rand.Int64N, stop: make(chan struct{})}
}

func sleep(d time.Duration, stop <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-stop:
		return false
	}
}

// check is the error to fail a call with, without sending it: nil when up.
func (h *health) check() error { return h.down.load() }

func (h *health) up() bool { return h.down.load() == nil }

// observe marks Redis down when err says that it could not be reached.
func (h *health) observe(ctx context.Context, err error) {
	if !unreachable(ctx, err) {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || h.down.load() != nil {
		return
	}
	h.down.store(fmt.Errorf("%w: %v", errRedisDown, err))
	h.wg.Add(1)
	go h.probeLoop(time.Now())
}

// unreachable tells a failure to reach Redis from an answer: a reply
// error means Redis is there, a caller that gave up says nothing about
// Redis, and a busy pool is load (the timeouts bound the wait).
func unreachable(ctx context.Context, err error) bool {
	switch {
	case err == nil, ctx.Err() != nil, errors.Is(err, redis.ErrPoolTimeout), errors.Is(err, errRedisDown):
		return false
	case redis.IsLoadingError(err):
		return true // restarting: it answers nothing else until loaded
	}
	var reply redis.Error
	return !errors.As(err, &reply)
}

func (h *health) probeLoop(since time.Time) {
	defer h.wg.Done()
	for n := 0; ; n++ {
		if !h.wait(probeDelay(n, h.rnd), h.stop) {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
		err := h.probe(ctx)
		cancel()
		if err != nil {
			h.down.store(fmt.Errorf("%w: %v", errRedisDown, err))
			continue
		}
		h.down.store(nil)
		h.mu.Lock()
		onUp := h.onUp
		h.mu.Unlock()
		if onUp != nil {
			onUp(n+1, time.Since(since))
		}
		return
	}
}

// probeDelay is the wait before probe n (from 0): probeMin doubled n
// times, at most probeMax, drawn from the upper half of that so that
// replicas do not probe in step.
func probeDelay(n int, rnd func(int64) int64) time.Duration {
	d := probeMax
	if n < 16 {
		d = min(probeMin<<n, probeMax)
	}
	return d/2 + time.Duration(rnd(int64(d/2)+1))
}

// watch calls f each time a probe finds Redis again.
func (h *health) watch(f func(probes int, downFor time.Duration)) {
	h.mu.Lock()
	h.onUp = f
	h.mu.Unlock()
}

func (h *health) close() {
	h.mu.Lock()
	if !h.closed {
		h.closed = true
		close(h.stop)
	}
	h.mu.Unlock()
	h.wg.Wait()
}

// atomicErr is an error read on every call without a lock.
type atomicErr struct{ p atomic.Pointer[error] }

func (a *atomicErr) load() error {
	if e := a.p.Load(); e != nil {
		return *e
	}
	return nil
}

func (a *atomicErr) store(err error) {
	if err == nil {
		a.p.Store(nil)
		return
	}
	a.p.Store(&err)
}
