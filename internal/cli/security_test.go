package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/auth"
	"github.com/tollgate/tollgate/internal/cli"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/store"
)

// A key name holding a newline or an escape sequence (stored before the
// admin API refused them) prints escaped in the table, raw in JSON.
func TestKeysListEscapesNames(t *testing.T) {
	t.Setenv("TOLLGATE_URL", "")
	dir := t.TempDir()
	dbURL := "sqlite://" + filepath.Join(dir, "k.db")
	cfgPath, _, db := cliDB(t, dbURL)
	ctx := context.Background()
	evil := "ok\n" + "key_fake  forged-row  sk-tg-xxxxxx…  *  none  \x1b[31mred\x1b[0m\x1b]0;title\a\u202e"
	_, hash, prefix := auth.NewSecret()
	if err := db.CreateKey(ctx, store.Key{ID: auth.NewKeyID(), Name: evil, Hash: hash, Prefix: prefix, Models: []string{"e\x1b[2J"}, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	out, errs, code := run(t, "keys", "list", "--config", cfgPath)
	if code != 0 {
		t.Fatalf("keys list: %d %s", code, errs)
	}
	if strings.ContainsAny(out, "\x1b\a\r\u202e") || strings.Count(out, "\n") != 2 {
		t.Errorf("the table carries control characters or a forged row:\n%q", out)
	}
	for _, want := range []string{`ok\nkey_fake`, `\x1b[31mred\x1b[0m\x1b]0;title\a\u202e`, `e\x1b[2J`} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %s:\n%s", want, out)
		}
	}
	out, _, _ = run(t, "keys", "list", "--json", "--config", cfgPath)
	var list struct{ Data []struct{ Name string } }
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list.Data) != 1 || list.Data[0].Name != evil {
		t.Errorf("JSON output: %v %q", err, out)
	}
}

func get(t *testing.T, url string, headers ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Add(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

const securityYAML = `
providers: [ { name: demo, type: echo } ]
models: [ { name: echo, targets: [ { provider: demo } ] } ]
`

const testMaster = "sk-master-cli-0123456789abcdef0123"

func buildServer(t *testing.T, yaml string) *httptest.Server {
	t.Helper()
	cfg, err := config.Parse([]byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	built, err := cli.Build(cfg, cli.Options{MasterKey: testMaster, Logger: slog.New(slog.DiscardHandler), Store: db})
	if err != nil {
		t.Fatal(err)
	}
	h, closeAll := built.Handler, built.Close
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); closeAll(); db.Close() })
	return srv
}

// /metrics takes the master key by default; metrics.auth: none serves it
// to anyone; with metrics.addr it is not on the main listener at all.
func TestMetricsAuth(t *testing.T) {
	srv := buildServer(t, securityYAML)
	if resp, body := get(t, srv.URL+"/metrics"); resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") == "" || !strings.Contains(body, "authentication_error") {
		t.Errorf("no key: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	if resp, body := get(t, srv.URL+"/metrics", "Authorization: Bearer "+testMaster); resp.StatusCode != 200 || !strings.Contains(body, "tollgate_") {
		t.Errorf("master key: %d %.200s", resp.StatusCode, body)
	}
	// A virtual key may not read them.
	resp, body := postJSON(t, srv.URL+"/admin/keys", `{"name":"reader"}`, testMaster)
	var k struct{ Key string }
	if json.Unmarshal([]byte(body), &k); resp.StatusCode != 201 || k.Key == "" {
		t.Fatalf("create key: %d %s", resp.StatusCode, body)
	}
	if resp, body := get(t, srv.URL+"/metrics", "X-Api-Key: "+k.Key); resp.StatusCode != 403 || !strings.Contains(body, "permission_error") {
		t.Errorf("virtual key: %d %s", resp.StatusCode, body)
	}

	open := buildServer(t, "metrics: { auth: none }\n"+securityYAML)
	if resp, _ := get(t, open.URL+"/metrics"); resp.StatusCode != 200 {
		t.Errorf("metrics.auth none: %d", resp.StatusCode)
	}
	apart := buildServer(t, "metrics: { addr: \"127.0.0.1:0\" }\n"+securityYAML)
	if resp, body := get(t, apart.URL+"/metrics", "Authorization: Bearer "+testMaster); resp.StatusCode == 200 || strings.Contains(body, "tollgate_") {
		t.Errorf("with metrics.addr the main listener still serves them: %d %.200s", resp.StatusCode, body)
	}
}

