package ledger

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/store/storetest"
)

// TestRetentionDeletesOldRecords: a Recorder on a store with a retention
// deletes, batch by batch, the records made before the hour that holds
// now - retention, and only them; usage over whole hours is as before.
func TestRetentionDeletesOldRecords(t *testing.T) {
	ctx := context.Background()
	// The injected now: 10:40 UTC on a fixed day. With 48h kept, the cut
	// is at 10:00 two days before, not at 10:40.
	now := time.Date(2026, 11, 22, 10, 40, 0, 0, time.UTC)
	cut := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	var recs []store.Request
	for i := range 300 {
		r := rec(i)
		r.Endpoint, r.CanonicalModel = "/v1/messages", "m"
		r.Time = cut.Add(time.Duration(i-150) * 47 * time.Second) // from 1h57m before the cut to as long after
		recs = append(recs, r)
	}
	old := 0
	for _, r := range recs {
		if r.Time.Before(cut) {
			old++
		}
	}
	for name, s := range storetest.Open(t) {
		t.Run(name, func(t *testing.T) {
			if err := s.InsertRequests(ctx, recs); err != nil {
				t.Fatal(err)
			}
			window := store.UsageFilter{Since: cut.Add(-3 * time.Hour), Until: cut.Add(3 * time.Hour), GroupBy: store.ByModel}
			before, err := s.Usage(ctx, window)
			if err != nil {
				t.Fatal(err)
			}
			s.SetLedgerRetention(48 * time.Hour)
			defer s.SetLedgerRetention(0)
			counted := &countingRetainer{Retainer: s}
			r, err := New(sinkRetainer{s, counted}, Options{SpillPath: filepath.Join(t.TempDir(), "spill"),
				retention: &retention{every: time.Hour, batch: 40, pause: time.Millisecond, now: func() time.Time { return now }}})
			if err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(20 * time.Second)
			for counted.total() < int64(old) && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if err := r.Close(ctx); err != nil {
				t.Fatal(err)
			}
			if got := counted.total(); got != int64(old) {
				t.Fatalf("deleted %d records, want the %d made before %s", got, old, cut)
			}
			if calls := counted.callCount(); calls < old/40+1 {
				t.Errorf("%d DELETEs for %d records in batches of 40", calls, old)
			}
			left, err := s.Requests(ctx, store.RequestFilter{Limit: 1000})
			if err != nil || len(left) != len(recs)-old {
				t.Fatalf("%d records left, %v; want %d", len(left), err, len(recs)-old)
			}
			for _, l := range left {
				if l.Time.Before(cut) {
					t.Errorf("%s, made at %s before the cut, is left", l.ID, l.Time)
				}
			}
			after, err := s.Usage(ctx, window)
			if d := cmp.Diff(before, after); err != nil || d != "" || len(after) != 1 || after[0].Requests != 300 {
				t.Errorf("usage over whole hours after the retention (-before +after):\n%s %v", d, err)
			}
		})
	}
}

// TestNoRetention: without a retention nothing is deleted.
func TestNoRetention(t *testing.T) {
	s := sqliteStore(t)
	counted := &countingRetainer{Retainer: s}
	r, err := New(sinkRetainer{s, counted}, Options{SpillPath: filepath.Join(t.TempDir(), "spill"),
		retention: &retention{every: time.Millisecond, batch: 1, pause: time.Millisecond, now: time.Now}})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if err := r.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := counted.callCount(); n != 0 {
		t.Errorf("%d DELETEs with no retention", n)
	}
}

// sinkRetainer is a store whose deletions are counted.
type sinkRetainer struct {
	*store.Store
	r *countingRetainer
}

func (s sinkRetainer) DeleteRequestsBefore(ctx context.Context, before time.Time, limit int) (int64, error) {
	return s.r.DeleteRequestsBefore(ctx, before, limit)
}

type countingRetainer struct {
	Retainer
	mu      sync.Mutex
	calls   int
	deleted int64
}

func (c *countingRetainer) DeleteRequestsBefore(ctx context.Context, before time.Time, limit int) (int64, error) {
	n, err := c.Retainer.DeleteRequestsBefore(ctx, before, limit)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	c.deleted += n
	if n > int64(limit) {
		panic(fmt.Sprintf("deleted %d, over the batch of %d", n, limit))
	}
	return n, err
}

func (c *countingRetainer) total() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.deleted
}

func (c *countingRetainer) callCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls
}
