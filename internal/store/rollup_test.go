package store_test

import (
	"cmp"
	"context"
	"fmt"
	"github.com/tollgate/tollgate/internal/store/storetest"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/tollgate/tollgate/internal/store"
)

// rollupBase is where the roll-up tests' records start: a fixed instant
// (not an hour's start), never the time the tests run.
var rollupBase = time.Date(2026, 2, 27, 21, 17, 3, 0, time.UTC)

// randomLedger makes n records over about three days: keys, models (a
// model's own name, an alias of it, unknown names, none), providers,
// endpoints (inference, others, and none as before 00006), statuses,
// priced and unpriced, estimated, cache savings known (positive, negative,
// 0) and unknown, at any millisecond.
func randomLedger(rng *rand.Rand, prefix string, n int) []store.Request {
	type name struct{ model, canonical string }
	names := []name{{"m-alpha", "m-alpha"}, {"alpha", "m-alpha"}, {"m-beta", "m-beta"}, {"beta-latest", "m-beta"},
		{"gpt-nope", ""}, {"", ""}, {store.UnknownModel, ""}}
	// The inference endpoints the back-fill of 00007 names: those added
	// since (Gemini's) have no records from before it.
	endpoints := append(slices.Clone(store.InferenceEndpoints[:5]), "/v1/models", "/v1/models/{id}", "/v1/responses/{id}",
		"/v1/files", "", "")
	keys := []string{"", "key_a", "key_b", "key_c", "key_d"}
	providers := []string{"", "anthropic", "openai"}
	pick := func(xs []string) string { return xs[rng.IntN(len(xs))] }
	// The savings from a generator of their own: the records are otherwise
	// those of before savings were recorded, and rng goes on as it did.
	saving := rand.New(rand.NewPCG(uint64(n), uint64(len(prefix))))
	// The users, teams and agent sessions (00015) too.
	who := rand.New(rand.NewPCG(uint64(n), 0x05e7+uint64(len(prefix))))
	whoPick := func(xs []string) string { return xs[who.IntN(len(xs))] }
	recs := make([]store.Request, n)
	for i := range recs {
		nm := names[rng.IntN(len(names))]
		r := store.Request{
			ID:       fmt.Sprintf("req_%s%06d", prefix, i),
			Time:     rollupBase.Add(time.Duration(rng.Int64N(int64(72*time.Hour/time.Millisecond))) * time.Millisecond),
			KeyID:    pick(keys),
			Endpoint: pick(endpoints), Model: nm.model, CanonicalModel: nm.canonical, Provider: pick(providers),
			Status: []int{200, 200, 200, 400, 404, 429, 500}[rng.IntN(7)],
			Input:  rng.Int64N(5000), CacheRead: rng.Int64N(3) * rng.Int64N(20000), CacheWrite5m: rng.Int64N(2) * rng.Int64N(900),
			CacheWrite1h: rng.Int64N(2) * rng.Int64N(900), Output: rng.Int64N(2000), Reasoning: rng.Int64N(2) * rng.Int64N(700),
			UsageEstimated: rng.IntN(9) == 0,
		}
		if rng.IntN(8) == 0 {
			// On an hour's first or last millisecond, or next to them:
			// where the roll-ups and the edges meet.
			r.Time = r.Time.Truncate(time.Hour).Add(time.Duration(rng.IntN(3)-1) * time.Millisecond)
		}
		if r.Endpoint == "" {
			r.CanonicalModel = "" // as recorded before 00006
		}
		if r.Status >= 400 || rng.IntN(20) == 0 {
			r.ErrorType = "api_error" // also on a 200: a stream that ended with an error event
		}
		if rng.IntN(4) != 0 {
			c := rng.Int64N(3_000_000_000)
			if rng.IntN(10) == 0 {
				c = 0
			}
			r.CostNanoUSD = &c
		}
		if saving.IntN(3) != 0 {
			v := saving.Int64N(2_000_000_000) - 500_000_000 // cache writes can cost more than reads save
			if saving.IntN(10) == 0 {
				v = 0
			}
			r.CacheSavingsNano = &v
		}
		r.UserID = whoPick([]string{"", "usr_a", "usr_b", "usr_c"})
		r.TeamID = whoPick([]string{"", "team_x", "team_y"})
		r.SessionID = whoPick([]string{"", "", "sess-1", "sess-2", "sess-3"})
		recs[i] = r
	}
	return recs
}

