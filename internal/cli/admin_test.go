package cli_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/cli"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/ledger"
	"github.com/tollgate/tollgate/internal/outcome"
	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/store/storetest"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

const cfgYAML = `
database: { url: "%s" }
providers:
  - { name: demo, type: echo }
  - { name: local, type: openai, base_url: "%u" }
models:
  - { name: echo, aliases: [e], targets: [ { provider: demo } ], pricing: { input: "3", output: "15" } }
  - { name: free, targets: [ { provider: local, model: local-model } ] } # no price anywhere
`

// cliConfig is cfgYAML on dbURL, with "free" served by a local
// OpenAI-compatible upstream (which, unlike echo, has no price).
func cliConfig(t *testing.T, dbURL string) []byte {
	t.Helper()
	up := upstreamtest.Static(upstreamtest.Reply{Body: []byte(`{"id":"c1","object":"chat.completion","created":1,"model":"local-model",` +
		`"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":8,"completion_tokens":1,"total_tokens":9}}`)})
	t.Cleanup(up.Close)
	return []byte(strings.NewReplacer("%s", dbURL, "%u", up.URL+"/v1").Replace(cfgYAML))
}

// cliDB writes cliConfig on dbURL to a file, and returns its path, the
// configuration, and the database, migrated (closed when the test ends).
func cliDB(t *testing.T, dbURL string) (string, *config.Config, *store.Store) {
	t.Helper()
	return configDB(t, dbURL, cliConfig(t, dbURL))
}

// configDB is cliDB for the configuration yaml (whose database is dbURL).
func configDB(t *testing.T, dbURL string, yaml []byte) (string, *config.Config, *store.Store) {
	t.Helper()
	cfgPath := filepath.Join(t.TempDir(), "tollgate.yaml")
	if err := os.WriteFile(cfgPath, yaml, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return cfgPath, cfg, db
}

func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Main(args, &out, &errb)
	return out.String(), errb.String(), code
}

type ledgerFunc func(store.Request)

func (f ledgerFunc) Record(o *outcome.Request) { f(ledger.Row(o)) }

