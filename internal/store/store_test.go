package store_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/store/storetest"
)

// stores returns the back ends every test runs against: SQLite always, and
// PostgreSQL when TOLLGATE_TEST_POSTGRES_URL is set.
func stores(t *testing.T) map[string]*store.Store { return storetest.Open(t) }

// benchStoreNames names the stores a benchmark runs against: sqlite, and
// postgres when TOLLGATE_TEST_POSTGRES_URL is set.
func benchStoreNames(b *testing.B) []string {
	if os.Getenv("TOLLGATE_TEST_POSTGRES_URL") == "" {
		return []string{"sqlite"}
	}
	return []string{"sqlite", "postgres"}
}

// benchStore opens a fresh, migrated store of that name for one
// benchmark run: a run with -count above one must not find the records
// of the one before it (they would be skipped as already stored).
func benchStore(b *testing.B, name string) *store.Store {
	if name == "postgres" {
		return storetest.Postgres(b)
	}
	return storetest.SQLite(b)
}

func TestRequestsRoundTripAndIdempotence(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			base := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
			cost := int64(2_657_500)
			var recs []store.Request
			for i := 0; i < 450; i++ { // more than one INSERT chunk
				r := store.Request{ID: fmt.Sprintf("req_%04d", i), Time: base.Add(time.Duration(i) * time.Millisecond),
					ClientProtocol: "openai", Model: "m", Provider: "p", UpstreamModel: "u", Lane: "passthrough",
					Stream: i%2 == 0, Status: 200, Input: 127, CacheRead: 1792, Output: 10, Reasoning: 3,
					LatencyMS: 1.5, TTFBMS: 1.25, UpstreamMS: 1.0, OverheadMS: 0.5, ClientIP: "127.0.0.1", UserAgent: "ua"}
				if i%3 == 0 {
					r.CostNanoUSD = &cost
				}
				if i%5 == 0 {
					r.KeyID = "key_a"
				}
				if i%7 == 0 {
					r.UsageEstimated = true // a stream cut before its usage
				}
				if i == 0 {
					r.Attempts = `[{"target":"a/x","status":529,"error":"overloaded","ms":1.5},{"target":"b/y","status":200,"error":"","ms":2}]`
				}
				recs = append(recs, r)
			}
			if err := s.InsertRequests(ctx, recs); err != nil {
				t.Fatal(err)
			}
			// Replaying a batch (after a failure, or from the spill file) adds nothing.
			if err := s.InsertRequests(ctx, recs[100:300]); err != nil {
				t.Fatal(err)
			}
			all, err := s.Requests(ctx, store.RequestFilter{Limit: 1000})
			if err != nil {
				t.Fatal(err)
			}
			if len(all) != 450 {
				t.Fatalf("%d records, want 450 (no duplicates)", len(all))
			}
			got := all[len(all)-1] // newest first: the oldest is last
			want := recs[0]
			if got.ID != want.ID || !got.Time.Equal(want.Time) || got.CostNanoUSD == nil || *got.CostNanoUSD != cost ||
				got.KeyID != "key_a" || !got.Stream || got.CacheRead != 1792 || got.TTFBMS != 1.25 || got.Attempts != want.Attempts ||
				!got.UsageEstimated {
				t.Errorf("round trip: got %+v", got)
			}
			if all[0].Attempts != "[]" {
				t.Errorf("a record without attempts: %q", all[0].Attempts)
			}
			if all[0].ID != "req_0449" {
				t.Errorf("newest first: got %s", all[0].ID)
			}
			nilCost, err := s.Requests(ctx, store.RequestFilter{KeyID: "key_a", Limit: 3})
			if err != nil || len(nilCost) != 3 {
				t.Fatalf("filter by key: %d, %v", len(nilCost), err)
			}
			priced, estimated := map[string]bool{}, map[string]bool{}
			for _, r := range recs {
				priced[r.ID] = r.CostNanoUSD != nil
				estimated[r.ID] = r.UsageEstimated
			}
			for _, r := range all {
				if (r.CostNanoUSD != nil) != priced[r.ID] {
					t.Fatalf("%s: cost %v; an unpriced request must read back as NULL, never 0", r.ID, r.CostNanoUSD)
				}
				if r.UsageEstimated != estimated[r.ID] {
					t.Fatalf("%s: usage_estimated %v, want %v", r.ID, r.UsageEstimated, estimated[r.ID])
				}
			}
			one, err := s.RequestByID(ctx, "req_0007")
			if err != nil || !one.UsageEstimated {
				t.Errorf("by id: usage_estimated %v, %v", one.UsageEstimated, err)
			}
			usage, err := s.Usage(ctx, store.UsageFilter{Since: base, Until: base.Add(time.Hour), GroupBy: store.ByModel})
			if err != nil || len(usage) != 1 || usage[0].Requests != 450 || usage[0].Estimated != 65 { // 0, 7, …, 448
				t.Errorf("usage: %+v %v", usage, err)
			}
			page, err := s.Requests(ctx, store.RequestFilter{Before: all[9].Time, Limit: 5})
			if err != nil || len(page) != 5 || page[0].ID != all[10].ID {
				t.Errorf("paging: %v %v", page, err)
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	for _, u := range []string{"tollgate.db", "mysql://x", "sqlite://"} {
		if _, err := store.Open(context.Background(), u); err == nil {
			t.Errorf("Open(%q) accepted", u)
		}
	}
}

// TestRequestFilters checks each filter of Requests alone and together,
// against records that differ in exactly what each one selects by.
func TestRequestFilters(t *testing.T) {
	ctx := context.Background()
	base := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	lanes := []string{"passthrough", "translated", ""}
	var recs []store.Request
	for i := range 60 {
		r := store.Request{ID: fmt.Sprintf("req_%04d", i), Time: base.Add(time.Duration(i) * time.Minute),
			ClientProtocol: "openai", Model: fmt.Sprintf("m%d", i%2), Provider: "p", Lane: lanes[i%3], Status: 200}
		if r.Lane == "" {
			r.Status, r.ErrorType = 429, "rate_limit_error" // refused before an upstream was chosen
		}
		if i%4 == 0 {
			r.KeyID = "key_a"
		}
		recs = append(recs, r)
	}
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			if err := s.InsertRequests(ctx, recs); err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct {
				name string
				f    store.RequestFilter
				want func(r store.Request) bool
			}{
				{"lane passthrough", store.RequestFilter{Lane: "passthrough"}, func(r store.Request) bool { return r.Lane == "passthrough" }},
				{"lane translated", store.RequestFilter{Lane: "translated"}, func(r store.Request) bool { return r.Lane == "translated" }},
				{"no lane", store.RequestFilter{Lane: store.NoLane}, func(r store.Request) bool { return r.Lane == "" }},
				{"key and lane", store.RequestFilter{KeyID: "key_a", Lane: "translated"},
					func(r store.Request) bool { return r.KeyID == "key_a" && r.Lane == "translated" }},
				{"model, status and since", store.RequestFilter{Model: "m1", Status: 429, Since: base.Add(30 * time.Minute)},
					func(r store.Request) bool {
						return r.Model == "m1" && r.Status == 429 && !r.Time.Before(base.Add(30*time.Minute))
					}},
				{"unknown lane", store.RequestFilter{Lane: "sideways"}, func(store.Request) bool { return false }},
			} {
				got, err := s.Requests(ctx, store.RequestFilter{KeyID: tc.f.KeyID, Model: tc.f.Model, Status: tc.f.Status,
					Lane: tc.f.Lane, Since: tc.f.Since, Limit: 1000})
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				var want []string
				for i := len(recs) - 1; i >= 0; i-- { // newest first
					if tc.want(recs[i]) {
						want = append(want, recs[i].ID)
					}
				}
				var ids []string
				for _, r := range got {
					ids = append(ids, r.ID)
				}
				if fmt.Sprint(ids) != fmt.Sprint(want) {
					t.Errorf("%s: got %v, want %v", tc.name, ids, want)
				}
			}
		})
	}
}

// Writing the ledger keeps its statement journals in memory, and leaves
// the connection's temp_store as it found it: a console query's sort over
// millions of records still spills to a file.
func TestInsertLeavesTempStore(t *testing.T) {
	s := storetest.SQLite(t)
	cost := int64(1)
	recs := []store.Request{{ID: "req_1", Time: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), Endpoint: "/v1/messages", Model: "m",
		Status: 200, Input: 1, CostNanoUSD: &cost, SessionID: "s1"}}
	if err := s.InsertRequests(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	var mode int
	if err := s.DB().QueryRow("PRAGMA temp_store").Scan(&mode); err != nil || mode != 0 {
		t.Errorf("temp_store after a write: %d %v, want 0 (the default: a file)", mode, err)
	}
}