// naiveUsage is what Usage answers, summed in Go from the records.
func naiveUsage(recs []store.Request, f store.UsageFilter) []store.UsageGroup {
	since, until := f.Since.UnixMilli(), f.Until.UnixMilli()
	if f.Until.After(time.UnixMilli(until)) {
		until++
	}
	groups := map[string]*store.UsageGroup{}
	for _, r := range recs {
		ms := r.Time.UnixMilli()
		usage := slices.Contains(store.InferenceEndpoints, r.Endpoint) ||
			r.Endpoint == "" && (r.Model != "" || r.Status >= 400 || r.ErrorType != "")
		if ms < since || ms >= until || !usage || f.KeyID != "" && r.KeyID != f.KeyID ||
			f.UserID != "" && r.UserID != f.UserID || f.TeamID != "" && r.TeamID != f.TeamID {
			continue
		}
		var g string
		switch f.GroupBy {
		case store.ByModel:
			g = modelGroup(r)
		case store.ByKey:
			g = r.KeyID
		case store.ByUser:
			g = r.UserID
		case store.ByTeam:
			g = r.TeamID
		case store.BySession:
			g = r.SessionID
		case store.ByProvider:
			g = r.Provider
		case store.ByEndpoint:
			g = r.Endpoint
		case store.ByDay:
			g = r.Time.UTC().Format(time.DateOnly)
		}
		u := groups[g]
		if u == nil {
			u = &store.UsageGroup{Group: g}
			groups[g] = u
		}
		u.Requests++
		if r.Status >= 400 || r.ErrorType != "" {
			u.Errors++
		}
		u.Input += r.Input
		u.CacheRead += r.CacheRead
		u.CacheWrite5m += r.CacheWrite5m
		u.CacheWrite1h += r.CacheWrite1h
		u.Output += r.Output
		u.Reasoning += r.Reasoning
		if r.CostNanoUSD != nil {
			if u.CostNanoUSD == nil {
				u.CostNanoUSD = new(int64)
			}
			*u.CostNanoUSD += *r.CostNanoUSD
		} else {
			u.Unpriced++
		}
		if r.UsageEstimated {
			u.Estimated++
		}
		if r.CacheSavingsNano != nil {
			if u.CacheSavingsNanoUSD == nil {
				u.CacheSavingsNanoUSD = new(int64)
			}
			*u.CacheSavingsNanoUSD += *r.CacheSavingsNano
		} else {
			u.SavingsUnknown++
		}
	}
	var out []store.UsageGroup
	for _, u := range groups {
		out = append(out, *u)
	}
	// Byte order: SQLite's, and PostgreSQL's with the C collation of
	// the test database, for these ASCII names.
	slices.SortFunc(out, func(a, b store.UsageGroup) int {
		if f.GroupBy == store.ByModel && (a.Group == store.UnknownModel) != (b.Group == store.UnknownModel) {
			if a.Group == store.UnknownModel {
				return 1
			}
			return -1
		}
		return cmp.Compare(a.Group, b.Group)
	})
	return out
}

// naiveSpend is what Spend answers, summed in Go from the records.
// modelGroup is the model a record counts for: its canonical model (the
// configured model its name, an alias or a pattern's, stands for), or for
// a record made before those were recorded the name the client sent.
func modelGroup(r store.Request) string {
	g := r.CanonicalModel
	if r.Endpoint == "" {
		g = r.Model
	}
	if g == "" {
		g = store.UnknownModel
	}
	return g
}

func naiveSpend(recs []store.Request, key string, models []string, since time.Time, slot time.Duration) (int64, map[int64]int64) {
	return naiveSpendOf(recs, store.SpendKey, key, models, since, slot)
}

