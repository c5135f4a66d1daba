package admin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/admin"
	"github.com/tollgate/tollgate/internal/auth"
	"github.com/tollgate/tollgate/internal/cli"
	"github.com/tollgate/tollgate/internal/clock"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/ledger"
	"github.com/tollgate/tollgate/internal/outcome"
	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/store/storetest"
)

const master = "sk-master-admin-test"

// syncLedger writes each record at once, so a test can read it back.
type syncLedger struct {
	t  *testing.T
	db *store.Store
}

func (l syncLedger) Record(o *outcome.Request) {
	r := ledger.Row(o)
	if err := l.db.InsertRequests(context.Background(), []store.Request{r}); err != nil {
		l.t.Errorf("ledger: %v", err)
	}
}

type env struct {
	t   *testing.T
	srv *httptest.Server
	db  *store.Store
}

func newEnv(t *testing.T, db *store.Store) *env {
	t.Helper()
	return newEnvWith(t, db, `
providers:
  - { name: demo, type: echo }
  - { name: nowhere, type: openai, base_url: "http://127.0.0.1:1/v1" } # never reached: its model has no price
models:
  - { name: echo, aliases: [e], targets: [ { provider: demo } ], pricing: { input: "3", output: "15" } }
  - { name: other, targets: [ { provider: demo } ] }
  - { name: unpriced, targets: [ { provider: nowhere, model: made-up-model } ] }
`)
}

// newEnvWith is a gateway on db with the configuration yaml.
func newEnvWith(t *testing.T, db *store.Store, yaml string) *env {
	t.Helper()
	cfg, err := config.Parse([]byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	built, err := cli.Build(cfg, cli.Options{MasterKey: master, Logger: slog.New(slog.DiscardHandler), Store: db, Ledger: syncLedger{t, db}})
	if err != nil {
		t.Fatal(err)
	}
	h, closeAll := built.Handler, built.Close
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); closeAll() })
	return &env{t: t, srv: srv, db: db}
}

// call sends a request with key in x-api-key and decodes a JSON answer.
func (e *env) call(method, path, key, body string, out any) (int, map[string]any) {
	e.t.Helper()
	req, _ := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	if key != "" {
		req.Header.Set("X-Api-Key", key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Anthropic-Version", "2023-06-01")
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var generic map[string]any
	if err := json.Unmarshal(raw, &generic); err != nil {
		e.t.Fatalf("%s %s: answer is not JSON: %q", method, path, raw)
	}
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			e.t.Fatalf("%s %s: %v in %s", method, path, err, raw)
		}
	}
	return resp.StatusCode, generic
}

func errType(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["type"].(string)
	return s
}

const message = `{"model":%q,"max_tokens":16,"messages":[{"role":"user","content":"hello"}]}`

