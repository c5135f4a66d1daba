package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tollgate/tollgate/internal/cli"
	"github.com/tollgate/tollgate/internal/clock"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/store"
)

// Each record names its endpoint and the configured model its name
// resolved to: usage by model puts an alias with its model, a name the key
// may not use with that model, invented names in one group, and leaves
// the model list (and requests for no endpoint) out.
func TestLedgerEndpointsAndModels(t *testing.T) {
	ctx := context.Background()
	db, rec := ledgerDB(t)
	defer rec.Close(ctx)
	cfg, err := config.Parse([]byte(`
providers: [ { name: demo, type: echo } ]
models:
  - { name: echo, aliases: [e], targets: [ { provider: demo } ], pricing: { input: "3", output: "15" } }
  - { name: free, targets: [ { provider: demo } ] }
`), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	built, err := cli.Build(cfg, cli.Options{MasterKey: masterKey, Logger: slog.New(slog.DiscardHandler), Store: db, Ledger: rec})
	if err != nil {
		t.Fatal(err)
	}
	defer built.Close()
	gw := httptest.NewServer(built.Handler)
	defer gw.Close()

	call := func(method, path, key, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, gw.URL+path, strings.NewReader(body))
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := gw.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		return resp.StatusCode, string(readAll(t, resp.Body))
	}
	_, body := call("POST", "/admin/keys", masterKey, `{"name":"echo-only","models":["echo"]}`)
	var key struct{ Key string }
	if json.Unmarshal([]byte(body), &key) != nil || key.Key == "" {
		t.Fatalf("creating a key: %s", body)
	}
	chat := func(model string) string {
		return `{"model":"` + model + `","messages":[{"role":"user","content":"hi"}]}`
	}
	for _, c := range []struct {
		method, path, key, body string
		status                  int
	}{
		{"POST", "/v1/chat/completions", masterKey, chat("e"), 200},
		{"POST", "/v1/chat/completions", key.Key, chat("echo"), 200},
		{"POST", "/v1/chat/completions", key.Key, chat("free"), 404}, // the key may not use it
		{"POST", "/v1/chat/completions", masterKey, chat("gpt-9"), 404},
		{"POST", "/v1/chat/completions", masterKey, chat("nope"), 404},
		{"GET", "/v1/models", masterKey, "", 200},
		{"GET", "/v1/models", key.Key, "", 200},
		{"GET", "/v1/models", "", "", 401},
		{"GET", "/v1/models/echo", masterKey, "", 200},
		{"POST", "/v1/files", masterKey, `{}`, 404},
	} {
		if status, body := call(c.method, c.path, c.key, c.body); status != c.status {
			t.Fatalf("%s %s %s: %d, want %d: %s", c.method, c.path, c.body, status, c.status, body)
		}
	}

	// Records are written after the answer: wait for all ten.
	var recs []store.Request
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if recs, err = db.Requests(ctx, store.RequestFilter{}); err != nil {
			t.Fatal(err)
		}
		if len(recs) >= 10 || time.Now().After(deadline) {
			break
		}
	}
	type row struct{ Endpoint, Model, Canonical string }
	var got []row
	for _, r := range recs {
		got = append(got, row{r.Endpoint, r.Model, r.CanonicalModel})
	}
	want := []row{
		{"/v1/chat/completions", "e", "echo"},
		{"/v1/chat/completions", "echo", "echo"},
		{"/v1/chat/completions", "free", "free"},
		{"/v1/chat/completions", "gpt-9", ""},
		{"/v1/chat/completions", "nope", ""},
		{"/v1/models", "", ""},
		{"/v1/models", "", ""},
		{"/v1/models", "", ""},
		{"/v1/models/{id}", "", ""},
		{"/v1/files", "", ""},
	}
	// Requests of one millisecond have ids in no order.
	if d := cmp.Diff(want, got, cmpopts.SortSlices(func(a, b row) bool { return fmt.Sprint(a) < fmt.Sprint(b) })); d != "" {
		t.Fatalf("records (-want +got):\n%s", d)
	}

	// Dates from the process's clock: the records are at its now.
	now := clock.Now()
	usage, err := db.Usage(ctx, store.UsageFilter{Since: now.Add(-time.Hour), Until: now.Add(time.Hour), GroupBy: store.ByModel})
	if err != nil {
		t.Fatal(err)
	}
	type group struct {
		Group            string
		Requests, Errors int64
	}
	var groups []group
	for _, g := range usage {
		groups = append(groups, group{g.Group, g.Requests, g.Errors})
	}
	if d := cmp.Diff([]group{{"echo", 2, 0}, {"free", 1, 1}, {store.UnknownModel, 2, 2}}, groups); d != "" {
		t.Errorf("usage by model (-want +got):\n%s", d)
	}
}