// naiveSpendOf is what SpendOf answers, summed in Go from the records.
func naiveSpendOf(recs []store.Request, kind, id string, models []string, since time.Time, slot time.Duration) (int64, map[int64]int64) {
	var total int64
	bySlot := map[int64]int64{}
	for _, r := range recs {
		of := map[string]string{store.SpendKey: r.KeyID, store.SpendUser: r.UserID, store.SpendTeam: r.TeamID}[kind]
		if r.Time.Before(since) || r.CostNanoUSD == nil || id != "" && of != id ||
			models != nil && !slices.Contains(models, modelGroup(r)) {
			continue
		}
		total += *r.CostNanoUSD
		if slot > 0 && *r.CostNanoUSD != 0 {
			bySlot[r.Time.UnixMilli()/slot.Milliseconds()] += *r.CostNanoUSD
		}
	}
	if slot == 0 {
		bySlot = nil
	}
	return total, bySlot
}

// insertShuffled writes recs in random batches, in random order (records
// written hours after they were made, as a spill file's replay writes
// them), replaying part of what was written now and then.
func insertShuffled(t *testing.T, s *store.Store, rng *rand.Rand, recs []store.Request) {
	t.Helper()
	ctx := context.Background()
	order := slices.Clone(recs)
	rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	for start := 0; start < len(order); {
		n := min(1+rng.IntN(400), len(order)-start)
		batch := slices.Clone(order[start : start+n])
		if start > 0 && rng.IntN(3) == 0 {
			// A replay: records already written come again, alone or
			// with new ones, one of them twice in the batch.
			from := rng.IntN(start)
			batch = append(batch, order[from:min(from+1+rng.IntN(300), start)]...)
			batch = append(batch, batch[rng.IntN(len(batch))])
			rng.Shuffle(len(batch), func(i, j int) { batch[i], batch[j] = batch[j], batch[i] })
		}
		if err := s.InsertRequests(ctx, batch); err != nil {
			t.Fatal(err)
		}
		start += n
	}
}

// randomWindow is a [since, until) around the records: within an hour,
// across hours, hour-aligned or not, at times sub-millisecond, empty.
func randomWindow(rng *rand.Rand) (time.Time, time.Time) {
	span := int64(80 * time.Hour)
	at := func() time.Time {
		t := rollupBase.Add(-4*time.Hour + time.Duration(rng.Int64N(span)))
		switch rng.IntN(4) {
		case 0:
			return t.Truncate(time.Hour)
		case 1:
			return t.Truncate(time.Millisecond)
		}
		return t
	}
	since := at()
	switch rng.IntN(5) {
	case 0: // inside one hour, or just across one
		return since, since.Add(time.Duration(rng.Int64N(int64(90 * time.Minute))))
	case 1: // everything
		return rollupBase.Add(-time.Hour), rollupBase.Add(74 * time.Hour)
	}
	return since, at()
}

var groupings = []store.GroupBy{store.ByModel, store.ByKey, store.ByProvider, store.ByEndpoint, store.ByDay}

// TestRollupUsageEqualsRecords is the roll-ups' property: whatever the
// records and the window, Usage (roll-ups for the whole hours, records
// for the edges) equals the sums of the records, for every grouping, with
// and without a key, and so does Spend.
func TestRollupUsageEqualsRecords(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			for _, seed := range []uint64{1, 2} {
				rng := rand.New(rand.NewPCG(seed, 0x7011))
				// Each seed adds records to those of the seeds before.
				insertShuffled(t, s, rng, randomLedger(rng, fmt.Sprint(seed), 1500))
				all := allRecords(t, s) // as stored: the sums' ground truth
				if len(all) != 1500*int(seed) {
					t.Fatalf("%d records stored, want %d", len(all), 1500*seed)
				}
				checked := 0
				for range 20 {
					since, until := randomWindow(rng)
					for _, by := range groupings {
						for _, key := range []string{"", []string{"key_b", "key_nobody"}[rng.IntN(2)]} {
							f := store.UsageFilter{Since: since, Until: until, GroupBy: by, KeyID: key}
							got, err := s.Usage(ctx, f)
							if err != nil {
								t.Fatal(err)
							}
							if d := gocmp.Diff(naiveUsage(all, f), got); d != "" {
								t.Fatalf("seed %d: Usage(%s .. %s, by %s, key %q) (-records +got):\n%s",
									seed, since.Format(time.RFC3339Nano), until.Format(time.RFC3339Nano), by, key, d)
							}
							checked++
						}
					}
				}
				for range 40 {
					since, _ := randomWindow(rng)
					key := []string{"", "key_a", "key_nobody"}[rng.IntN(3)]
					models := [][]string{nil, {"m-alpha", "alpha"}, {"gpt-nope"}, {"nobody"}}[rng.IntN(4)]
					slot := []time.Duration{0, time.Hour, 2 * time.Hour, 24 * time.Minute, 7 * time.Minute, 10080 * time.Second}[rng.IntN(6)]
					total, bySlot, err := s.Spend(ctx, key, models, since, slot)
					if err != nil {
						t.Fatal(err)
					}
					wantTotal, wantSlots := naiveSpend(all, key, models, since, slot)
					if total != wantTotal || !mapsEqual(bySlot, wantSlots) {
						t.Fatalf("seed %d: Spend(%q, %v, %s, %s) = %d %v, want %d %v", seed, key, models, since, slot,
							total, bySlot, wantTotal, wantSlots)
					}
				}
				t.Logf("seed %d: %d records, %d usage queries checked", seed, len(all), checked)
			}
		})
	}
}

