package store_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

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

// TestMigrateCacheSavings migrates a ledger written before savings were
// recorded (00011): its records' savings read back as unknown, none of
// its roll-ups' records counts as known, and usage over old and new
// records sums the new ones' savings and counts the old ones as unknown,
// from the roll-ups (whole hours) as from the records (edges).
func TestMigrateCacheSavings(t *testing.T) {
	ctx := context.Background()
	for name, s := range unmigrated(t) {
		t.Run(name, func(t *testing.T) {
			if err := s.MigrateTo(ctx, 10); err != nil {
				t.Fatal(err)
			}
			hour := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
			// Records of version 10, written as the gateway of then did:
			// into the roll-ups too (InsertRequests without the savings
			// column, by hand).
			q := "INSERT INTO requests (id, time, key_id, client_protocol, model, provider, upstream_model, lane, stream, status, " +
				"error_type, input_tokens, cache_read_tokens, cache_write_5m_tokens, cache_write_1h_tokens, output_tokens, " +
				"reasoning_tokens, cost_nano_usd, latency_ms, ttfb_ms, upstream_ms, overhead_ms, client_ip, user_agent, attempts, " +
				"usage_estimated, endpoint, canonical_model) " +
				"VALUES ($1, $2, NULL, 'anthropic', 'm', 'p', 'u', 'passthrough', FALSE, 200, '', 10, 800, 0, 0, 5, 0, 7, 1, 1, 1, 0, '', '', '[]', " +
				"FALSE, '/v1/messages', 'm')"
			roll := "INSERT INTO usage_hourly_keys (hour, key_id, model, model_group, provider, is_usage, requests, errors, input_tokens, " +
				"cache_read_tokens, cache_write_5m_tokens, cache_write_1h_tokens, output_tokens, reasoning_tokens, cost_nano_usd, unpriced, estimated) " +
				"VALUES ($1, '', 'm', 'm', 'p', TRUE, 2, 0, 20, 1600, 0, 0, 10, 0, 14, 0, 0)"
			if s.Dialect() == store.SQLite {
				q = strings.NewReplacer("$1", "?", "$2", "?", "FALSE", "0").Replace(q)
				roll = strings.NewReplacer("$1", "?", "TRUE", "1").Replace(roll)
			}
			for i, id := range []string{"req_old_a", "req_old_b"} {
				if _, err := s.DB().ExecContext(ctx, q, id, hour.Add(time.Duration(i)*time.Minute).UnixMilli()); err != nil {
					t.Fatalf("a record of version 10: %v", err)
				}
			}
			for _, table := range []string{"usage_hourly_keys", "usage_hourly"} {
				r := roll
				if table == "usage_hourly" {
					r = strings.Replace(strings.Replace(roll, "key_id, ", "", 1), "'', ", "", 1)
				}
				if _, err := s.DB().ExecContext(ctx, strings.Replace(r, "usage_hourly_keys", table, 1), hour.UnixMilli()); err != nil {
					t.Fatalf("roll-ups of version 10: %v", err)
				}
			}
			if err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			old, err := s.RequestByID(ctx, "req_old_a")
			if err != nil || old.CacheSavingsNano != nil || old.CacheRead != 800 || old.CostNanoUSD == nil {
				t.Fatalf("a record of version 10: %+v %v", old, err)
			}
			saved := func(n int64) *int64 { return &n }
			recs := []store.Request{
				// The same hour as the old ones: added to their roll-up rows.
				{ID: "req_new_read", Time: hour.Add(2 * time.Minute), ClientProtocol: "anthropic", Endpoint: "/v1/messages",
					Model: "m", CanonicalModel: "m", Provider: "p", Status: 200, Input: 10, CacheRead: 1000, Output: 5,
					CacheSavingsNano: saved(2_700_000)},
				{ID: "req_new_write", Time: hour.Add(3 * time.Minute), ClientProtocol: "anthropic", Endpoint: "/v1/messages",
					Model: "m", CanonicalModel: "m", Provider: "p", Status: 200, Input: 10, CacheWrite5m: 1000, Output: 5,
					CacheSavingsNano: saved(-750_000)},
				{ID: "req_new_unpriced", Time: hour.Add(4 * time.Minute), ClientProtocol: "anthropic", Endpoint: "/v1/messages",
					Model: "m", CanonicalModel: "m", Provider: "p", Status: 200, Input: 10, CacheRead: 1000, Output: 5},
				// In the next hour: from the records, at the window's edge.
				{ID: "req_new_edge", Time: hour.Add(61 * time.Minute), ClientProtocol: "anthropic", Endpoint: "/v1/messages",
					Model: "m", CanonicalModel: "m", Provider: "p", Status: 200, Input: 10, CacheRead: 10, Output: 5,
					CacheSavingsNano: saved(27_000)},
			}
			if err := s.InsertRequests(ctx, recs); err != nil {
				t.Fatal(err)
			}
			for _, w := range []struct {
				name         string
				since, until time.Time
				saved        *int64
				unknown      int64
			}{
				{"the old hour, from the roll-ups", hour, hour.Add(time.Hour), saved(2_700_000 - 750_000), 3},
				{"the old hour and an edge", hour, hour.Add(90 * time.Minute), saved(2_700_000 - 750_000 + 27_000), 3},
				{"the old records alone", hour, hour.Add(2 * time.Minute), nil, 2},
				{"the edge alone", hour.Add(time.Hour), hour.Add(90 * time.Minute), saved(27_000), 0},
			} {
				u, err := s.Usage(ctx, store.UsageFilter{Since: w.since, Until: w.until, GroupBy: store.ByModel})
				if err != nil || len(u) != 1 {
					t.Fatalf("%s: %+v %v", w.name, u, err)
				}
				if d := gocmp.Diff(w.saved, u[0].CacheSavingsNanoUSD); d != "" || u[0].SavingsUnknown != w.unknown {
					t.Errorf("%s: saved %v, %d unknown; want %v, %d", w.name, u[0].CacheSavingsNanoUSD, u[0].SavingsUnknown, w.saved, w.unknown)
				}
			}

			// Down and up again: the savings go with their columns, and
			// come back unknown.
			if err := s.MigrateTo(ctx, 10); err != nil {
				t.Fatalf("down to version 10: %v", err)
			}
			if err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			again, err := s.RequestByID(ctx, "req_new_read")
			if err != nil || again.CacheSavingsNano != nil || again.CacheRead != 1000 {
				t.Errorf("after down and up: %+v %v", again, err)
			}
			u, err := s.Usage(ctx, store.UsageFilter{Since: hour, Until: hour.Add(time.Hour), GroupBy: store.ByModel})
			if err != nil || len(u) != 1 || u[0].CacheSavingsNanoUSD != nil || u[0].SavingsUnknown != 5 || u[0].Requests != 5 {
				t.Errorf("usage after down and up: %+v %v", u, err)
			}
		})
	}
}