// metrics.pprof serves Go's profiles next to /metrics, with the same
// auth; off, the path is the data plane's (an unknown endpoint).
func TestPprof(t *testing.T) {
	srv := buildServer(t, "metrics: { pprof: true }\n"+securityYAML)
	if resp, body := get(t, srv.URL+"/debug/pprof/goroutine?debug=1"); resp.StatusCode != 401 || !strings.Contains(body, "authentication_error") {
		t.Errorf("no key: %d %s", resp.StatusCode, body)
	}
	if resp, body := get(t, srv.URL+"/debug/pprof/goroutine?debug=1", "Authorization: Bearer "+testMaster); resp.StatusCode != 200 || !strings.Contains(body, "goroutine profile:") {
		t.Errorf("master key: %d %.200s", resp.StatusCode, body)
	}
	if resp, body := get(t, srv.URL+"/debug/pprof/heap", "Authorization: Bearer "+testMaster); resp.StatusCode != 200 || len(body) == 0 {
		t.Errorf("heap: %d %d bytes", resp.StatusCode, len(body))
	}
	off := buildServer(t, securityYAML)
	if resp, body := get(t, off.URL+"/debug/pprof/goroutine?debug=1", "Authorization: Bearer "+testMaster); resp.StatusCode != 404 || strings.Contains(body, "goroutine profile:") {
		t.Errorf("pprof off: %d %.200s", resp.StatusCode, body)
	}
}

func postJSON(t *testing.T, url, body, key string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// Failed authentications are throttled per address and key across the
// admin API, the metrics and the API endpoints, while a valid key from the
// same address keeps working; auth.max_failures: 0 turns the throttle off.
func TestFailedAuthThrottle(t *testing.T) {
	srv := buildServer(t, "auth: { max_failures: 3, failure_window: 1m }\n"+securityYAML)
	for i := 0; i < 4; i++ { // the fourth: the slowed address's turn
		if resp, _ := get(t, srv.URL+"/admin/keys", "X-Api-Key: sk-tg-guess-"+fmt.Sprint(i)); resp.StatusCode != 401 {
			t.Fatalf("guess %d: %d", i, resp.StatusCode)
		}
	}
	for _, path := range []string{"/admin/keys", "/metrics"} {
		resp, body := get(t, srv.URL+path, "X-Api-Key: sk-tg-guess-"+path)
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "rate_limit_error") {
			t.Errorf("%s, a new guess after 3 failures: %d %v %s", path, resp.StatusCode, resp.Header, body)
		}
		if resp, body := get(t, srv.URL+path, "X-Api-Key: "+testMaster); resp.StatusCode != 200 {
			t.Errorf("%s, the master key from the same address: %d %s", path, resp.StatusCode, body)
		}
	}
	// The API endpoints too, in each protocol's own envelope.
	for path, want := range map[string]string{
		"/v1/chat/completions": `"code":"rate_limit_exceeded"`,
		"/v1/messages":         `"type":"rate_limit_error"`,
	} {
		resp, body := postJSON(t, srv.URL+path, `{"model":"echo","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, "sk-tg-guess-"+path)
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, want) {
			t.Errorf("%s after 3 failures: %d %v %s", path, resp.StatusCode, resp.Header, body)
		}
	}
	off := buildServer(t, "auth: { max_failures: 0 }\n"+securityYAML)
	for i := 0; i < 30; i++ {
		get(t, off.URL+"/admin/keys", "X-Api-Key: wrong")
	}
	if resp, _ := get(t, off.URL+"/admin/keys", "X-Api-Key: "+testMaster); resp.StatusCode != 200 {
		t.Errorf("throttle off: %d", resp.StatusCode)
	}
}