// mapsEqual compares slot sums, a nil map and an empty one alike.
func mapsEqual(a, b map[int64]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// allRecords reads every record back, as stored.
func allRecords(t *testing.T, s *store.Store) []store.Request {
	t.Helper()
	var out []store.Request
	f := store.RequestFilter{Limit: 1000}
	for {
		page, err := s.Requests(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, page...)
		if len(page) < 1000 {
			return out
		}
		f.AfterID = page[len(page)-1].ID
	}
}

// rollupTableNames are the roll-up tables (migrations 00007 and 00010).
var rollupTableNames = []string{"usage_hourly_keys", "usage_hourly", "usage_daily", "usage_daily_keys"}

// rollupRow is one row of a roll-up table, as a test compares it.
type rollupRow struct {
	Hour                                    int64
	Key, Model, Group, Provider             string
	Usage                                   bool
	Requests, Errors, Input, CacheRead      int64
	CacheWrite5m, CacheWrite1h, Output, Rsn int64
	Cost                                    *int64
	Unpriced, Estimated                     int64
	Saved, SavedKnown                       int64
}

// rollupRows reads a roll-up table in key order.
func rollupRows(t *testing.T, s *store.Store, table string) []rollupRow {
	t.Helper()
	bucket, key, names := "hour", "key_id", "model, model_group, provider"
	switch table {
	case "usage_hourly":
		key = "''"
	case "usage_daily":
		bucket, key = "day", "''"
	case "usage_daily_keys":
		bucket, names = "day", "'', '', ''"
	}
	rows, err := s.DB().Query("SELECT " + bucket + ", " + key + ", " + names + ", is_usage, requests, errors, input_tokens, " +
		"cache_read_tokens, cache_write_5m_tokens, cache_write_1h_tokens, output_tokens, reasoning_tokens, cost_nano_usd, " +
		"unpriced, estimated, cache_savings_nano, cache_savings_known FROM " + table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []rollupRow
	for rows.Next() {
		var r rollupRow
		if err := rows.Scan(&r.Hour, &r.Key, &r.Model, &r.Group, &r.Provider, &r.Usage, &r.Requests, &r.Errors, &r.Input,
			&r.CacheRead, &r.CacheWrite5m, &r.CacheWrite1h, &r.Output, &r.Rsn, &r.Cost, &r.Unpriced, &r.Estimated,
			&r.Saved, &r.SavedKnown); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	// Go's order, not a collation's.
	slices.SortFunc(out, func(a, b rollupRow) int {
		return cmp.Or(cmp.Compare(a.Hour, b.Hour), cmp.Compare(a.Key, b.Key), cmp.Compare(a.Model, b.Model),
			cmp.Compare(a.Group, b.Group), cmp.Compare(a.Provider, b.Provider), boolCompare(a.Usage, b.Usage))
	})
	return out
}

// acrossEndpoints sums the rows that differ only by endpoint (which
// rollupRow leaves out), in order.
func acrossEndpoints(rows []rollupRow) []rollupRow {
	var out []rollupRow
	for _, r := range rows {
		if n := len(out); n > 0 {
			o := &out[n-1]
			if o.Hour == r.Hour && o.Key == r.Key && o.Model == r.Model && o.Group == r.Group && o.Provider == r.Provider && o.Usage == r.Usage {
				o.Requests += r.Requests
				o.Errors += r.Errors
				o.Input += r.Input
				o.CacheRead += r.CacheRead
				o.CacheWrite5m += r.CacheWrite5m
				o.CacheWrite1h += r.CacheWrite1h
				o.Output += r.Output
				o.Rsn += r.Rsn
				if r.Cost != nil {
					c := *r.Cost
					if o.Cost != nil {
						c += *o.Cost
					}
					o.Cost = &c
				}
				o.Unpriced += r.Unpriced
				o.Estimated += r.Estimated
				o.Saved += r.Saved
				o.SavedKnown += r.SavedKnown
				continue
			}
		}
		out = append(out, r)
	}
	return out
}

func boolCompare(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// TestRollupBackfill: the migration's back-fill computes from the records
// the very rows InsertRequests added as it wrote them (the same hours,
// model groups, usage scope and sums), before 1970 too. Cache savings are
// not back-filled (00011 going down drops the records' savings too): the
// rows come back with none known, as rows made before 00011 have.
func TestRollupBackfill(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 7))
	recs := randomLedger(rng, "", 2000)
	cost := int64(5)
	recs = append(recs,
		store.Request{ID: "req_1969", Time: time.UnixMilli(-1500), Endpoint: "/v1/messages", Model: "m", CanonicalModel: "m", Status: 200, Input: 1, CostNanoUSD: &cost},
		store.Request{ID: "req_epoch", Time: time.UnixMilli(0), Model: "m", Status: 200, Input: 2})
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			if err := s.InsertRequests(ctx, recs); err != nil {
				t.Fatal(err)
			}
			written := make([][]rollupRow, len(rollupTableNames))
			for i, table := range rollupTableNames {
				if written[i] = rollupRows(t, s, table); len(written[i]) < 20 {
					t.Fatalf("%s: %d rows, too few to tell", table, len(written[i]))
				}
			}
			// Down before 00007 and up again: the tables are made anew
			// from the records.
			if err := s.MigrateTo(ctx, 6); err != nil {
				t.Fatal(err)
			}
			if err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			for i, table := range rollupTableNames {
				for j := range written[i] {
					written[i][j].Saved, written[i][j].SavedKnown = 0, 0
				}
				// The back-fill (00007) knows no endpoint, and 00019 keeps
				// the rows it finds: they stand for all their endpoints.
				if d := gocmp.Diff(acrossEndpoints(written[i]), acrossEndpoints(rollupRows(t, s, table))); d != "" {
					t.Errorf("%s: back-filled (+) differs from written (-):\n%s", table, d)
				}
			}
		})
	}
}

