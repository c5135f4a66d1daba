package oidc

import (
	"context"
	"sync"
	"time"
)

// fetched holds a value fetched from the IdP. One fetch runs at a time,
// and attempts are spaced: after a success no new one for refetch, after
// a failure none for retry. So a flood of requests (tokens with made-up
// key ids, or an IdP that is down) makes at most one fetch per interval.
type fetched[T any] struct {
	refetch, retry time.Duration

	mu       sync.Mutex
	have     bool
	val      T
	lastErr  error
	lastTry  time.Time
	inflight chan struct{}
}

// get returns the value, fetching it when there is none yet, or when
// stale says the one held will not do and the spacing allows. It may
// return a value together with the error of the last attempt to renew it.
func (f *fetched[T]) get(ctx context.Context, now func() time.Time, stale func(T) bool, fetch func(context.Context) (T, error)) (T, error) {
	for {
		f.mu.Lock()
		if f.have && (stale == nil || !stale(f.val)) {
			v := f.val
			f.mu.Unlock()
			return v, nil
		}
		if ch := f.inflight; ch != nil {
			f.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				var zero T
				return zero, ctx.Err()
			}
		}
		t := now()
		wait := f.refetch
		if f.lastErr != nil {
			wait = f.retry
		}
		if !f.lastTry.IsZero() && t.Sub(f.lastTry) < wait {
			v, err := f.val, f.lastErr
			f.mu.Unlock()
			return v, err
		}
		ch := make(chan struct{})
		f.inflight = ch
		prevTry := f.lastTry
		f.lastTry = t
		f.mu.Unlock()

		v, err := fetch(ctx)

		f.mu.Lock()
		switch {
		case err == nil:
			f.val, f.have, f.lastErr = v, true, nil
		case ctx.Err() != nil:
			// Our caller gave up; that says nothing about the IdP.
			f.lastTry = prevTry
		default:
			f.lastErr = err
		}
		f.inflight = nil
		close(ch)
		if err != nil {
			v = f.val
		}
		f.mu.Unlock()
		return v, err
	}
}
