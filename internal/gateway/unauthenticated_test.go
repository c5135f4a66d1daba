package gateway_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/clock"
	"github.com/tollgate/tollgate/internal/outcome"
	"github.com/tollgate/tollgate/internal/store"
)

// TestUnauthenticatedRequestsInTheLedger: a request no key was accepted
// for is recorded as unauthenticated, never as the master key's (whose
// records have no key id) nor any other key's, and it is summed apart in
// usage by key; a browser's / and /favicon.ico, and other paths outside
// the API, are answered without a key and left out of the ledger, and a
// browser's GET / is sent to the console.
func TestUnauthenticatedRequestsInTheLedger(t *testing.T) {
	ctx := context.Background()
	h, db, rec := echoLedgerGateway(t, slog.New(slog.DiscardHandler))
	gw := httptest.NewServer(h)
	defer gw.Close()
	client := gw.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

	const msg = `{"model":"echo","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`
	const chat = `{"model":"echo","messages":[{"role":"user","content":"hi"}]}`
	tests := []struct {
		name, method, path, body string
		headers                  []string
		status                   int
		recorded                 string // the record's key id; "-" for none
		location                 string
	}{
		{"master key", "POST", "/v1/messages", msg, anthropicAuth, 200, "", ""},
		{"wrong key", "POST", "/v1/messages", msg, []string{"x-api-key: sk-wrong-key-0123456789abcdef", "anthropic-version: 2023-06-01"}, 401, outcome.Unauthenticated, ""},
		{"wrong virtual key", "POST", "/v1/chat/completions", chat, []string{"Authorization: Bearer sk-tg-0123456789abcdefghijklmnopqrstuv"}, 401, outcome.Unauthenticated, ""},
		{"no key", "POST", "/v1/chat/completions", chat, nil, 401, outcome.Unauthenticated, ""},
		{"no key, wrong method", "GET", "/v1/messages", "", nil, 405, outcome.Unauthenticated, ""},
		{"no key, unknown endpoint", "GET", "/v1/nothing", "", nil, 401, outcome.Unauthenticated, ""},
		{"favicon", "GET", "/favicon.ico", "", []string{"Accept: image/avif,image/webp,*/*"}, 404, "-", ""},
		{"browser opens /", "GET", "/", "", []string{"Accept: text/html,application/xhtml+xml,*/*;q=0.8"}, 302, "-", "/console/"},
		{"API client on /", "GET", "/", "", openAIAuth, 404, "-", ""},
		{"scanner", "POST", "/wp-login.php", "x", nil, 404, "-", ""},
	}
	want := map[string]string{} // request id → key id
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, gw.URL+tt.path, strings.NewReader(tt.body))
		for _, h := range tt.headers {
			k, v, _ := strings.Cut(h, ":")
			req.Header.Set(k, strings.TrimSpace(v))
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(t, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status || resp.Header.Get("Location") != tt.location {
			t.Errorf("%s: status %d, location %q: %s; want %d, %q", tt.name, resp.StatusCode, resp.Header.Get("Location"), body, tt.status, tt.location)
		}
		if tt.status >= 400 && !gjson.GetBytes(body, "error.message").Exists() {
			t.Errorf("%s: no error envelope: %s", tt.name, body)
		}
		if tt.recorded != "-" {
			want[resp.Header.Get("Tollgate-Request-Id")] = tt.name
		}
	}
	var recs []store.Request
	var err error
	for deadline := time.Now().Add(10 * time.Second); len(recs) < len(want) && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if recs, err = db.Requests(ctx, store.RequestFilter{}); err != nil {
			t.Fatal(err)
		}
	}
	rec.Close(ctx) // everything recorded is written
	if recs, err = db.Requests(ctx, store.RequestFilter{}); err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(want) {
		t.Errorf("%d records, want %d (none for the paths outside the API)", len(recs), len(want))
	}
	for _, r := range recs {
		name, ok := want[r.ID]
		if !ok {
			t.Errorf("unexpected record of %s %s", r.Endpoint, r.ID)
			continue
		}
		for _, tt := range tests {
			if tt.name == name && r.KeyID != tt.recorded {
				t.Errorf("%s: recorded with key id %q, want %q", name, r.KeyID, tt.recorded)
			}
		}
	}
	groups, err := db.Usage(ctx, store.UsageFilter{Since: clock.Now().Add(-time.Hour), Until: clock.Now().Add(time.Hour), GroupBy: store.ByKey})
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]int64{}
	for _, g := range groups {
		byKey[g.Group] = g.Requests
	}
	// The inference endpoints' records are usage: /v1/nothing is not.
	if byKey[""] != 1 || byKey[outcome.Unauthenticated] != 4 || len(byKey) != 2 {
		t.Errorf("usage by key: %v; want the master key's 1 request apart from 4 unauthenticated", byKey)
	}
}