// TestRollupReplayedBatch: records written again (a batch retried, or
// replayed from the spill file), twice in one batch, or late, count once,
// in the hour they were made.
func TestRollupReplayedBatch(t *testing.T) {
	ctx := context.Background()
	hour := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	cost := func(n int64) *int64 { return &n }
	rec := func(id string, at time.Duration, in int64) store.Request {
		return store.Request{ID: id, Time: hour.Add(at), KeyID: "key_a", Endpoint: "/v1/messages", Model: "m",
			CanonicalModel: "m", Provider: "p", Status: 200, Input: in, CostNanoUSD: cost(10 * in)}
	}
	a := []store.Request{rec("req_1", time.Minute, 1), rec("req_2", 2*time.Minute, 2), rec("req_3", 90*time.Minute, 4)}
	late := rec("req_late", -5*time.Hour, 8) // made five hours before it is written
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			for _, batch := range [][]store.Request{
				a,
				a,                        // retried whole
				{a[1], late, late, a[0]}, // partly new, one twice
				{late},
			} {
				if err := s.InsertRequests(ctx, batch); err != nil {
					t.Fatal(err)
				}
			}
			got := rollupRows(t, s, "usage_hourly_keys")
			want := []rollupRow{
				{Hour: hour.Add(-5 * time.Hour).UnixMilli(), Key: "key_a", Model: "m", Group: "m", Provider: "p", Usage: true,
					Requests: 1, Input: 8, Cost: cost(80)},
				{Hour: hour.UnixMilli(), Key: "key_a", Model: "m", Group: "m", Provider: "p", Usage: true, Requests: 2, Input: 3, Cost: cost(30)},
				{Hour: hour.Add(time.Hour).UnixMilli(), Key: "key_a", Model: "m", Group: "m", Provider: "p", Usage: true,
					Requests: 1, Input: 4, Cost: cost(40)},
			}
			if d := gocmp.Diff(want, got); d != "" {
				t.Errorf("roll-ups after replays (-want +got):\n%s", d)
			}
			u, err := s.Usage(ctx, store.UsageFilter{Since: hour.Add(-6 * time.Hour), Until: hour.Add(2 * time.Hour), GroupBy: store.ByKey})
			if err != nil || len(u) != 1 || u[0].Requests != 4 || u[0].Input != 15 || *u[0].CostNanoUSD != 150 {
				t.Errorf("usage after replays: %+v %v", u, err)
			}
		})
	}
}

