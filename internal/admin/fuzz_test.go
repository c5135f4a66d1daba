package admin_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/admin"
	"github.com/tollgate/tollgate/internal/auth"
	"github.com/tollgate/tollgate/internal/store/storetest"
)

// FuzzAdminInput sends arbitrary bodies and query strings to the admin
// API: every answer is below 500 and, when an error, in the envelope.
func FuzzAdminInput(f *testing.F) {
	f.Add(`{"name":"a","models":[],"metadata":{"k":[1,2]},"expires_at":"2099-01-01T00:00:00Z"}`, "since=7d&group_by=day")
	f.Add(`{"name":"","expires_at":null}`, "since=2026-11-01&until=2026-11-02")
	f.Add(`{"models":null,"metadata":"x"}`, "limit=5&after_id=req_x&status=200")
	f.Add(`[`, "group_by=%zz")
	db := storetest.Open(f)["sqlite"]
	a := auth.New(master, auth.NewCache(db, nil))
	h := admin.Handler(admin.New(db, nil, nil, slog.New(slog.DiscardHandler)), a)
	// One key to patch.
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/admin/keys", strings.NewReader(`{"name":"fuzz"}`))
	req.Header.Set("X-Api-Key", master)
	h.ServeHTTP(rec, req)
	var k admin.KeyView
	if err := json.Unmarshal(rec.Body.Bytes(), &k); err != nil || k.ID == "" {
		f.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	f.Fuzz(func(t *testing.T, body, query string) {
		for _, r := range []struct{ method, target string }{
			{"POST", "/admin/keys"},
			{"PATCH", "/admin/keys/" + k.ID},
			{"GET", "/admin/usage?" + query},
			{"GET", "/admin/requests?" + query},
		} {
			req, err := http.NewRequest(r.method, "http://x"+r.target, strings.NewReader(body))
			if err != nil {
				return // not a request a client could send
			}
			req.Header.Set("X-Api-Key", master)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code >= 500 {
				t.Fatalf("%s %s %q: %d %s", r.method, r.target, body, rec.Code, rec.Body)
			}
			if rec.Code >= 400 {
				var e admin.ErrorBody
				if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Type != "error" || e.Error.Message == "" {
					t.Fatalf("%s %s %q: error not in the envelope: %s", r.method, r.target, body, rec.Body)
				}
			}
		}
	})
}
