package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tollgate/tollgate/internal/store"
)

// usageDay is the day the usage tests' records are made on: a fixed date,
// never the day the tests run.
var usageDay = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// summary is what a test checks of a usage group.
type summary struct {
	Group            string
	Requests, Errors int64
	Input            int64
}

func summarize(gs []store.UsageGroup) []summary {
	out := make([]summary, len(gs))
	for i, g := range gs {
		out[i] = summary{g.Group, g.Requests, g.Errors, g.Input}
	}
	return out
}

// Listing models (and the other endpoints that run no model) leaves a
// record, with its endpoint, but no usage: not in any grouping, not in a
// budget. Records made before endpoints were recorded still count, but
// for the model-less successes that only a listing makes.
func TestUsageLeavesOutNonInference(t *testing.T) {
	ctx := context.Background()
	cost := func(n int64) *int64 { return &n }
	zero := cost(0)
	at := func(i int) time.Time { return usageDay.Add(time.Duration(i) * time.Second) }
	recs := []store.Request{
		{ID: "req_msg", Time: at(0), KeyID: "key_a", Endpoint: "/v1/messages", Model: "claude", CanonicalModel: "claude",
			Provider: "ant", Status: 200, Input: 10, Output: 5, CostNanoUSD: cost(700)},
		{ID: "req_chat", Time: at(1), KeyID: "key_a", Endpoint: "/v1/chat/completions", Model: "claude", CanonicalModel: "claude",
			Provider: "ant", Status: 200, Input: 20, Output: 5, CostNanoUSD: cost(900)},
		{ID: "req_resp", Time: at(2), Endpoint: "/v1/responses", Model: "gpt", CanonicalModel: "gpt", Provider: "oai",
			Status: 200, Input: 30, CostNanoUSD: cost(50)},
		{ID: "req_count", Time: at(3), KeyID: "key_a", Endpoint: "/v1/messages/count_tokens", Model: "claude",
			CanonicalModel: "claude", Provider: "ant", Status: 200, CostNanoUSD: zero},
		// Not inference: recorded, never summed.
		{ID: "req_list", Time: at(4), KeyID: "key_a", Endpoint: "/v1/models", Status: 200, CostNanoUSD: zero},
		{ID: "req_list_401", Time: at(5), Endpoint: "/v1/models", Status: 401, ErrorType: "authentication_error", CostNanoUSD: zero},
		{ID: "req_get", Time: at(6), KeyID: "key_a", Endpoint: "/v1/models/{id}", Status: 200, CostNanoUSD: zero},
		{ID: "req_stored", Time: at(7), KeyID: "key_a", Endpoint: "/v1/responses/{id}", Status: 200, CostNanoUSD: zero},
		{ID: "req_404", Time: at(8), Endpoint: "/v1/files", Status: 404, ErrorType: "not_found_error", CostNanoUSD: zero},
		// Made before endpoints were recorded (as an older gateway's spill
		// file replays them): a model-less success is a listing; the rest
		// are usage, as they always were.
		{ID: "req_old_list", Time: at(9), KeyID: "key_a", Status: 200, CostNanoUSD: zero},
		{ID: "req_old_401", Time: at(10), Status: 401, ErrorType: "authentication_error", CostNanoUSD: zero},
		{ID: "req_old_msg", Time: at(11), KeyID: "key_a", Model: "claude", Provider: "ant", Status: 200, Input: 1, CostNanoUSD: cost(1)},
	}
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			if err := s.InsertRequests(ctx, recs); err != nil {
				t.Fatal(err)
			}
			// Every record is kept, with its endpoint.
			all, err := s.Requests(ctx, store.RequestFilter{})
			if err != nil || len(all) != len(recs) {
				t.Fatalf("%d records, %v; want %d", len(all), err, len(recs))
			}
			if r, err := s.RequestByID(ctx, "req_list"); err != nil || r.Endpoint != "/v1/models" {
				t.Errorf("a listing's record: %+v %v", r, err)
			}
			span := store.UsageFilter{Since: usageDay, Until: usageDay.Add(time.Hour)}
			for _, tc := range []struct {
				by   store.GroupBy
				key  string
				want []summary
			}{
				{store.ByModel, "", []summary{{"claude", 4, 0, 31}, {"gpt", 1, 0, 30}, {store.UnknownModel, 1, 1, 0}}},
				{store.ByKey, "", []summary{{"", 2, 1, 30}, {"key_a", 4, 0, 31}}},
				{store.ByKey, "key_a", []summary{{"key_a", 4, 0, 31}}},
				{store.ByProvider, "", []summary{{"", 1, 1, 0}, {"ant", 4, 0, 31}, {"oai", 1, 0, 30}}},
				{store.ByDay, "", []summary{{"2026-11-22", 6, 1, 61}}},
			} {
				f := span
				f.GroupBy, f.KeyID = tc.by, tc.key
				got, err := s.Usage(ctx, f)
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(tc.want, summarize(got)); d != "" {
					t.Errorf("usage by %s (key %q) (-want +got):\n%s", tc.by, tc.key, d)
				}
			}
			// Budgets sum cost: a listing has none to add.
			if got, _, err := s.Spend(ctx, "key_a", nil, usageDay, 0); err != nil || got != 1601 {
				t.Errorf("key_a's spend: %d %v, want 1601", got, err)
			}
		})
	}
}