// TestMigrateResponseChain migrates responses stored before the links: a
// response of then holds its whole conversation and reads as a chain of
// one, which a new response continues.
func TestMigrateResponseChain(t *testing.T) {
	ctx := context.Background()
	for name, s := range unmigrated(t) {
		t.Run(name, func(t *testing.T) {
			if err := s.MigrateTo(ctx, 12); err != nil {
				t.Fatal(err)
			}
			t0 := time.Date(2030, 5, 1, 12, 0, 0, 0, time.UTC)
			q := "INSERT INTO responses (id, owner, model, target, input, response, created_at, expires_at) " +
				`VALUES ('resp_old', 'key_a', 'm', 't', '[{"role":"user","content":"one"},{"role":"assistant","content":"two"},{"role":"user","content":"three"}]', '{"id":"resp_old","output":[]}', 0, $1)`
			if s.Dialect() == store.SQLite {
				q = strings.Replace(q, "$1", "?", 1)
			}
			if _, err := s.DB().ExecContext(ctx, q, t0.Add(time.Hour).UnixMilli()); err != nil {
				t.Fatalf("a response of version 12: %v", err)
			}
			if err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			if err := s.PutResponse(ctx, store.Response{ID: "resp_new", Owner: "key_a", Model: "m", Prev: "resp_old", Input: []byte(`[]`),
				Response: []byte(`{}`), CreatedAt: t0, ExpiresAt: t0.Add(2 * time.Hour)}); err != nil {
				t.Fatal(err)
			}
			chain, err := s.ResponseChain(ctx, "resp_new", "key_a", t0)
			if err != nil || len(chain) != 2 || chain[0].Prev != "" || !strings.Contains(string(chain[0].Input), "three") {
				t.Fatalf("after migrating: %+v %v", chain, err)
			}
			// The old response is of the new one's conversation: it stays
			// past its own expiry, as long as the new one.
			if n, err := s.PurgeResponses(ctx, t0.Add(90*time.Minute)); err != nil || n != 0 {
				t.Errorf("purging: %d, %v", n, err)
			}
			if chain, err := s.ResponseChain(ctx, "resp_new", "key_a", t0.Add(90*time.Minute)); err != nil || len(chain) != 2 {
				t.Errorf("after the old response's expiry: %d responses, %v", len(chain), err)
			}
			// Back down, the linked response goes and the old one stays.
			if err := s.MigrateTo(ctx, 12); err != nil {
				t.Fatal(err)
			}
			var n int
			if err := s.DB().QueryRowContext(ctx, "SELECT COUNT(*) FROM responses").Scan(&n); err != nil || n != 1 {
				t.Errorf("after migrating down: %d responses, %v", n, err)
			}
		})
	}
}