// TestRetentionKeepsRollups: deleting old records removes those records
// only. Usage over whole hours stays exact, an edge inside an hour whose
// records are gone sums what is left of it, and budgets reload all their
// spend.
func TestRetentionKeepsRollups(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(11, 11))
	recs := randomLedger(rng, "", 1500)
	// A cut inside an hour, as a caller other than the ledger's (which
	// cuts at hours) may make.
	cut := rollupBase.Add(30 * time.Hour).Truncate(time.Hour).Add(20*time.Minute + 7*time.Millisecond)
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			if err := s.InsertRequests(ctx, recs); err != nil {
				t.Fatal(err)
			}
			before := make([][]rollupRow, len(rollupTableNames))
			for i, table := range rollupTableNames {
				before[i] = rollupRows(t, s, table)
			}
			var kept []store.Request
			for _, r := range recs {
				if !r.Time.Before(cut) {
					kept = append(kept, r)
				}
			}
			var deleted int64
			for {
				n, err := s.DeleteRequestsBefore(ctx, cut, 100)
				if err != nil {
					t.Fatal(err)
				}
				if n > 100 {
					t.Fatalf("deleted %d records in a batch of 100", n)
				}
				deleted += n
				if n < 100 {
					break
				}
			}
			if left := allRecords(t, s); int(deleted) != len(recs)-len(kept) || len(left) != len(kept) {
				t.Fatalf("deleted %d, %d left; want %d left", deleted, len(left), len(kept))
			}
			for i, table := range rollupTableNames {
				if d := gocmp.Diff(before[i], rollupRows(t, s, table)); d != "" {
					t.Errorf("%s changed by the retention:\n%s", table, d)
				}
			}
			cutHour := cut.Truncate(time.Hour)
			for _, tc := range []struct {
				name         string
				since, until time.Time
				want         []store.Request // the records summed
			}{
				{"whole hours, all before the cut", rollupBase.Truncate(time.Hour), cutHour, recs},
				{"whole hours across the cut", rollupBase.Truncate(time.Hour), cutHour.Add(5 * time.Hour), recs},
				{"an edge after the cut", rollupBase.Truncate(time.Hour), cut.Add(time.Hour + time.Minute), recs},
				// The edge [since, its next hour) is read from records, and those
				// before the cut are gone: exact to the hour.
				{"an edge before the cut", cutHour.Add(-90 * time.Minute), cutHour.Add(3 * time.Hour),
					without(recs, cutHour.Add(-90*time.Minute), cutHour.Add(-time.Hour))},
				{"inside the cut's hour", cutHour.Add(10 * time.Minute), cutHour.Add(50 * time.Minute), kept},
			} {
				for _, by := range groupings {
					f := store.UsageFilter{Since: tc.since, Until: tc.until, GroupBy: by}
					got, err := s.Usage(ctx, f)
					if err != nil {
						t.Fatal(err)
					}
					if d := gocmp.Diff(naiveUsage(tc.want, f), got); d != "" {
						t.Errorf("%s, by %s (-want +got):\n%s", tc.name, by, d)
					}
				}
			}
			// A budget's total since before the cut: every hour's spend.
			for _, slot := range []time.Duration{0, time.Hour, 24 * time.Minute} {
				since := rollupBase.Add(-time.Hour)
				total, bySlot, err := s.Spend(ctx, "", nil, since, slot)
				wantTotal, wantSlots := naiveSpend(recs, "", nil, since, slot)
				if err != nil || total != wantTotal {
					t.Errorf("slot %s: total %d %v, want %d", slot, total, err, wantTotal)
				}
				if slot == 24*time.Minute {
					// Hours a slot boundary cuts whose records are gone go to
					// their later slot, whole.
					wantSlots = map[int64]int64{}
					for _, r := range recs {
						if r.CostNanoUSD == nil || *r.CostNanoUSD == 0 {
							continue
						}
						ms, slotMS := r.Time.UnixMilli(), slot.Milliseconds()
						h := ms - ms%3_600_000
						if h/slotMS != (h+3_599_999)/slotMS && r.Time.Before(cut.Add(time.Hour).Truncate(time.Hour)) {
							ms = h + 3_599_999
						}
						wantSlots[ms/slotMS] += *r.CostNanoUSD
					}
				}
				if !mapsEqual(bySlot, wantSlots) {
					t.Errorf("slot %s: by slot %v, want %v", slot, bySlot, wantSlots)
				}
			}
		})
	}
}