// TestAdminCommands runs every keys and usage command against a database
// (--config) and against a running gateway (--url), on each back end.
func TestAdminCommands(t *testing.T) {
	t.Setenv("TOLLGATE_CONFIG", "")
	t.Setenv("TOLLGATE_URL", "")
	t.Setenv("TOLLGATE_MASTER_KEY", "")
	dbURLs := map[string]string{"sqlite": "sqlite://" + filepath.Join(t.TempDir(), "cli.db")}
	if _, withSchema := storetest.SchemaURL(t); withSchema != "" {
		dbURLs["postgres"] = withSchema
	}
	for name, dbURL := range dbURLs {
		t.Run(name, func(t *testing.T) {
			cfgPath, cfg, db := cliDB(t, dbURL)
			ctx := context.Background()
			ledger := ledgerFunc(func(r store.Request) {
				if err := db.InsertRequests(ctx, []store.Request{r}); err != nil {
					t.Errorf("ledger: %v", err)
				}
			})
			built, err := cli.Build(cfg, cli.Options{MasterKey: "sk-master-cli", Logger: slog.New(slog.DiscardHandler), Store: db, Ledger: ledger})
			if err != nil {
				t.Fatal(err)
			}
			h, closeAll := built.Handler, built.Close
			gw := httptest.NewServer(h)
			defer func() { gw.Close(); closeAll() }()

			local := []string{"--config", cfgPath}
			remote := []string{"--url", gw.URL, "--admin-key", "sk-master-cli"}
			for mode, flags := range map[string][]string{"config": local, "url": remote} {
				out, errs, code := run(t, append([]string{"keys", "create", "--name", "k-" + mode, "--models", "e", "--expires", "30d", "--json"}, flags...)...)
				var k struct{ ID, Key string }
				if code != 0 || json.Unmarshal([]byte(out), &k) != nil || !strings.HasPrefix(k.Key, "sk-tg-") || k.ID == "" {
					t.Fatalf("%s: keys create: %d %q %q", mode, code, out, errs)
				}
				// The key works on the gateway, on its model only.
				for model, want := range map[string]int{"echo": 200, "free": 404} {
					req, _ := http.NewRequest("POST", gw.URL+"/v1/chat/completions",
						strings.NewReader(`{"model":"`+model+`","messages":[{"role":"user","content":"hi there"}]}`))
					req.Header.Set("Authorization", "Bearer "+k.Key)
					resp, err := gw.Client().Do(req)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					if resp.StatusCode != want {
						t.Errorf("%s: key on %s: %d, want %d", mode, model, resp.StatusCode, want)
					}
				}
				// Limits: the key's own, then one model's; each update keeps the rest.
				var lk struct {
					Limits      map[string]any            `json:"limits"`
					ModelLimits map[string]map[string]any `json:"model_limits"`
				}
				out, errs, code = run(t, append([]string{"keys", "update", k.ID, "--rpm", "60", "--budget-usd", "2.5", "--budget-period", "daily", "--json"}, flags...)...)
				if code != 0 || json.Unmarshal([]byte(out), &lk) != nil || lk.Limits["rpm"] != 60.0 || lk.Limits["budget_usd"] != 2.5 || lk.Limits["budget_period"] != "daily" {
					t.Fatalf("%s: keys update: %d %q %q", mode, code, out, errs)
				}
				lk.Limits, lk.ModelLimits = nil, nil
				out, errs, code = run(t, append([]string{"keys", "update", k.ID, "--model", "e", "--tpm", "500", "--json"}, flags...)...)
				if code != 0 || json.Unmarshal([]byte(out), &lk) != nil || lk.Limits["rpm"] != 60.0 || lk.ModelLimits["e"]["tpm"] != 500.0 {
					t.Fatalf("%s: keys update --model: %d %q %q", mode, code, out, errs)
				}
				lk.Limits, lk.ModelLimits = nil, nil
				out, errs, code = run(t, append([]string{"keys", "update", k.ID, "--budget-usd", "none", "--json"}, flags...)...)
				if code != 0 || json.Unmarshal([]byte(out), &lk) != nil || lk.Limits["budget_usd"] != nil || lk.Limits["rpm"] != 60.0 {
					t.Fatalf("%s: removing the budget: %d %q %q", mode, code, out, errs)
				}
				out, errs, code = run(t, append([]string{"keys", "list"}, flags...)...)
				if code != 0 || !strings.Contains(out, k.ID) || !strings.Contains(out, "k-"+mode) || strings.Contains(out, k.Key) ||
					!strings.Contains(out, "rpm 60, e: tpm 500") {
					t.Errorf("%s: keys list: %d %q %q", mode, code, out, errs)
				}
				out, errs, code = run(t, append(append([]string{"keys", "revoke"}, k.ID), flags...)...)
				if code != 0 || !strings.Contains(out, "Revoked key "+k.ID) {
					t.Errorf("%s: keys revoke: %d %q %q", mode, code, out, errs)
				}
				out, _, _ = run(t, append([]string{"keys", "list", "--json"}, flags...)...)
				var list struct {
					Data []struct {
						ID      string
						Revoked bool
					}
				}
				json.Unmarshal([]byte(out), &list)
				found := false
				for _, d := range list.Data {
					if d.ID == k.ID {
						found = d.Revoked
					}
				}
				if !found {
					t.Errorf("%s: revoked key not listed as revoked: %s", mode, out)
				}

				out, errs, code = run(t, append([]string{"usage", "--by", "key", "--format", "json"}, flags...)...)
				var rep struct {
					Data []struct {
						Group       string
						Requests    int
						CostNanoUSD *int64 `json:"cost_nano_usd"`
					}
				}
				if code != 0 || json.Unmarshal([]byte(out), &rep) != nil {
					t.Fatalf("%s: usage json: %d %q %q", mode, code, out, errs)
				}
				var mine int
				for _, g := range rep.Data {
					if g.Group == k.ID {
						mine = g.Requests
						if g.CostNanoUSD == nil || *g.CostNanoUSD == 0 {
							t.Errorf("%s: priced model's cost: %v", mode, g.CostNanoUSD)
						}
					}
				}
				if mine != 2 {
					t.Errorf("%s: usage for the key: %d requests, want 2\n%s", mode, mine, out)
				}
			}

			// An unpriced model is flagged in the table and empty in the CSV.
			req, _ := http.NewRequest("POST", gw.URL+"/v1/chat/completions",
				strings.NewReader(`{"model":"free","messages":[{"role":"user","content":"hi"}]}`))
			req.Header.Set("Authorization", "Bearer sk-master-cli")
			resp, err := gw.Client().Do(req)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("master on free: %v %v", resp, err)
			}
			resp.Body.Close()
			out, _, code := run(t, "usage", "--config", cfgPath)
			if code != 0 || !strings.Contains(out, "0.00 + unknown *") || !strings.Contains(out, "without a price") || !strings.Contains(out, "TOTAL") {
				t.Errorf("usage table does not flag the unpriced model:\n%s", out)
			}
			out, _, code = run(t, "usage", "--format", "csv", "--by", "model", "--url", gw.URL, "--admin-key", "sk-master-cli")
			rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
			if code != 0 || err != nil || len(rows) != 3 || rows[0][9] != "cost_nano_usd" || rows[2][0] != "free" || rows[2][9] != "0" || rows[2][11] != "1" {
				t.Errorf("usage csv: %d %v\n%s", code, err, out)
			}
		})
	}
}

