package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/tollgate/tollgate/internal/store"
)

// TestRollupUsageByUserAndTeam is TestRollupUsageEqualsRecords for users
// and teams: by user, by team and by session, filtered by user, team or
// key, and by two of those at once (which no roll-up serves), Usage
// equals the sums of the records, and so does SpendOf.
func TestRollupUsageByUserAndTeam(t *testing.T) {
	ctx := context.Background()
	groupBys := []store.GroupBy{store.ByModel, store.ByKey, store.ByUser, store.ByTeam, store.BySession, store.ByDay, store.ByProvider, store.ByEndpoint}
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 0x0e5e))
			insertShuffled(t, s, rng, randomLedger(rng, "p", 2500))
			all := allRecords(t, s)
			users := []string{"", "usr_b", "usr_nobody"}
			teams := []string{"", "team_x", "team_nobody"}
			keys := []string{"", "key_c"}
			checked := 0
			for range 25 {
				since, until := randomWindow(rng)
				for _, by := range groupBys {
					f := store.UsageFilter{Since: since, Until: until, GroupBy: by, UserID: users[rng.IntN(3)], TeamID: teams[rng.IntN(3)]}
					if rng.IntN(4) == 0 {
						f.KeyID = keys[rng.IntN(2)]
					}
					got, err := s.Usage(ctx, f)
					if err != nil {
						t.Fatal(err)
					}
					if d := gocmp.Diff(naiveUsage(all, f), got); d != "" {
						t.Fatalf("Usage(%s .. %s, by %s, key %q, user %q, team %q) (-records +got):\n%s",
							since.Format(time.RFC3339Nano), until.Format(time.RFC3339Nano), by, f.KeyID, f.UserID, f.TeamID, d)
					}
					checked++
				}
			}
			for range 60 {
				since, _ := randomWindow(rng)
				kind := []string{store.SpendKey, store.SpendUser, store.SpendTeam}[rng.IntN(3)]
				id := map[string][]string{store.SpendKey: {"", "key_a"}, store.SpendUser: {"", "usr_a", "usr_nobody"},
					store.SpendTeam: {"", "team_y"}}[kind]
				who := id[rng.IntN(len(id))]
				models := [][]string{nil, {"m-alpha", "alpha"}, {"gpt-nope"}}[rng.IntN(3)]
				slot := []time.Duration{0, time.Hour, 24 * time.Minute, 10080 * time.Second}[rng.IntN(4)]
				total, bySlot, err := s.SpendOf(ctx, kind, who, models, since, slot)
				if err != nil {
					t.Fatal(err)
				}
				wantTotal, wantSlots := naiveSpendOf(all, kind, who, models, since, slot)
				if total != wantTotal || !mapsEqual(bySlot, wantSlots) {
					t.Fatalf("SpendOf(%s %q, %v, %s, %s) = %d %v, want %d %v", kind, who, models, since, slot, total, bySlot, wantTotal, wantSlots)
				}
			}
			if _, _, err := s.SpendOf(ctx, "org", "x", nil, rollupBase, 0); err == nil {
				t.Error("SpendOf of an unknown kind: no error")
			}
			t.Logf("%d records, %d usage queries checked", len(all), checked)
		})
	}
}

// TestPrincipalRollupBackfill: 00015 back-fills usage by user and team
// from the roll-ups over all keys, under no user and no team (every
// record before it had none): the rows InsertRequests adds for the same
// records.
func TestPrincipalRollupBackfill(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(9, 9))
	recs := randomLedger(rng, "", 1500)
	for i := range recs {
		recs[i].UserID, recs[i].TeamID, recs[i].SessionID = "", "", ""
	}
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			if err := s.InsertRequests(ctx, recs); err != nil {
				t.Fatal(err)
			}
			written := principalRows(t, s)
			if len(written) < 40 {
				t.Fatalf("%d rows, too few to tell", len(written))
			}
			if err := s.MigrateTo(ctx, 14); err != nil {
				t.Fatal(err)
			}
			if err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			if d := gocmp.Diff(written, principalRows(t, s)); d != "" {
				t.Errorf("back-filled (+) differs from written (-):\n%s", d)
			}
		})
	}
}

// principalRows reads both principal roll-ups, as text in a fixed order.
func principalRows(t *testing.T, s *store.Store) []string {
	t.Helper()
	var out []string
	for _, q := range []string{
		"SELECT hour, kind, principal_id, model, model_group, provider, is_usage, requests, errors, input_tokens, cache_read_tokens, " +
			"cache_write_5m_tokens, cache_write_1h_tokens, output_tokens, reasoning_tokens, COALESCE(cost_nano_usd, -1), unpriced, estimated, " +
			"cache_savings_nano, cache_savings_known FROM usage_hourly_principals ORDER BY hour, kind, principal_id, model, model_group, provider, is_usage",
		"SELECT day, kind, principal_id, '', '', '', is_usage, requests, errors, input_tokens, cache_read_tokens, " +
			"cache_write_5m_tokens, cache_write_1h_tokens, output_tokens, reasoning_tokens, COALESCE(cost_nano_usd, -1), unpriced, estimated, " +
			"cache_savings_nano, cache_savings_known FROM usage_daily_principals ORDER BY day, kind, principal_id, is_usage",
	} {
		rows, err := s.DB().Query(q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var bucket int64
			var kind, id, model, group, provider string
			var usage bool
			n := make([]int64, 13)
			dest := []any{&bucket, &kind, &id, &model, &group, &provider, &usage}
			for i := range n {
				dest = append(dest, &n[i])
			}
			if err := rows.Scan(dest...); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprint(bucket, kind, id, model, group, provider, usage, n))
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	return out
}