// without is recs but those in [from, to).
func without(recs []store.Request, from, to time.Time) []store.Request {
	var out []store.Request
	for _, r := range recs {
		if r.Time.Before(from) || !r.Time.Before(to) {
			out = append(out, r)
		}
	}
	return out
}

// TestRollupHostileText: names with quotes, backslashes, control
// characters, invalid UTF-8 and NUL reach the roll-ups as they are stored,
// and their usage equals their records'.
func TestRollupHostileText(t *testing.T) {
	ctx := context.Background()
	hour := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	names := []string{`q"uote`, `back\slash`, "tab\tnew\nline\x01", "bad\xffutf8", "nul\x00", "émoji 🚀", `{"json":[1]}`, "\u2028"}
	var recs []store.Request
	for i, n := range names {
		recs = append(recs, store.Request{ID: fmt.Sprintf("req_%d", i), Time: hour.Add(time.Duration(i) * time.Minute), KeyID: "key_" + n,
			Endpoint: "/v1/messages", Model: n, CanonicalModel: n, Provider: n, Status: 200, Input: int64(i + 1)})
	}
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			if err := s.InsertRequests(ctx, recs); err != nil {
				t.Fatal(err)
			}
			stored := allRecords(t, s)
			for _, by := range groupings {
				f := store.UsageFilter{Since: hour, Until: hour.Add(time.Hour), GroupBy: by}
				got, err := s.Usage(ctx, f)
				if err != nil {
					t.Fatal(err)
				}
				// Sorted alike: the database's collation is not Go's for these.
				byGroup := func(a, b store.UsageGroup) int { return cmp.Compare(a.Group, b.Group) }
				slices.SortFunc(got, byGroup)
				want := naiveUsage(stored, f)
				slices.SortFunc(want, byGroup)
				if d := gocmp.Diff(want, got); d != "" {
					t.Errorf("by %s (-records +roll-ups):\n%s", by, d)
				}
			}
		})
	}
}

// Records of paths no endpoint has (a client may send any) add to one
// roll-up row, not one row each.
func TestRollupUnknownPathsShareARow(t *testing.T) {
	s := storetest.SQLite(t)
	var recs []store.Request
	for i := range 50 {
		recs = append(recs, store.Request{ID: fmt.Sprintf("req_%d", i), Time: rollupBase.Add(time.Duration(i) * time.Second),
			Endpoint: fmt.Sprintf("/v1/x%d", i), Status: 404, ErrorType: "not_found_error"})
	}
	if err := s.InsertRequests(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"usage_hourly", "usage_daily"} {
		var n int
		if err := s.DB().QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil || n != 1 {
			t.Errorf("%s: %d rows (%v), want 1", table, n, err)
		}
	}
}