// Usage by model is by the configured model a name resolved to: an alias
// and the model's own name are one group; names that matched no model
// (or none at all) are one group, last.
func TestUsageByCanonicalModel(t *testing.T) {
	ctx := context.Background()
	at := func(i int) time.Time { return usageDay.Add(time.Duration(i) * time.Second) }
	rec := func(i int, model, canonical string, status int) store.Request {
		r := store.Request{ID: "req_" + string(rune('a'+i)), Time: at(i), Endpoint: "/v1/chat/completions",
			Model: model, CanonicalModel: canonical, Status: status, Input: int64(i + 1)}
		if status >= 400 {
			r.ErrorType = "not_found_error"
		}
		return r
	}
	recs := []store.Request{
		rec(0, "echo", "echo", 200),
		rec(1, "e", "echo", 200),                                          // an alias
		rec(2, "ECHO-latest", "echo", 200),                                // another alias
		rec(3, "free", "free", 404),                                       // a model the key may not use
		rec(4, "gpt-9", "", 404),                                          // invented
		rec(5, "nope", "", 404),                                           // invented too: the same group
		rec(6, store.UnknownModel, "", 404),                               // a name that reads like the group
		rec(7, "", "", 400),                                               // no model in the body
		rec(8, "zzz", "aaa-first", 200),                                   // sorted by the configured name
		{ID: "req_old", Time: at(9), Model: "e", Status: 200, Input: 100}, // before 00006: by its name
	}
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			if err := s.InsertRequests(ctx, recs); err != nil {
				t.Fatal(err)
			}
			got, err := s.Usage(ctx, store.UsageFilter{Since: usageDay, Until: usageDay.Add(time.Hour), GroupBy: store.ByModel})
			if err != nil {
				t.Fatal(err)
			}
			want := []summary{{"aaa-first", 1, 0, 9}, {"e", 1, 0, 100}, {"echo", 3, 0, 1 + 2 + 3}, {"free", 1, 1, 4},
				{store.UnknownModel, 4, 4, 5 + 6 + 7 + 8}}
			if d := cmp.Diff(want, summarize(got)); d != "" {
				t.Errorf("usage by model (-want +got):\n%s", d)
			}
			// The record keeps both names.
			if r, err := s.RequestByID(ctx, "req_b"); err != nil || r.Model != "e" || r.CanonicalModel != "echo" ||
				r.Endpoint != "/v1/chat/completions" {
				t.Errorf("round trip: %+v %v", r, err)
			}
		})
	}
}

// TestMigrateEndpoint migrates a ledger written before endpoint and
// canonical_model existed: its records read back with both empty and
// count as before, and the columns come and go with the migration.
func TestMigrateEndpoint(t *testing.T) {
	ctx := context.Background()
	for name, s := range unmigrated(t) {
		t.Run(name, func(t *testing.T) {
			if err := s.MigrateTo(ctx, 5); err != nil {
				t.Fatal(err)
			}
			// The schema of version 5, written as the gateway of then did.
			q := "INSERT INTO requests (id, time, key_id, client_protocol, model, provider, upstream_model, lane, stream, status, " +
				"error_type, input_tokens, cache_read_tokens, cache_write_5m_tokens, cache_write_1h_tokens, output_tokens, " +
				"reasoning_tokens, cost_nano_usd, latency_ms, ttfb_ms, upstream_ms, overhead_ms, client_ip, user_agent, attempts, usage_estimated) " +
				"VALUES ($1, $2, NULL, 'openai', $3, 'p', 'u', 'passthrough', FALSE, 200, '', 10, 0, 0, 0, 5, 0, 7, 1, 1, 1, 0, '', '', '[]', FALSE)"
			if s.Dialect() == store.SQLite {
				q = strings.NewReplacer("$1", "?", "$2", "?", "$3", "?", "FALSE", "0").Replace(q)
			}
			for i, m := range []string{"e", ""} { // a message, and a model listing
				if _, err := s.DB().ExecContext(ctx, q, "req_old_"+m, usageDay.Add(time.Duration(i)*time.Millisecond).UnixMilli(), m); err != nil {
					t.Fatalf("a record of version 5: %v", err)
				}
			}
			if err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			old, err := s.RequestByID(ctx, "req_old_e")
			if err != nil || old.Endpoint != "" || old.CanonicalModel != "" || old.Model != "e" || old.Input != 10 {
				t.Errorf("a record of version 5 after migrating: %+v %v", old, err)
			}
			if err := s.InsertRequests(ctx, []store.Request{{ID: "req_new", Time: usageDay.Add(time.Second),
				Endpoint: "/v1/messages", Model: "e", CanonicalModel: "echo", Status: 200, Input: 3}}); err != nil {
				t.Fatal(err)
			}
			got, err := s.Usage(ctx, store.UsageFilter{Since: usageDay, Until: usageDay.Add(time.Hour), GroupBy: store.ByModel})
			if d := cmp.Diff([]summary{{"e", 1, 0, 10}, {"echo", 1, 0, 3}}, summarize(got)); err != nil || d != "" {
				t.Errorf("usage after migrating (-want +got):\n%s %v", d, err)
			}
			// Down and up again: the columns go, and come back empty.
			if err := s.MigrateTo(ctx, 5); err != nil {
				t.Fatalf("down to version 5: %v", err)
			}
			if err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			again, err := s.RequestByID(ctx, "req_new")
			if err != nil || again.Endpoint != "" || again.CanonicalModel != "" || again.Input != 3 {
				t.Errorf("after down and up: %+v %v", again, err)
			}
		})
	}
}
