package admin_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/admin"
	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/store/storetest"
)

// Usage, the request log and the agent sessions by user, team and
// session, from records on a fixed day.
func TestAttribution(t *testing.T) {
	for name, db := range storetest.Open(t) {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, db)
			day := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
			cost := func(n int64) *int64 { return &n }
			rec := func(i int, user, team, session string, input, cacheRead int64) store.Request {
				return store.Request{ID: fmt.Sprintf("req_%02d", i), Time: day.Add(time.Duration(i) * time.Minute), KeyID: "key_a",
					Endpoint: "/v1/messages", Model: "echo", CanonicalModel: "echo", Provider: "demo", Status: 200, Input: input,
					CacheRead: cacheRead, CostNanoUSD: cost(input + cacheRead), UserID: user, TeamID: team, SessionID: session}
			}
			if err := db.InsertRequests(context.Background(), []store.Request{
				rec(1, "usr_a", "team_x", "s1", 100, 300),
				rec(2, "usr_a", "team_x", "s1", 100, 500),
				rec(3, "usr_b", "team_x", "s2", 40, 0),
				rec(4, "usr_b", "team_y", "", 10, 0),
				rec(5, "", "", "", 7, 0),
			}); err != nil {
				t.Fatal(err)
			}
			span := "since=2026-11-22T00:00:00Z&until=2026-11-23T00:00:00Z"
			for _, tc := range []struct {
				query string
				want  string // group:requests, in order
			}{
				{"group_by=user", ":1 usr_a:2 usr_b:2"},
				{"group_by=team", ":1 team_x:3 team_y:1"},
				{"group_by=session", ":2 s1:2 s2:1"},
				{"group_by=team&user_id=usr_b", "team_x:1 team_y:1"},
				{"group_by=user&team_id=team_x", "usr_a:2 usr_b:1"},
			} {
				var rep admin.UsageReport
				if status, body := e.call("GET", "/admin/usage?"+tc.query+"&"+span, master, "", &rep); status != 200 {
					t.Fatalf("usage?%s: %d %v", tc.query, status, body)
				}
				var got []string
				for _, g := range rep.Data {
					got = append(got, fmt.Sprintf("%s:%d", g.Group, g.Requests))
				}
				if strings.Join(got, " ") != tc.want {
					t.Errorf("usage?%s: %v, want %s", tc.query, got, tc.want)
				}
			}
			for query, want := range map[string]string{
				"user_id=usr_b":                "req_04 req_03",
				"team_id=team_x&user_id=usr_a": "req_02 req_01",
				"session_id=s2":                "req_03",
				"session_id=s9":                "",
			} {
				var page admin.RequestPage
				if status, body := e.call("GET", "/admin/requests?"+query, master, "", &page); status != 200 {
					t.Fatalf("requests?%s: %d %v", query, status, body)
				}
				var got []string
				for _, r := range page.Data {
					got = append(got, r.ID)
					if r.UserID == nil || r.SessionID != nil && *r.SessionID == "" {
						t.Errorf("requests?%s: record %s: user %v, session %v", query, r.ID, r.UserID, r.SessionID)
					}
				}
				if strings.Join(got, " ") != want {
					t.Errorf("requests?%s: %v, want %s", query, got, want)
				}
			}
			var sessions admin.SessionList
			if status, body := e.call("GET", "/admin/sessions?"+span, master, "", &sessions); status != 200 || len(sessions.Data) != 2 {
				t.Fatalf("sessions: %d %v", status, body)
			}
			s1 := sessions.Data[1]
			if sessions.Data[0].SessionID != "s2" || s1.SessionID != "s1" || s1.Requests != 2 || s1.Tokens.CacheRead != 800 ||
				s1.CacheReadShare != 0.8 || s1.CostNanoUSD == nil || *s1.CostNanoUSD != 1000 || *s1.UserID != "usr_a" ||
				*s1.TeamID != "team_x" || *s1.KeyID != "key_a" || !s1.FirstSeen.Equal(day.Add(time.Minute)) {
				t.Errorf("sessions: %+v", sessions.Data)
			}
			for query, want := range map[string]int{"user_id=usr_b": 1, "team_id=team_y": 0, "key_id=key_a&limit=1": 1,
				"since=2026-11-23": 0, "until=2026-11-22T09:02:00Z": 1} {
				var l admin.SessionList
				if status, body := e.call("GET", "/admin/sessions?"+query, master, "", &l); status != 200 || len(l.Data) != want {
					t.Errorf("sessions?%s: %d, %d sessions, want %d: %v", query, status, len(l.Data), want, body)
				}
			}
			for _, bad := range []struct{ path, want string }{
				{"/admin/sessions?limit=0", "limit"},
				{"/admin/sessions?since=2026-11-23&until=2026-11-22", "before"},
				{"/admin/sessions?session=s1", "session"},
				{"/admin/sessions?user_id=%00", "user_id: must not contain NUL"},
				{"/admin/usage?group_by=org", "user, team, session"},
				{"/admin/usage?user_id=%ff", "user_id: not valid UTF-8"},
				{"/admin/requests?session_id=%00", "session_id: must not contain NUL"},
			} {
				if status, body := e.call("GET", bad.path, master, "", nil); status != 400 || !strings.Contains(fmt.Sprint(body["error"]), bad.want) {
					t.Errorf("%s: %d %v; want 400 mentioning %q", bad.path, status, body, bad.want)
				}
			}
		})
	}
}
