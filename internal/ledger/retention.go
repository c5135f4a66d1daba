package ledger

import (
	"context"
	"time"

	"github.com/tollgate/tollgate/internal/clock"
)

// Retainer is a Sink that keeps its detail records for a limited time: a
// store.Store given database.ledger_retention. While a Recorder writes to
// it, the Recorder deletes the records older than that, in small batches.
// The store's hourly roll-ups keep counting them: usage and budgets stay
// exact to the hour.
type Retainer interface {
	// LedgerRetention is how long records are kept; 0 keeps them.
	LedgerRetention() time.Duration
	// DeleteRequestsBefore deletes at most limit records made before
	// before, oldest first, and says how many it deleted.
	DeleteRequestsBefore(ctx context.Context, before time.Time, limit int) (int64, error)
}

// retention tunes the deletion of old records.
type retention struct {
	every time.Duration    // between passes
	batch int              // records per DELETE: each statement short
	pause time.Duration    // between DELETEs, for the writer's turn
	now   func() time.Time // the clock, injected by tests
}

var defaultRetention = retention{every: time.Hour, batch: 5000, pause: 200 * time.Millisecond, now: clock.Now}

// startRetention runs passes over p every r.ret.every from now until
// Close; the first pass runs at once.
func (r *Recorder) startRetention(p Retainer, keep time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	r.retainStop, r.retained = cancel, make(chan struct{})
	go func() {
		defer close(r.retained)
		t := time.NewTimer(0)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			r.prune(ctx, p, keep)
			t.Reset(r.ret.every)
		}
	}()
}

// prune deletes the records made before the hour that holds now - keep,
// batch by batch. The cut is at an hour's start so that every hour either
// keeps all its records or none (once the pass ends): a window's edge
// inside an hour is then read in full, or not at all.
func (r *Recorder) prune(ctx context.Context, p Retainer, keep time.Duration) int64 {
	cut := r.ret.now().Add(-keep).UTC().Truncate(time.Hour)
	var total int64
	for {
		n, err := p.DeleteRequestsBefore(ctx, cut, r.ret.batch)
		total += n
		if err != nil {
			if ctx.Err() == nil {
				r.log.Warn("ledger retention: deleting old records failed; retrying at the next pass", "before", cut, "deleted", total, "error", err)
			}
			return total
		}
		if n < int64(r.ret.batch) {
			break
		}
		select {
		case <-ctx.Done():
			return total
		case <-time.After(r.ret.pause):
		}
	}
	if total > 0 {
		r.log.Info("ledger retention: deleted old records (their hourly usage roll-ups stay)", "deleted", total, "before", cut)
	}
	return total
}