func TestKeysEndToEnd(t *testing.T) {
	for name, db := range storetest.Open(t) {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, db)

			var created admin.KeyView
			status, _ := e.call("POST", "/admin/keys", master,
				`{"name":"ci","models":["e"],"metadata":{"team":"infra"},"expires_at":"2099-01-01T00:00:00Z"}`, &created)
			if status != http.StatusCreated || !strings.HasPrefix(created.Key, "sk-tg-") || created.ID == "" ||
				!strings.HasPrefix(created.Key, created.Prefix) || len(created.Prefix) >= len(created.Key) ||
				created.ExpiresAt == nil || string(created.Metadata) != `{"team":"infra"}` {
				t.Fatalf("create: %d %+v", status, created)
			}
			stored, err := db.KeyByID(context.Background(), created.ID)
			if err != nil || strings.Contains(string(stored.Hash), created.Key) || stored.Prefix != created.Prefix {
				t.Fatalf("stored: %+v %v", stored, err)
			}

			// The key works on its model, by any of the model's names.
			for _, model := range []string{"e", "echo"} {
				if status, body := e.call("POST", "/v1/messages", created.Key, fmt.Sprintf(message, model), nil); status != 200 {
					t.Fatalf("allowed model %s: %d %v", model, status, body)
				}
			}
			// Another model is answered as if it did not exist, in each
			// protocol's envelope: a key cannot learn what else is served.
			status, body := e.call("POST", "/v1/messages", created.Key, fmt.Sprintf(message, "other"), nil)
			_, unknown := e.call("POST", "/v1/messages", created.Key, fmt.Sprintf(message, "no-such-model"), nil)
			if status != http.StatusNotFound || errType(body) != "not_found_error" ||
				strings.Replace(fmt.Sprint(body["error"]), "other", "no-such-model", 1) != fmt.Sprint(unknown["error"]) {
				t.Fatalf("disallowed model, Anthropic: %d %v (unknown model: %v)", status, body, unknown)
			}
			status, body = e.call("POST", "/v1/chat/completions", created.Key,
				`{"model":"other","messages":[{"role":"user","content":"hi"}]}`, nil)
			if status != http.StatusNotFound || body["error"].(map[string]any)["code"] != "model_not_found" {
				t.Fatalf("disallowed model, OpenAI: %d %v", status, body)
			}
			// /v1/models shows a key only its models.
			var models struct{ Data []struct{ ID string } }
			e.call("GET", "/v1/models", created.Key, "", &models)
			if len(models.Data) != 2 || models.Data[0].ID != "echo" || models.Data[1].ID != "e" {
				t.Errorf("models a restricted key sees: %+v", models.Data)
			}

			// The admin API takes the master key only.
			if status, body := e.call("GET", "/admin/keys", created.Key, "", nil); status != http.StatusForbidden || errType(body) != "permission_error" {
				t.Errorf("virtual key on admin: %d %v", status, body)
			}
			if status, body := e.call("GET", "/admin/keys", "wrong", "", nil); status != http.StatusUnauthorized || errType(body) != "authentication_error" {
				t.Errorf("wrong key on admin: %d %v", status, body)
			}
			if status, _ := e.call("GET", "/admin/keys", "", "", nil); status != http.StatusUnauthorized {
				t.Errorf("no key on admin: %d", status)
			}

			// Patch: open it to every model, rename it.
			var patched admin.KeyView
			status, _ = e.call("PATCH", "/admin/keys/"+created.ID, master, `{"name":"ci-2","models":[],"expires_at":null}`, &patched)
			if status != 200 || patched.Name != "ci-2" || len(patched.Models) != 0 || patched.ExpiresAt != nil {
				t.Fatalf("patch: %d %+v", status, patched)
			}
			if status, body := e.call("POST", "/v1/messages", created.Key, fmt.Sprintf(message, "other"), nil); status != 200 {
				t.Fatalf("after opening the key to every model: %d %v", status, body)
			}

			var list admin.KeyList
			if status, _ := e.call("GET", "/admin/keys", master, "", &list); status != 200 || len(list.Data) != 1 ||
				list.Data[0].Key != "" || list.Data[0].LastUsedAt != nil && list.Data[0].LastUsedAt.After(clock.Now()) {
				t.Fatalf("list: %+v (the secret must never be listed)", list)
			}

			// Revoke: the next request on this replica is refused.
			var revoked admin.KeyView
			if status, _ := e.call("DELETE", "/admin/keys/"+created.ID, master, "", &revoked); status != 200 || !revoked.Revoked {
				t.Fatalf("revoke: %d %+v", status, revoked)
			}
			// It reads as any invalid key: the client learns nothing of its state.
			if status, body := e.call("POST", "/v1/messages", created.Key, fmt.Sprintf(message, "echo"), nil); status != http.StatusUnauthorized ||
				!strings.Contains(fmt.Sprint(body), "invalid API key") || strings.Contains(fmt.Sprint(body), "revoked") {
				t.Fatalf("revoked key: %d %v", status, body)
			}

			// The ledger knows which key made which request: three
			// messages, three refusals and the model list.
			var page admin.RequestPage
			if status, _ := e.call("GET", "/admin/requests?key="+created.ID, master, "", &page); status != 200 || len(page.Data) != 7 {
				t.Fatalf("requests by key: %d, %d records", status, len(page.Data))
			}
			statuses, endpoints := map[int]int{}, map[string]int{}
			for _, r := range page.Data {
				statuses[r.Status]++
				endpoints[r.Endpoint]++
				if r.Endpoint == "/v1/messages" && r.Status == 200 && r.CanonicalModel == "" {
					t.Errorf("record %s: no canonical model for %q", r.ID, r.Model)
				}
				if r.KeyID == nil || *r.KeyID != created.ID {
					t.Errorf("record %s: key_id %v", r.ID, r.KeyID)
				}
			}
			if statuses[200] != 4 || statuses[404] != 3 || endpoints["/v1/models"] != 1 || endpoints["/v1/messages"]+endpoints["/v1/chat/completions"] != 6 {
				t.Errorf("statuses: %v, endpoints %v", statuses, endpoints)
			}
			// By lane: every record is in exactly one lane (none: no upstream).
			lanes := map[string]int{}
			for _, r := range page.Data {
				lanes[r.Lane]++
			}
			for _, lane := range []string{"passthrough", "translated", "none"} {
				var byLane admin.RequestPage
				if status, _ := e.call("GET", "/admin/requests?lane="+lane+"&key="+created.ID, master, "", &byLane); status != 200 {
					t.Fatalf("requests by lane %s: %d", lane, status)
				}
				want := lanes[strings.TrimSuffix(lane, "none")]
				if len(byLane.Data) != want {
					t.Errorf("lane %s: %d records, want %d (%v)", lane, len(byLane.Data), want, lanes)
				}
			}
			if lanes[""] != 4 { // the three unknown models and the model list
				t.Errorf("records without a lane: %v", lanes)
			}
			var usage admin.UsageReport
			if status, _ := e.call("GET", "/admin/usage?group_by=key&since=1h", master, "", &usage); status != 200 {
				t.Fatalf("usage: %d", status)
			}
			var mine *admin.UsageGroup
			for i := range usage.Data {
				if usage.Data[i].Group == created.ID {
					mine = &usage.Data[i]
				}
			}
			// The model list is recorded but is not usage.
			if mine == nil || mine.Requests != 6 || mine.Errors != 3 || mine.Tokens.Input == 0 || mine.CostNanoUSD == nil ||
				mine.UnpricedRequests != 0 { // "other" has no price of its own, but echo is free
				t.Fatalf("usage for the key: %+v", mine)
			}
		})
	}
}

