package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// stores returns the back ends every test runs against: SQLite always, and
// PostgreSQL when TOLLGATE_TEST_POSTGRES_URL is set (each test in a schema
// of its own, dropped afterwards).
func stores(t *testing.T) map[string]*Store { return openStores(t) }

func benchStores(b *testing.B) map[string]*Store { return openStores(b) }

func openStores(t testing.TB) map[string]*Store {
	t.Helper()
	ctx := context.Background()
	out := map[string]*Store{}
	s, err := Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	out["sqlite"] = s
	pgURL := os.Getenv("TOLLGATE_TEST_POSTGRES_URL")
	if pgURL == "" {
		t.Log("TOLLGATE_TEST_POSTGRES_URL is not set: PostgreSQL tests skipped, SQLite only")
		return out
	}
	schema := fmt.Sprintf("t_%d", time.Now().UnixNano())
	admin, err := sql.Open("pgx", pgURL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatalf("PostgreSQL at TOLLGATE_TEST_POSTGRES_URL: %v", err)
	}
	t.Cleanup(func() { admin.Exec("DROP SCHEMA " + schema + " CASCADE"); admin.Close() })
	sep := "?"
	if strings.Contains(pgURL, "?") {
		sep = "&"
	}
	pg, err := Open(ctx, pgURL+sep+"search_path="+schema)
	if err != nil {
		t.Fatal(err)
	}
	if err := pg.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pg.Close() })
	out["postgres"] = pg
	return out
}

func TestRequestsRoundTripAndIdempotence(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			base := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
			cost := int64(2_657_500)
			var recs []Request
			for i := 0; i < 450; i++ { // more than one INSERT chunk
				r := Request{ID: fmt.Sprintf("req_%04d", i), Time: base.Add(time.Duration(i) * time.Millisecond),
					ClientProtocol: "openai", Model: "m", Provider: "p", UpstreamModel: "u", Lane: "passthrough",
					Stream: i%2 == 0, Status: 200, Input: 127, CacheRead: 1792, Output: 10, Reasoning: 3,
					LatencyMS: 1.5, TTFBMS: 1.25, UpstreamMS: 1.0, OverheadMS: 0.5, ClientIP: "127.0.0.1", UserAgent: "ua"}
				if i%3 == 0 {
					r.CostNanoUSD = &cost
				}
				if i%5 == 0 {
					r.KeyID = "key_a"
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
			all, err := s.Requests(ctx, RequestFilter{Limit: 1000})
			if err != nil {
				t.Fatal(err)
			}
			if len(all) != 450 {
				t.Fatalf("%d records, want 450 (no duplicates)", len(all))
			}
			got := all[len(all)-1] // newest first: the oldest is last
			want := recs[0]
			if got.ID != want.ID || !got.Time.Equal(want.Time) || got.CostNanoUSD == nil || *got.CostNanoUSD != cost ||
				got.KeyID != "key_a" || !got.Stream || got.CacheRead != 1792 || got.TTFBMS != 1.25 {
				t.Errorf("round trip: got %+v", got)
			}
			if all[0].ID != "req_0449" {
				t.Errorf("newest first: got %s", all[0].ID)
			}
			nilCost, err := s.Requests(ctx, RequestFilter{KeyID: "key_a", Limit: 3})
			if err != nil || len(nilCost) != 3 {
				t.Fatalf("filter by key: %d, %v", len(nilCost), err)
			}
			priced := map[string]bool{}
			for _, r := range recs {
				priced[r.ID] = r.CostNanoUSD != nil
			}
			for _, r := range all {
				if (r.CostNanoUSD != nil) != priced[r.ID] {
					t.Fatalf("%s: cost %v; an unpriced request must read back as NULL, never 0", r.ID, r.CostNanoUSD)
				}
			}
			page, err := s.Requests(ctx, RequestFilter{Before: all[9].Time, Limit: 5})
			if err != nil || len(page) != 5 || page[0].ID != all[10].ID {
				t.Errorf("paging: %v %v", page, err)
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	for _, u := range []string{"tollgate.db", "mysql://x", "sqlite://"} {
		if _, err := Open(context.Background(), u); err == nil {
			t.Errorf("Open(%q) accepted", u)
		}
	}
}
