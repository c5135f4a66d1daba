package cli_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tollgate/tollgate/internal/cli"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/store"
)

const zeroKey = "0123456789abcdef0123456789abcdef"

// askModel sends one request for model on path with the master key and
// returns the status and the model the answer names.
func askModel(t *testing.T, h http.Handler, path, model string) (int, string) {
	t.Helper()
	return askModelAs(t, h, zeroKey, path, model)
}

// askModelAs is askModel with key.
func askModelAs(t *testing.T, h http.Handler, key, path, model string) (int, string) {
	t.Helper()
	body := `{"model":"` + model + `","max_tokens":50,"messages":[{"role":"user","content":"hello there"}]}`
	if path == "/v1/responses" {
		body = `{"model":"` + model + `","input":"hello there"}`
	}
	req := httptest.NewRequest("POST", path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("anthropic-version", "2023-06-01")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var answer struct{ Model string }
	json.Unmarshal(rec.Body.Bytes(), &answer)
	return rec.Code, answer.Model
}

// The zero configuration answers the names the coding CLIs and the SDKs
// send by default, under the name asked for.
func TestZeroConfigAnswersClientDefaults(t *testing.T) {
	cfg := config.Default()
	cfg.Database.URL = config.NoDatabase
	srv, err := cli.Build(cfg, cli.Options{MasterKey: zeroKey})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for _, tc := range []struct{ path, model string }{
		{"/v1/messages", "claude-opus-4-8"},           // Claude Code's main model
		{"/v1/messages", "claude-sonnet-4-5"},         // and others it is set to
		{"/v1/messages", "claude-haiku-4-5-20251001"}, // its small, fast model
		{"/v1/responses", "gpt-5-codex"},              // Codex CLI
		{"/v1/responses", "gpt-5.1-codex-max"},
		{"/v1/chat/completions", "gemini-2.5-pro"},
		{"/v1/chat/completions", "gemini-2.5-flash"},
		{"/v1/chat/completions", "o3"},
		{"/v1/chat/completions", "echo"},
	} {
		if code, model := askModel(t, srv.Handler, tc.path, tc.model); code != 200 || model != tc.model {
			t.Errorf("%s %s: %d, answered as %q", tc.path, tc.model, code, model)
		}
	}
	if code, _ := askModel(t, srv.Handler, "/v1/messages", "mistral-large"); code != 404 {
		t.Errorf("an unknown name: %d, want 404", code)
	}
}

// The ledger records the name asked for with the model it matched, and
// usage by model counts a pattern's names under the pattern, as it counts
// aliases under their model.
func TestPatternUsageByModel(t *testing.T) {
	t.Setenv("TOLLGATE_CONFIG", "")
	t.Setenv("TOLLGATE_URL", "")
	dbURL := "sqlite://" + filepath.Join(t.TempDir(), "gw.db")
	cfgPath, cfg, db := configDB(t, dbURL, []byte(`
database: { url: "`+dbURL+`" }
providers: [ { name: demo, type: echo } ]
models:
  - { name: echo, aliases: [e, "gpt-*"], targets: [ { provider: demo } ] }
  - { name: "claude-*", targets: [ { provider: demo } ] }
`))
	ctx := context.Background()
	var mu sync.Mutex
	recorded := map[string]string{} // model asked for → canonical model
	ledger := ledgerFunc(func(r store.Request) {
		mu.Lock()
		recorded[r.Model] = r.CanonicalModel
		mu.Unlock()
		if err := db.InsertRequests(ctx, []store.Request{r}); err != nil {
			t.Errorf("ledger: %v", err)
		}
	})
	srv, err := cli.Build(cfg, cli.Options{MasterKey: zeroKey, Logger: slog.New(slog.DiscardHandler), Store: db, Ledger: ledger})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"claude-opus-4-8", "claude-haiku-4-5", "gpt-5-codex", "e", "echo"} {
		want := m
		if m == "e" {
			want = "echo" // an exact alias answers under its model's name
		}
		if code, answered := askModel(t, srv.Handler, "/v1/messages", m); code != 200 || answered != want {
			t.Errorf("%s: %d, answered as %q", m, code, answered)
		}
	}
	// A key that lists a name a pattern covers may use that name only.
	out, errs, code := run(t, "keys", "create", "--name", "opus-only", "--models", "claude-opus-4-8", "--json", "--config", cfgPath)
	var k struct{ Key string }
	if code != 0 || json.Unmarshal([]byte(out), &k) != nil {
		t.Fatalf("keys create: %d %s %s", code, out, errs)
	}
	for m, want := range map[string]int{"claude-opus-4-8": 200, "claude-haiku-4-5": 404} {
		if code, _ := askModelAs(t, srv.Handler, k.Key, "/v1/messages", m); code != want {
			t.Errorf("a key for claude-opus-4-8 on %s: %d, want %d", m, code, want)
		}
	}
	srv.Close()
	want := map[string]string{"claude-opus-4-8": "claude-*", "claude-haiku-4-5": "claude-*", "gpt-5-codex": "echo", "e": "echo", "echo": "echo"}
	mu.Lock()
	for asked, canonical := range want {
		if recorded[asked] != canonical {
			t.Errorf("ledger: %q recorded with %q, want %q", asked, recorded[asked], canonical)
		}
	}
	mu.Unlock()
	if out, _, _ := run(t, "check-config", "--config", cfgPath); !strings.Contains(out, "demo/(the name asked for) (echo)") {
		t.Errorf("check-config does not say a pattern's target sends the name asked for:\n%s", out)
	}
	out, errs, code = run(t, "usage", "--by", "model", "--format", "json", "--config", cfgPath)
	var rep struct {
		Data []struct {
			Group    string
			Requests int
		}
	}
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil {
		t.Fatalf("usage: %d %s %s", code, out, errs)
	}
	got := map[string]int{}
	for _, g := range rep.Data {
		got[g.Group] = g.Requests
	}
	if got["claude-*"] != 4 || got["echo"] != 3 || len(got) != 2 {
		t.Errorf("usage by model: %v, want claude-* 4, echo 3", got)
	}
}