func TestAdminBadInput(t *testing.T) {
	e := newEnv(t, storetest.Open(t)["sqlite"])
	var k admin.KeyView
	e.call("POST", "/admin/keys", master, `{"name":"x"}`, &k)
	tests := []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"POST", "/admin/keys", `{"name":""}`, 400, "name"},
		{"POST", "/admin/keys", `{"name":"a","modles":["e"]}`, 400, "modles"},
		{"POST", "/admin/keys", `{"name":"a","models":["nope"]}`, 400, "nope"},
		{"POST", "/admin/keys", `{"name":"a","expires_at":"2001-01-01T00:00:00Z"}`, 400, "future"},
		{"POST", "/admin/keys", `{"name":"a","metadata":[1]}`, 400, "metadata"},
		{"POST", "/admin/keys", `{"name":`, 400, "unexpected end of input"},
		{"POST", "/admin/keys", ``, 400, "empty"},
		{"PUT", "/admin/keys", `{}`, 405, "GET, POST"},
		{"GET", "/admin/keys/key_missing", ``, 404, "key_missing"},
		{"DELETE", "/admin/keys/key_missing", ``, 404, "key_missing"},
		{"PATCH", "/admin/keys/" + k.ID, `{"revoked":false}`, 400, "DELETE"},
		{"PATCH", "/admin/keys/" + k.ID, `{"colour":"red"}`, 400, "colour"},
		{"PATCH", "/admin/keys/" + k.ID, `{"expires_at":"2001-01-01T00:00:00Z"}`, 400, "future"},
		{"PATCH", "/admin/keys/" + k.ID, `{"models":"e"}`, 400, "models"},
		{"GET", "/admin/usage?group_by=colour", ``, 400, "group_by"},
		{"GET", "/admin/usage?since=yesterday", ``, 400, "since"},
		{"GET", "/admin/usage?since=1h&until=2h", ``, 400, "before"},
		{"GET", "/admin/usage?sinse=1h", ``, 400, "sinse"},
		{"GET", "/admin/usage?until=0000-01-01", ``, 400, "out of range"},
		{"GET", "/admin/requests?limit=0", ``, 400, "limit"},
		{"GET", "/admin/requests?limit=5000", ``, 400, "limit"},
		{"GET", "/admin/requests?status=abc", ``, 400, "status"},
		{"GET", "/admin/requests?lane=sideways", ``, 400, "lane"},
		{"GET", "/admin/requests?after_id=req_nope", ``, 400, "after_id"},
		{"GET", "/admin/nothing", ``, 404, "no such admin endpoint"},
	}
	for _, tc := range tests {
		status, body := e.call(tc.method, tc.path, master, tc.body, nil)
		if status != tc.status || body["type"] != "error" || !strings.Contains(fmt.Sprint(body["error"]), tc.want) {
			t.Errorf("%s %s %s: %d %v; want %d mentioning %q", tc.method, tc.path, tc.body, status, body, tc.status, tc.want)
		}
	}
}

