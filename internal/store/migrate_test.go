package store_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/store/storetest"
)

// unmigrated opens each back end without migrating it.
func unmigrated(t *testing.T) map[string]*store.Store {
	t.Helper()
	ctx := context.Background()
	out := map[string]*store.Store{}
	urls := map[string]string{"sqlite": "sqlite://" + filepath.Join(t.TempDir(), "t.db")}
	if _, u := storetest.SchemaURL(t); u != "" {
		urls["postgres"] = u
	}
	for name, u := range urls {
		s, err := store.Open(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		out[name] = s
	}
	return out
}

// TestMigrateUsageEstimated migrates a ledger written before
// usage_estimated existed: its records read back as reported usage, and
// new records keep the flag.
func TestMigrateUsageEstimated(t *testing.T) {
	ctx := context.Background()
	for name, s := range unmigrated(t) {
		t.Run(name, func(t *testing.T) {
			if err := s.MigrateTo(ctx, 3); err != nil {
				t.Fatal(err)
			}
			at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
			// The schema of version 3, written as the gateway of then did.
			q := "INSERT INTO requests (id, time, key_id, client_protocol, model, provider, upstream_model, lane, stream, status, " +
				"error_type, input_tokens, cache_read_tokens, cache_write_5m_tokens, cache_write_1h_tokens, output_tokens, " +
				"reasoning_tokens, cost_nano_usd, latency_ms, ttfb_ms, upstream_ms, overhead_ms, client_ip, user_agent, attempts) " +
				"VALUES ($1, $2, NULL, 'anthropic', 'm', 'p', 'u', 'passthrough', $3, 200, '', 10, 0, 0, 0, 5, 0, 7, 1, 1, 1, 0, '', '', '[]')"
			if s.Dialect() == store.SQLite {
				q = strings.NewReplacer("$1", "?", "$2", "?", "$3", "?").Replace(q)
			}
			for i, id := range []string{"req_old_a", "req_old_b"} {
				if _, err := s.DB().ExecContext(ctx, q, id, at.Add(time.Duration(i)*time.Millisecond).UnixMilli(), i == 0); err != nil {
					t.Fatalf("a record of version 3: %v", err)
				}
			}
			if err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			if err := s.InsertRequests(ctx, []store.Request{{ID: "req_new", Time: at.Add(time.Second), ClientProtocol: "openai",
				Model: "m", Provider: "p", UpstreamModel: "u", Lane: "translated", Stream: true, Status: 200, Input: 3, Output: 40,
				UsageEstimated: true}}); err != nil {
				t.Fatal(err)
			}
			recs, err := s.Requests(ctx, store.RequestFilter{})
			if err != nil || len(recs) != 3 {
				t.Fatalf("after migrating: %d records, %v", len(recs), err)
			}
			want := map[string]bool{"req_new": true, "req_old_b": false, "req_old_a": false}
			for _, r := range recs {
				if r.UsageEstimated != want[r.ID] {
					t.Errorf("%s: usage_estimated %v, want %v", r.ID, r.UsageEstimated, want[r.ID])
				}
				if r.ID == "req_old_a" && (!r.Stream || r.Input != 10 || r.Output != 5 || r.CostNanoUSD == nil || *r.CostNanoUSD != 7) {
					t.Errorf("a record of version 3 changed: %+v", r)
				}
			}
			usage, err := s.Usage(ctx, store.UsageFilter{Since: at, Until: at.Add(time.Hour), GroupBy: store.ByModel})
			if err != nil || len(usage) != 1 || usage[0].Requests != 3 || usage[0].Estimated != 1 {
				t.Errorf("usage: %+v %v", usage, err)
			}

			// Down and up again: the flag goes with its column, and
			// comes back false.
			if err := s.MigrateTo(ctx, 3); err != nil {
				t.Fatalf("down to version 3: %v", err)
			}
			if err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			again, err := s.RequestByID(ctx, "req_new")
			if err != nil || again.UsageEstimated || again.Output != 40 {
				t.Errorf("after down and up: %+v %v", again, err)
			}
		})
	}
}
