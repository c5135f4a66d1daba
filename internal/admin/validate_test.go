package admin_test

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/admin"
	"github.com/tollgate/tollgate/internal/auth"
	"github.com/tollgate/tollgate/internal/store/storetest"
)

// Text a database cannot hold as it is (NUL, invalid UTF-8), names that
// would print as something else (control characters), and oversized
// fields get 400 naming the field, on every back end, and nothing is
// stored.
func TestAdminRefusesUnstorableText(t *testing.T) {
	many := `"e"` + strings.Repeat(`,"e"`, 256)
	manyLimits := `"m0":{"rpm":1}`
	for i := 1; i <= 256; i++ {
		manyLimits += fmt.Sprintf(`,"m%d":{"rpm":1}`, i)
	}
	for name, db := range storetest.Open(t) {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, db)
			var k admin.KeyView
			e.call("POST", "/admin/keys", master, `{"name":"x"}`, &k)
			tests := []struct {
				method, path, body, want string
			}{
				{"POST", "/admin/keys", `{"name":"a\u0000b"}`, "name: must not contain NUL"},
				{"POST", "/admin/keys", "{\"name\":\"a\xffb\"}", "invalid UTF-8"},
				{"POST", "/admin/keys", `{"name":"line one\nline two"}`, "name: must not contain control characters"},
				{"POST", "/admin/keys", `{"name":"\u001b[31mred\u001b[0m"}`, "name: must not contain control characters"},
				{"POST", "/admin/keys", `{"name":"tab\there"}`, "name: must not contain control characters"},
				{"POST", "/admin/keys", `{"name":"evil\u202etxt.exe"}`, "name: must not contain control characters"},
				{"POST", "/admin/keys", `{"name":"` + strings.Repeat("n", 201) + `"}`, "name: at most 200 bytes"},
				{"POST", "/admin/keys", `{"name":"a","models":["e\u0000"]}`, "models[0]: must not contain NUL"},
				{"POST", "/admin/keys", `{"name":"a","models":["e","\u001b[2J"]}`, "models[1]: must not contain control characters"},
				{"POST", "/admin/keys", `{"name":"a","models":[` + many + `]}`, "models: at most 256"},
				{"POST", "/admin/keys", `{"name":"a","metadata":{"k":"v\u0000"}}`, "metadata: must not contain NUL"},
				{"POST", "/admin/keys", `{"name":"a","metadata":{"k\u0000":1}}`, "metadata: must not contain NUL"},
				{"POST", "/admin/keys", `{"name":"a","metadata":{"k":"` + strings.Repeat("x", 17<<10) + `"}}`, "metadata: at most 16 KiB"},
				{"POST", "/admin/keys", `{"name":"a","model_limits":{"e\u0000":{"rpm":1}}}`, "model_limits: a model name: must not contain NUL"},
				{"POST", "/admin/keys", `{"name":"a","model_limits":{` + manyLimits + `}}`, "model_limits: at most 256"},
				{"PATCH", "/admin/keys/" + k.ID, `{"name":"\u0000"}`, "name: must not contain NUL"},
				{"PATCH", "/admin/keys/" + k.ID, `{"models":["\u0000"]}`, "models[0]: must not contain NUL"},
				{"PATCH", "/admin/keys/" + k.ID, `{"metadata":{"a":["\u0000"]}}`, "metadata: must not contain NUL"},
				{"GET", "/admin/keys/key_%00", ``, "id: must not contain NUL"},
				{"DELETE", "/admin/keys/%ff", ``, "id: not valid UTF-8"},
				{"GET", "/admin/requests?key=a%00b", ``, "key: must not contain NUL"},
				{"GET", "/admin/requests?model=%ff", ``, "model: not valid UTF-8"},
				{"GET", "/admin/requests?after_id=" + strings.Repeat("r", 300), ``, "after_id: at most 256 bytes"},
				{"GET", "/admin/usage?key=a%00b", ``, "key: must not contain NUL"},
			}
			for _, tc := range tests {
				status, body := e.call(tc.method, tc.path, master, tc.body, nil)
				if status != http.StatusBadRequest || errType(body) != "invalid_request_error" || !strings.Contains(fmt.Sprint(body["error"]), tc.want) {
					t.Errorf("%s %s %.80q: %d %v; want 400 mentioning %q", tc.method, tc.path, tc.body, status, body, tc.want)
				}
			}
			var list admin.KeyList
			if e.call("GET", "/admin/keys", master, "", &list); len(list.Data) != 1 || list.Data[0].Name != "x" {
				t.Errorf("refused keys were stored or changed: %+v", list.Data)
			}
			// Text that is merely unusual is fine.
			var ok admin.KeyView
			if status, body := e.call("POST", "/admin/keys", master, `{"name":"équipe données — 🚀","metadata":{"note":"line\none"}}`, &ok); status != 201 || ok.Name != "équipe données — 🚀" {
				t.Errorf("a plain Unicode name: %d %v", status, body)
			}
		})
	}
}

// The admin API answers a throttled key 429 with retry-after, and an
// invalid key the same way whatever the reason.
func TestAdminAuthErrors(t *testing.T) {
	db := storetest.Open(t)["sqlite"]
	th := auth.NewThrottle(auth.ThrottleOptions{MaxFailures: 3, Window: time.Minute})
	h := admin.Handler(admin.New(db, nil, nil, slog.New(slog.DiscardHandler)), auth.New(master, auth.NewCache(db, nil), auth.WithThrottle(th)))
	call := func(headers http.Header) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", "/admin/keys", nil)
		req.RemoteAddr = "203.0.113.5:1234"
		req.Header = headers
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	if rec := call(http.Header{"X-Api-Key": {master, master}}); rec.Code != 400 || !strings.Contains(rec.Body.String(), "more than one") {
		t.Errorf("two x-api-key headers: %d %s", rec.Code, rec.Body)
	}
	for i := 0; i < 3; i++ {
		if rec := call(http.Header{"X-Api-Key": {"sk-tg-guess"}}); rec.Code != 401 || !strings.Contains(rec.Body.String(), `"invalid API key"`) {
			t.Fatalf("wrong key: %d %s", rec.Code, rec.Body)
		}
	}
	rec := call(http.Header{"X-Api-Key": {"sk-tg-guess"}})
	if rec.Code != 429 || rec.Header().Get("Retry-After") != "60" || !strings.Contains(rec.Body.String(), "rate_limit_error") {
		t.Errorf("throttled: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
	if rec := call(http.Header{"X-Api-Key": {master}}); rec.Code != 200 {
		t.Errorf("the master key from the throttled address: %d %s", rec.Code, rec.Body)
	}
	if !errors.Is(auth.ErrRevokedKey, auth.ErrInvalidKey) {
		t.Error("a revoked key must read as an invalid key")
	}
}