func TestRequestPaging(t *testing.T) {
	e := newEnv(t, storetest.Open(t)["sqlite"])
	for i := 0; i < 7; i++ {
		if status, _ := e.call("POST", "/v1/messages", master, fmt.Sprintf(message, "echo"), nil); status != 200 {
			t.Fatal(status)
		}
	}
	seen := map[string]bool{}
	after := ""
	var last time.Time
	for pages := 0; ; pages++ {
		var page admin.RequestPage
		path := "/admin/requests?limit=3"
		if after != "" {
			path += "&after_id=" + after
		}
		if status, body := e.call("GET", path, master, "", &page); status != 200 {
			t.Fatalf("%d %v", status, body)
		}
		for _, r := range page.Data {
			if seen[r.ID] {
				t.Fatalf("record %s on two pages", r.ID)
			}
			if !last.IsZero() && r.Time.After(last) {
				t.Fatalf("not newest first")
			}
			seen[r.ID], last = true, r.Time
		}
		if !page.HasMore {
			if pages != 2 || len(seen) != 7 {
				t.Fatalf("%d pages, %d records; want 3 pages, 7 records", pages+1, len(seen))
			}
			break
		}
		after = *page.LastID
	}
}

// TestRevocationAcrossReplicas runs two gateways on one database: a key
// revoked through one is refused by the other within auth.HardTTL.
func TestRevocationAcrossReplicas(t *testing.T) {
	for name, db := range storetest.Open(t) {
		t.Run(name, func(t *testing.T) {
			a, b := newEnv(t, db), newEnv(t, db)
			var k admin.KeyView
			a.call("POST", "/admin/keys", master, `{"name":"shared"}`, &k)
			if status, _ := b.call("POST", "/v1/messages", k.Key, fmt.Sprintf(message, "echo"), nil); status != 200 {
				t.Fatalf("replica b: %d", status)
			}
			if status, _ := a.call("DELETE", "/admin/keys/"+k.ID, master, "", nil); status != 200 {
				t.Fatal(status)
			}
			revoked := time.Now()
			for {
				status, _ := b.call("POST", "/v1/messages", k.Key, fmt.Sprintf(message, "echo"), nil)
				if status == http.StatusUnauthorized {
					t.Logf("replica b refused the key %v after its revocation", time.Since(revoked).Round(time.Millisecond))
					break
				}
				if time.Since(revoked) > auth.HardTTL+time.Second {
					t.Fatalf("replica b still accepts a key revoked %v ago", time.Since(revoked))
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}

// TestUsageEstimatedShown: a record whose tokens the gateway estimated
// says so in /admin/requests, and /admin/usage counts it.
func TestUsageEstimatedShown(t *testing.T) {
	for name, db := range storetest.Open(t) {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, db)
			if status, _ := e.call("POST", "/v1/messages", master, fmt.Sprintf(message, "echo"), nil); status != 200 {
				t.Fatal(status)
			}
			cost := int64(1_500)
			if err := db.InsertRequests(context.Background(), []store.Request{{ID: "req_estimated", Time: clock.Now(),
				ClientProtocol: "anthropic", Model: "echo", Provider: "demo", UpstreamModel: "echo", Lane: "passthrough",
				Stream: true, Status: 200, ErrorType: "client_disconnected", Input: 12, Output: 30, CostNanoUSD: &cost,
				UsageEstimated: true}}); err != nil {
				t.Fatal(err)
			}
			var page admin.RequestPage
			status, raw := e.call("GET", "/admin/requests", master, "", &page)
			if status != 200 || len(page.Data) != 2 {
				t.Fatalf("requests: %d %v", status, raw)
			}
			for i, r := range raw["data"].([]any) {
				rec := r.(map[string]any)
				v, ok := rec["usage_estimated"].(bool)
				if want := rec["id"] == "req_estimated"; !ok || v != want || page.Data[i].UsageEstimated != want {
					t.Errorf("record %v: usage_estimated %v (present %v), want %v", rec["id"], rec["usage_estimated"], ok, want)
				}
			}
			var usage admin.UsageReport
			status, raw = e.call("GET", "/admin/usage?group_by=model&since=1h", master, "", &usage)
			if status != 200 || len(usage.Data) != 1 || usage.Data[0].Requests != 2 || usage.Data[0].EstimatedRequests != 1 ||
				usage.Total.EstimatedRequests != 1 {
				t.Fatalf("usage: %d %v", status, raw)
			}
			if total := raw["total"].(map[string]any); total["estimated_requests"] != 1.0 {
				t.Errorf("usage total: %v", total)
			}
		})
	}
}
