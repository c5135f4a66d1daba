package admin_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/admin"
	"github.com/tollgate/tollgate/internal/auth"
	"github.com/tollgate/tollgate/internal/clock"
	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/store/storetest"
)

// GET /admin/audit pages the log newest first and filters it; every
// change names its actor, client and request id.
func TestAuditLog(t *testing.T) {
	for name, db := range storetest.Open(t) {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, db)
			var ids []string
			for i := 0; i < 5; i++ {
				var k admin.KeyView
				e.call("POST", "/admin/keys", master, fmt.Sprintf(`{"name":"k%d"}`, i), &k)
				ids = append(ids, k.ID)
			}
			e.call("DELETE", "/admin/keys/"+ids[0], master, "", nil)

			var all admin.AuditPage
			if status, body := e.call("GET", "/admin/audit", master, "", &all); status != 200 || len(all.Data) != 6 || all.HasMore {
				t.Fatalf("audit: %d %v", status, body)
			}
			newest := all.Data[0]
			if newest.Action != admin.ActionKeyRevoked || newest.TargetID == nil || *newest.TargetID != ids[0] || newest.TargetKind != "key" ||
				newest.ActorKind != admin.ActorMaster || newest.ActorID != nil || !strings.HasPrefix(newest.RequestID, "req_") ||
				newest.ClientIP != "127.0.0.1" || !strings.Contains(string(newest.Detail), `"name":"k0"`) {
				t.Errorf("newest event: %+v", newest)
			}

			// Pages of two, by before=last_id, see each event once.
			seen := map[int64]bool{}
			before := ""
			for pages := 1; ; pages++ {
				var page admin.AuditPage
				path := "/admin/audit?limit=2&action=key_created"
				if before != "" {
					path += "&before=" + before
				}
				if status, body := e.call("GET", path, master, "", &page); status != 200 {
					t.Fatalf("%s: %d %v", path, status, body)
				}
				for _, ev := range page.Data {
					if seen[ev.ID] || ev.Action != admin.ActionKeyCreated {
						t.Fatalf("page %d: event %+v seen twice or of another action", pages, ev)
					}
					seen[ev.ID] = true
				}
				if !page.HasMore {
					if pages != 3 || len(seen) != 5 {
						t.Fatalf("%d pages, %d events; want 3 pages, 5 events", pages, len(seen))
					}
					break
				}
				before = fmt.Sprint(*page.LastID)
			}

			var byTarget admin.AuditPage
			if e.call("GET", "/admin/audit?target_id="+ids[0], master, "", &byTarget); len(byTarget.Data) != 2 {
				t.Errorf("by target: %+v", byTarget.Data)
			}
			var none admin.AuditPage
			if e.call("GET", "/admin/audit?actor_id=usr_nobody", master, "", &none); len(none.Data) != 0 || none.FirstID != nil {
				t.Errorf("by an actor that did nothing: %+v", none)
			}
			var later admin.AuditPage
			if e.call("GET", "/admin/audit?since=2099-01-01", master, "", &later); len(later.Data) != 0 {
				t.Errorf("since a future date: %+v", later.Data)
			}
			var earlier admin.AuditPage
			if e.call("GET", "/admin/audit?until=2000-01-01", master, "", &earlier); len(earlier.Data) != 0 {
				t.Errorf("until a past date: %+v", earlier.Data)
			}
		})
	}
}

func TestAuditBadInput(t *testing.T) {
	e := newEnv(t, storetest.Open(t)["sqlite"])
	tests := []struct{ path, want string }{
		{"/admin/audit?limit=0", "limit"},
		{"/admin/audit?limit=1001", "limit"},
		{"/admin/audit?before=abc", "before"},
		{"/admin/audit?before=-3", "before"},
		{"/admin/audit?since=yesterday", "since"},
		{"/admin/audit?since=2026-11-02&until=2026-11-01", "before"},
		{"/admin/audit?actor=x", "actor"},
		{"/admin/audit?action=%00", "action: must not contain NUL"},
	}
	for _, tc := range tests {
		status, body := e.call("GET", tc.path, master, "", nil)
		if status != 400 || errType(body) != "invalid_request_error" || !strings.Contains(fmt.Sprint(body["error"]), tc.want) {
			t.Errorf("%s: %d %v; want 400 mentioning %q", tc.path, status, body, tc.want)
		}
	}
	if status, body := e.call("POST", "/admin/audit", master, "{}", nil); status != 405 {
		t.Errorf("POST /admin/audit: %d %v", status, body)
	}
}

// A caller that knows who acts (the console, for a signed-in operator)
// names them with WithActor; the Service used directly is the system.
func TestAuditActor(t *testing.T) {
	db := storetest.Open(t)["sqlite"]
	svc := admin.New(db, nil, nil, slog.New(slog.DiscardHandler))
	h := admin.Handler(svc, auth.New(master, auth.NewCache(db, nil)))
	person := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(admin.WithActor(r.Context(), admin.ActorUser, "usr_operator")))
	})
	req := httptest.NewRequest("POST", "/admin/teams", strings.NewReader(`{"name":"ops"}`))
	req.Header.Set("X-Api-Key", master)
	rec := httptest.NewRecorder()
	person.ServeHTTP(rec, req)
	if rec.Code != 201 {
		t.Fatalf("create team: %d %s", rec.Code, rec.Body)
	}
	if _, err := svc.CreateUser(context.Background(), admin.CreateUser{Subject: "cli-made"}); err != nil {
		t.Fatal(err)
	}
	events, err := db.Audit(context.Background(), store.AuditFilter{})
	if err != nil || len(events) != 2 {
		t.Fatalf("%+v %v", events, err)
	}
	if ev := events[1]; ev.ActorKind != admin.ActorUser || ev.ActorID != "usr_operator" || ev.Action != admin.ActionTeamCreated {
		t.Errorf("the operator's change: %+v", ev)
	}
	if ev := events[0]; ev.ActorKind != admin.ActorSystem || ev.Action != admin.ActionUserCreated || ev.Time.After(clock.Now()) {
		t.Errorf("the Service's own change: %+v", ev)
	}
}