func TestAdminCommandErrors(t *testing.T) {
	t.Setenv("TOLLGATE_URL", "")
	t.Setenv("TOLLGATE_MASTER_KEY", "")
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(401)
		w.Write([]byte(`{"type":"error","error":{"type":"authentication_error","message":"invalid API key"}}`))
	}))
	defer gw.Close()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"keys", "create", "--url", gw.URL, "--admin-key", "x"}, "--name is required"},
		{[]string{"keys", "create", "--name", "a", "--url", gw.URL, "--admin-key", "wrong"}, "invalid API key"},
		{[]string{"keys", "list", "--url", gw.URL}, "needs the master key"},
		{[]string{"keys", "list", "--url", "ftp://x", "--admin-key", "k"}, "want http"},
		{[]string{"keys", "list", "--url", gw.URL, "--admin-key", "k", "--config", "x.yaml"}, "exclusive"},
		{[]string{"keys", "revoke", "--url", gw.URL, "--admin-key", "k"}, "one key ID"},
		{[]string{"keys", "create", "--name", "a", "--expires", "soon", "--url", gw.URL, "--admin-key", "k"}, "--expires"},
		{[]string{"usage", "--format", "xml", "--url", gw.URL, "--admin-key", "k"}, "--format"},
		{[]string{"usage", "--since", "last week", "--url", gw.URL, "--admin-key", "k"}, "--since"},
		{[]string{"keys", "frobnicate"}, "unknown command"},
		{[]string{"keys", "create", "--name", "a", "--rpm", "-1", "--url", gw.URL, "--admin-key", "k"}, "--rpm"},
		{[]string{"keys", "create", "--name", "a", "--budget-usd", "1.2.3", "--url", gw.URL, "--admin-key", "k"}, "--budget-usd"},
		{[]string{"keys", "create", "--name", "a", "--budget-period", "weekly", "--budget-usd", "1", "--url", gw.URL, "--admin-key", "k"}, "budget_period"},
		{[]string{"keys", "create", "--name", "a", "--budget-period", "daily", "--url", gw.URL, "--admin-key", "k"}, "without budget_usd"},
		{[]string{"keys", "update", "key_x", "--url", gw.URL, "--admin-key", "k"}, "nothing to change"},
		{[]string{"keys", "update", "--rpm", "5", "--url", gw.URL, "--admin-key", "k"}, "one key ID"},
	}
	for _, tc := range tests {
		_, errs, code := run(t, tc.args...)
		if code == 0 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want an error mentioning %q", tc.args, code, errs, tc.want)
		}
	}
}
