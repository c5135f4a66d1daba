package store_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/tollgate/tollgate/internal/store"
)

// TestAgentSessionsEqualRecords: whatever the batches and their order
// (replays included), each session's row sums its records, with the team
// and model of its latest record.
func TestAgentSessionsEqualRecords(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, 0x5e55))
			recs := randomLedger(rng, "s", 1200)
			// Distinct times, so that "the latest record" is one.
			for i := range recs {
				recs[i].Time = recs[i].Time.Truncate(time.Millisecond).Add(time.Duration(i) * time.Microsecond)
			}
			insertShuffled(t, s, rng, recs)
			all := allRecords(t, s)
			want := map[[3]string]*store.AgentSession{}
			for _, r := range all {
				if r.SessionID == "" {
					continue
				}
				k := [3]string{r.SessionID, r.KeyID, r.UserID}
				a := want[k]
				if a == nil {
					a = &store.AgentSession{SessionID: r.SessionID, KeyID: r.KeyID, UserID: r.UserID, FirstSeen: r.Time, LastSeen: r.Time,
						TeamID: r.TeamID, Model: r.Model}
					want[k] = a
				}
				if r.Time.Before(a.FirstSeen) {
					a.FirstSeen = r.Time
				}
				if !r.Time.Before(a.LastSeen) {
					a.LastSeen, a.TeamID, a.Model = r.Time, r.TeamID, r.Model
				}
				a.Requests++
				a.Input += r.Input
				a.CacheRead += r.CacheRead
				a.CacheWrite += r.CacheWrite5m + r.CacheWrite1h
				a.Output += r.Output
				if r.CostNanoUSD != nil {
					if a.CostNanoUSD == nil {
						a.CostNanoUSD = new(int64)
					}
					*a.CostNanoUSD += *r.CostNanoUSD
				}
			}
			var wantList []store.AgentSession
			for _, a := range want {
				wantList = append(wantList, *a)
			}
			sortSessions := func(l []store.AgentSession) {
				slices.SortFunc(l, func(a, b store.AgentSession) int {
					return strings.Compare(a.SessionID+"/"+a.KeyID+"/"+a.UserID, b.SessionID+"/"+b.KeyID+"/"+b.UserID)
				})
			}
			sortSessions(wantList)
			got, err := s.AgentSessions(ctx, store.SessionFilter{Limit: 1000})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.IsSortedFunc(got, func(a, b store.AgentSession) int { return b.LastSeen.Compare(a.LastSeen) }) {
				t.Error("not the most recently active first")
			}
			sortSessions(got)
			if d := gocmp.Diff(wantList, got); d != "" {
				t.Fatalf("agent sessions (-records +got):\n%s", d)
			}

			for _, tc := range []struct {
				name string
				f    store.SessionFilter
				keep func(store.AgentSession) bool
			}{
				{"user", store.SessionFilter{UserID: "usr_b"}, func(a store.AgentSession) bool { return a.UserID == "usr_b" }},
				{"team", store.SessionFilter{TeamID: "team_x"}, func(a store.AgentSession) bool { return a.TeamID == "team_x" }},
				{"key", store.SessionFilter{KeyID: "key_a"}, func(a store.AgentSession) bool { return a.KeyID == "key_a" }},
				{"window", store.SessionFilter{Since: rollupBase.Add(70 * time.Hour), Until: rollupBase.Add(71 * time.Hour)},
					func(a store.AgentSession) bool {
						return !a.LastSeen.Before(rollupBase.Add(70*time.Hour)) && a.FirstSeen.Before(rollupBase.Add(71*time.Hour))
					}},
			} {
				got, err := s.AgentSessions(ctx, tc.f)
				if err != nil {
					t.Fatal(err)
				}
				var w []store.AgentSession
				for _, a := range wantList {
					if tc.keep(a) {
						w = append(w, a)
					}
				}
				sortSessions(got)
				if len(w) == 0 || !gocmp.Equal(w, got) {
					t.Errorf("%s: %d sessions, want %d", tc.name, len(got), len(w))
				}
			}
			if got, err := s.AgentSessions(ctx, store.SessionFilter{Limit: 2}); err != nil || len(got) != 2 {
				t.Errorf("limit: %d, %v", len(got), err)
			}
		})
	}
}

func TestCacheReadShare(t *testing.T) {
	for _, tc := range []struct {
		a    store.AgentSession
		want float64
	}{
		{store.AgentSession{}, 0},
		{store.AgentSession{Input: 100, CacheRead: 300}, 0.75},
		{store.AgentSession{Input: 10, CacheRead: 80, CacheWrite: 10}, 0.8},
		{store.AgentSession{Output: 50}, 0},
	} {
		if got := tc.a.CacheReadShare(); got != tc.want {
			t.Errorf("%+v: %v, want %v", tc.a, got, tc.want)
		}
	}
}

// The request log filters by user, team and agent session.
func TestRequestsByUserTeamSession(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(11, 11))
			recs := randomLedger(rng, "f", 600)
			if err := s.InsertRequests(ctx, recs); err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct {
				f    store.RequestFilter
				keep func(store.Request) bool
			}{
				{store.RequestFilter{UserID: "usr_a"}, func(r store.Request) bool { return r.UserID == "usr_a" }},
				{store.RequestFilter{TeamID: "team_y"}, func(r store.Request) bool { return r.TeamID == "team_y" }},
				{store.RequestFilter{SessionID: "sess-2"}, func(r store.Request) bool { return r.SessionID == "sess-2" }},
				{store.RequestFilter{UserID: "usr_c", TeamID: "team_x", SessionID: "sess-1"}, func(r store.Request) bool {
					return r.UserID == "usr_c" && r.TeamID == "team_x" && r.SessionID == "sess-1"
				}},
			} {
				tc.f.Limit = 1000
				got, err := s.Requests(ctx, tc.f)
				if err != nil {
					t.Fatal(err)
				}
				want := 0
				for _, r := range recs {
					if tc.keep(r) {
						want++
					}
				}
				if len(got) != want || want == 0 {
					t.Errorf("%+v: %d records, want %d", tc.f, len(got), want)
				}
				for _, r := range got {
					if !tc.keep(r) {
						t.Errorf("%+v: got %s of %q/%q/%q", tc.f, r.ID, r.UserID, r.TeamID, r.SessionID)
					}
				}
			}
		})
	}
}
