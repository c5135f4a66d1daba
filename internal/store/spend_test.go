package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/store"
)

func TestSpend(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	cost := func(n int64) *int64 { return &n }
	recs := []store.Request{
		{ID: "req_1", Time: t0, KeyID: "k1", Model: "m", CostNanoUSD: cost(100)},
		{ID: "req_2", Time: t0.Add(time.Minute), KeyID: "k1", Model: "alias", CostNanoUSD: cost(20)},
		{ID: "req_3", Time: t0.Add(time.Hour), KeyID: "k1", Model: "other", CostNanoUSD: cost(3)},
		{ID: "req_4", Time: t0.Add(time.Hour), KeyID: "k2", Model: "m", CostNanoUSD: cost(4000)},
		{ID: "req_5", Time: t0.Add(time.Hour), KeyID: "k1", Model: "m"}, // unpriced
		{ID: "req_6", Time: t0.Add(-time.Hour), KeyID: "k1", Model: "m", CostNanoUSD: cost(50000)},
	}
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			if err := s.InsertRequests(ctx, recs); err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct {
				key    string
				models []string
				want   int64
			}{
				{"k1", nil, 123},
				{"k1", []string{"m", "alias"}, 120},
				{"", []string{"m"}, 4100},
				{"", nil, 4123},
				{"k3", nil, 0},
			} {
				got, _, err := s.Spend(ctx, tc.key, tc.models, t0, 0)
				if err != nil || got != tc.want {
					t.Errorf("Spend(%q, %v) = %d, %v; want %d", tc.key, tc.models, got, err, tc.want)
				}
			}
			total, bySlot, err := s.Spend(ctx, "k1", nil, t0, 30*time.Minute)
			slot := t0.UnixMilli() / (30 * time.Minute).Milliseconds()
			if err != nil || total != 123 || len(bySlot) != 2 || bySlot[slot] != 120 || bySlot[slot+2] != 3 {
				t.Errorf("by slot: %d %v %v", total, bySlot, err)
			}
		})
	}
}

// A budget on a model counts what was served as it, whatever name the
// client sent: a name a pattern model (claude-*) matched counts for it,
// in the records and in the hourly roll-ups alike.
func TestSpendCountsPatternHits(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 22, 10, 30, 0, 0, time.UTC)
	cost := func(n int64) *int64 { return &n }
	rec := func(id string, at time.Time, model, canonical string, c int64) store.Request {
		return store.Request{ID: id, Time: at, KeyID: "k1", Endpoint: "/v1/messages", Model: model, CanonicalModel: canonical, CostNanoUSD: cost(c)}
	}
	recs := []store.Request{
		rec("req_1", t0, "claude-opus-4-8", "claude-*", 100),                // before the whole hours: from the records
		rec("req_2", t0.Add(time.Hour), "claude-haiku-4-5", "claude-*", 20), // a whole hour: from the roll-ups
		rec("req_3", t0.Add(time.Hour), "gpt-6-sol", "gpt-6-sol", 3),
	}
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			if err := s.InsertRequests(ctx, recs); err != nil {
				t.Fatal(err)
			}
			total, _, err := s.Spend(ctx, "k1", []string{"claude-*"}, t0.Add(-time.Minute), 0)
			if err != nil || total != 120 {
				t.Errorf("Spend(claude-*) = %d, %v; want 120", total, err)
			}
		})
	}
}
