package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/config"
)

// syncBuffer is a bytes.Buffer the gateway's goroutines may write to
// while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startServe runs serve with args and returns its address, what it
// printed, and stop, which ends it (the test's cleanup does too).
func startServe(t *testing.T, args ...string) (addr string, stderr *syncBuffer, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr = &syncBuffer{}
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- runServe(ctx, func() {}, args, stderr, func(a string) { addrc <- a })
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("serve: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	select {
	case addr = <-addrc:
		return addr, stderr, stop
	case err := <-done:
		done <- err
		t.Fatalf("serve ended before listening: %v\n%s", err, stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not start:\n%s", stderr)
	}
	return
}

const echoModel = "providers: [ { name: demo, type: echo } ]\nmodels: [ { name: echo, targets: [ { provider: demo } ] } ]\n"

func writeConfig(t *testing.T, dir, yaml string) string {
	t.Helper()
	p := filepath.Join(dir, "tollgate.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestGeneratedMasterKeyIsKeptNotPrinted: without a master key, serve
// makes one, writes it next to the database (0600), logs where it is but
// never the key, and reads the same key on the next start.
func TestGeneratedMasterKeyIsKeptNotPrinted(t *testing.T) {
	t.Setenv("TOLLGATE_MASTER_KEY", "")
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "database: { url: \"sqlite://"+filepath.Join(dir, "gw.db")+"\" }\n"+echoModel)
	keyPath := filepath.Join(dir, "gw.master-key")

	var key string
	for run := range 2 {
		func() {
			addr, stderr, stop := startServe(t, "--config", cfg, "--addr", "127.0.0.1:0")
			defer stop()
			data, err := os.ReadFile(keyPath)
			if err != nil {
				t.Fatalf("run %d: key file: %v", run, err)
			}
			st, _ := os.Stat(keyPath)
			if st.Mode().Perm() != 0o600 {
				t.Errorf("key file mode %v, want 0600", st.Mode().Perm())
			}
			got := strings.TrimSpace(string(data))
			if run == 0 {
				key = got
			} else if got != key {
				t.Errorf("second start read another key")
			}
			if strings.Contains(stderr.String(), key) {
				t.Errorf("run %d printed the master key:\n%s", run, stderr)
			}
			if !strings.Contains(stderr.String(), keyPath) {
				t.Errorf("run %d did not say where the key is:\n%s", run, stderr)
			}
			req, _ := http.NewRequest("GET", "http://"+addr+"/admin/keys", nil)
			req.Header.Set("Authorization", "Bearer "+key)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("run %d: the key in the file got %d", run, resp.StatusCode)
			}
		}()
	}

	// A key file others can read is refused, not used.
	os.Chmod(keyPath, 0o644)
	var out syncBuffer
	err := runServe(context.Background(), func() {}, []string{"--config", cfg, "--addr", "127.0.0.1:0"}, &out, nil)
	if err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("readable key file: err = %v", err)
	}
}

// TestFailedStartPrintsNoKey: a start that fails after the key is made
// (the port is taken) never prints the key or where it is.
func TestFailedStartPrintsNoKey(t *testing.T) {
	t.Setenv("TOLLGATE_MASTER_KEY", "")
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "database: { url: \"sqlite://"+filepath.Join(dir, "gw.db")+"\" }\n"+echoModel)
	addr, _, _ := startServe(t, "--config", writeConfig(t, t.TempDir(), "database: { url: none }\nauth: { master_key: \"0123456789abcdef0123456789abcdef\" }\n"+echoModel), "--addr", "127.0.0.1:0")

	var stderr syncBuffer
	err := runServe(context.Background(), func() {}, []string{"--config", cfg, "--addr", addr}, &stderr, nil)
	if err == nil {
		t.Fatal("serve on a taken port succeeded")
	}
	key, _ := os.ReadFile(filepath.Join(dir, "gw.master-key"))
	if s := stderr.String(); strings.Contains(s, "master-key") || len(key) > 0 && strings.Contains(s, strings.TrimSpace(string(key))) {
		t.Errorf("a failed start printed the key or its file:\n%s", s)
	}
}

func TestCommandLine(t *testing.T) {
	t.Setenv("TOLLGATE_CONFIG", "")
	t.Setenv("TOLLGATE_URL", "")
	tests := []struct {
		args       []string
		code       int
		stdout     string // a substring; "" checks that stdout is empty
		stderr     string
		stderrOnce string // a substring that must appear exactly once
	}{
		{args: []string{"--help"}, code: 0, stdout: "keys create|update|list|revoke"},
		{args: []string{"serve", "--help"}, code: 0, stdout: "Usage: tollgate serve"},
		{args: []string{"serve", "-h"}, code: 0, stdout: "--addr"},
		{args: []string{"keys", "create", "--help"}, code: 0, stdout: "Usage: tollgate keys create"},
		{args: []string{"keys", "update", "--help"}, code: 0, stdout: "--expires"},
		{args: []string{"usage", "--help"}, code: 0, stdout: "Usage: tollgate usage"},
		{args: []string{"check-config", "--help"}, code: 0, stdout: "Usage: tollgate check-config"},
		{args: []string{"migrate", "--help"}, code: 0, stdout: "Usage: tollgate migrate"},
		{args: []string{"keys", "help"}, code: 0, stdout: "tollgate keys update"},
		{args: []string{"version"}, code: 0, stdout: "tollgate dev"},
		{args: []string{"serve", "--bogus"}, code: 2, stderrOnce: "flag provided but not defined: -bogus"},
		{args: []string{"keys", "create", "--bogus"}, code: 2, stderrOnce: "Run 'tollgate keys create --help' for usage."},
		{args: []string{"serve", "extra"}, code: 2, stderrOnce: `unexpected argument "extra"`},
		{args: []string{"check-config"}, code: 2, stderrOnce: "--config FILE is required"},
		{args: []string{"nope"}, code: 2, stderr: `unknown command "nope"`},
		{args: []string{"serve", "--addr", "18094"}, code: 2, stderrOnce: `"18094" is not HOST:PORT`},
		{args: []string{"serve", "--addr", "localhost"}, code: 2, stderrOnce: `"localhost" is not HOST:PORT`},
		{args: []string{"serve", "--addr", "foo"}, code: 2, stderrOnce: "is not HOST:PORT"},
		{args: []string{"serve", "--addr", "127.0.0.1:http"}, code: 2, stderrOnce: "with a port number"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Main(tt.args, &out, &errb)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, out.String(), errb.String())
			}
			if tt.stdout != "" && !strings.Contains(out.String(), tt.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.stdout, out.String())
			}
			if tt.code == 0 && errb.Len() > 0 {
				t.Errorf("stderr not empty: %s", errb.String())
			}
			if tt.stderr != "" && !strings.Contains(errb.String(), tt.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.stderr, errb.String())
			}
			if tt.stderrOnce != "" && strings.Count(errb.String(), tt.stderrOnce) != 1 {
				t.Errorf("stderr has %q %d times, want once:\n%s", tt.stderrOnce, strings.Count(errb.String(), tt.stderrOnce), errb.String())
			}
		})
	}
}

// TestAdminCommandsNeverCreateADatabase: keys and usage run where there is
// no database say which one they looked for instead of creating it, and
// need only the database's ${VAR}s from a config file.
func TestAdminCommandsNeverCreateADatabase(t *testing.T) {
	t.Setenv("TOLLGATE_CONFIG", "")
	t.Setenv("TOLLGATE_URL", "")
	dir := t.TempDir()
	t.Chdir(dir)
	for _, args := range [][]string{{"keys", "create", "--name", "x"}, {"keys", "list"}, {"usage"}} {
		var out, errb bytes.Buffer
		if code := Main(args, &out, &errb); code != 1 {
			t.Errorf("%v: exit %d, want 1", args, code)
		}
		if want := filepath.Join(dir, "tollgate.db"); !strings.Contains(errb.String(), want) || !strings.Contains(errb.String(), "--config") {
			t.Errorf("%v: the message does not name %s and --config:\n%s", args, want, errb.String())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "tollgate.db")); err == nil {
		t.Fatal("a database was created")
	}

	// A config whose upstream keys are not in the environment still
	// serves keys and usage; the database's own ${VAR} is required.
	for _, v := range []string{"TG_TEST_UNSET_KEY", "TG_TEST_UNSET_MASTER", "TG_TEST_UNSET_CREDS"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	t.Setenv("TG_TEST_DB", "sqlite://"+filepath.Join(dir, "gw.db"))
	cfg := writeConfig(t, dir, `
auth: { master_key: "${TG_TEST_UNSET_MASTER}" }
database: { url: "${TG_TEST_DB}" }
providers:
  - { name: oa, type: openai, api_key: "${TG_TEST_UNSET_KEY}" }
  - { name: gcp, type: vertex, project: p, region: us-east5, credentials_file: "${TG_TEST_UNSET_CREDS}" }
models:
  - { name: gpt-4o, targets: [ { provider: oa, model: gpt-4o } ] }
  - { name: claude-vertex, targets: [ { provider: gcp, model: claude-sonnet-4-5@20250929 } ] }
`)
	if code := Main([]string{"migrate", "--config", cfg}, &bytes.Buffer{}, &bytes.Buffer{}); code == 0 {
		t.Error("migrate (which builds nothing but needs the whole config) ran with an unset upstream key")
	}
	os.WriteFile(filepath.Join(dir, "gw.db"), nil, 0o600) // an empty file is a new SQLite database
	var out, errb bytes.Buffer
	if code := Main([]string{"keys", "create", "--name", "ci", "--models", "gpt-4o,claude-vertex", "--config", cfg}, &out, &errb); code != 0 {
		t.Fatalf("keys create with unset upstream credentials and master key: exit %d: %s", code, errb.String())
	}
	if code := Main([]string{"usage", "--config", cfg}, &out, &errb); code != 0 {
		t.Fatalf("usage with unset upstream credentials and master key: exit %d: %s", code, errb.String())
	}
	os.Unsetenv("TG_TEST_DB")
	errb.Reset()
	if code := Main([]string{"keys", "list", "--config", cfg}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "TG_TEST_DB") {
		t.Errorf("an unset database variable: exit %d, stderr %s", code, errb.String())
	}
}

func TestKeysUpdateExpiryAndRevokeTwice(t *testing.T) {
	t.Setenv("TOLLGATE_CONFIG", "")
	t.Setenv("TOLLGATE_URL", "")
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "database: { url: \"sqlite://"+filepath.Join(dir, "gw.db")+"\" }\n"+echoModel)
	main := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := Main(append(args, "--config", cfg), &out, &errb)
		return out.String(), errb.String(), code
	}
	if out, e, code := main("migrate"); code != 0 || !strings.Contains(out, "applied") || !strings.Contains(out, "00001_") {
		t.Fatalf("migrate on a new database: exit %d %s %s", code, out, e)
	}
	if out, e, code := main("migrate"); code != 0 || !strings.Contains(out, "is up to date") {
		t.Fatalf("migrate again: exit %d %s %s", code, out, e)
	}
	out, e, code := main("keys", "create", "--name", "k", "--json")
	if code != 0 {
		t.Fatal(e)
	}
	var created struct{ ID string }
	if err := json.Unmarshal([]byte(out), &created); err != nil {
		t.Fatal(err, out)
	}
	out, e, code = main("keys", "update", created.ID, "--expires", "30d")
	if code != 0 || !strings.Contains(out, "expires 20") {
		t.Fatalf("update --expires 30d: exit %d %s %s", code, out, e)
	}
	out, e, code = main("keys", "update", created.ID, "--expires", "never")
	if code != 0 || !strings.Contains(out, "never expires") {
		t.Fatalf("update --expires never: exit %d %s %s", code, out, e)
	}
	if _, e, code = main("keys", "update", created.ID, "--expires", "soon"); code != 2 || !strings.Contains(e, "720h or 30d") {
		t.Errorf("update --expires soon: exit %d %s", code, e)
	}
	if _, e, code = main("keys", "revoke", created.ID); code != 0 {
		t.Fatalf("revoke: %s", e)
	}
	if _, e, code = main("keys", "revoke", created.ID); code != 1 || !strings.Contains(e, "already revoked") {
		t.Errorf("revoking a revoked key: exit %d %s", code, e)
	}
}

// TestZeroConfigEcho: the built-in echo model is free (so a USD budget
// never refuses it) and its token counts say they are estimates.
func TestZeroConfigEcho(t *testing.T) {
	cfg := config.Default()
	cfg.Database.URL = config.NoDatabase
	routes, _, err := newRoutes(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m := routes.Lookup([]byte("echo"))
	if m == nil || !m.Priced() {
		t.Fatalf("echo is not priced")
	}
	if c, err := m.Targets[0].Prices.WorstCase(1000, 1000); err != nil || c != 0 {
		t.Errorf("echo costs %v (%v), want 0", c, err)
	}
	srv, err := Build(cfg, Options{MasterKey: "0123456789abcdef0123456789abcdef"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	req := httptest.NewRequest("POST", "/v1/messages/count_tokens", strings.NewReader(`{"model":"echo","messages":[{"role":"user","content":"hello there"}]}`))
	req.Header.Set("x-api-key", "0123456789abcdef0123456789abcdef")
	req.Header.Set("anthropic-version", "2023-06-01")
	rec := httptest.NewRecorder()
	srv.Handler.ServeHTTP(rec, req)
	if rec.Code != 200 || rec.Header().Get("Tollgate-Token-Count") != "estimate" {
		t.Errorf("count_tokens on echo: %d, tollgate-token-count %q, body %s", rec.Code, rec.Header().Get("Tollgate-Token-Count"), rec.Body)
	}
}

// TestSideRoutesCarryRequestIDs: health, readiness, metrics and the admin
// API answer with a tollgate-request-id as the API endpoints do, and a
// gateway without a database says why it has no admin API.
func TestSideRoutesCarryRequestIDs(t *testing.T) {
	const mk = "0123456789abcdef0123456789abcdef"
	cfg := config.Default()
	cfg.Database.URL = config.NoDatabase
	srv, err := Build(cfg, Options{MasterKey: mk})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for _, path := range []string{"/healthz", "/readyz", "/metrics", "/admin/keys", "/v1/models"} {
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("Authorization", "Bearer "+mk)
		rec := httptest.NewRecorder()
		srv.Handler.ServeHTTP(rec, req)
		if id := rec.Header().Get("Tollgate-Request-Id"); !strings.HasPrefix(id, "req_") {
			t.Errorf("%s: tollgate-request-id %q", path, id)
		}
		if path == "/admin/keys" && (rec.Code != 404 || !strings.Contains(rec.Body.String(), "needs a database")) {
			t.Errorf("admin API without a database: %d %s", rec.Code, rec.Body)
		}
	}
}

func TestDatabaseInAMissingDirectory(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "no", "such", "dir")
	cfg := writeConfig(t, dir, "database: { url: \"sqlite://"+filepath.Join(missing, "gw.db")+"\" }\n"+echoModel)
	var out, errb bytes.Buffer
	if code := Main([]string{"migrate", "--config", cfg}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "the directory "+missing+" does not exist") {
		t.Errorf("exit %d: %s", code, errb.String())
	}
}

// TestShutdownEndsLongRequestsProperly: a stream still running when the
// drain time is over ends with the protocol's error event (not a cut
// connection), a request still waiting for its upstream gets a 503, and
// both are in the request log before "stopped".
func TestShutdownEndsLongRequestsProperly(t *testing.T) {
	t.Setenv("TOLLGATE_MASTER_KEY", "")
	const mk = "0123456789abcdef0123456789abcdef"
	var hits atomic.Int32
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Stream bool }
		json.NewDecoder(r.Body).Decode(&req)
		if req.Stream {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n"))
			w.(http.Flusher).Flush()
		}
		hits.Add(1)
		<-r.Context().Done() // never finishes
	}))
	defer upstream.Close()
	dir := t.TempDir()
	cfg := writeConfig(t, dir, `
server: { drain_timeout: 300ms }
auth: { master_key: "`+mk+`" }
database: { url: none }
providers: [ { name: slow, type: anthropic, base_url: "`+upstream.URL+`", api_key: "k" } ]
models: [ { name: claude-slow, targets: [ { provider: slow, model: m } ] } ]
`)
	addr, stderr, stop := startServe(t, "--config", cfg, "--addr", "127.0.0.1:0")
	send := func(stream bool) (*http.Response, error) {
		body := `{"model":"claude-slow","max_tokens":10,"stream":` + map[bool]string{true: "true", false: "false"}[stream] + `,"messages":[{"role":"user","content":"hi"}]}`
		req, _ := http.NewRequest("POST", "http://"+addr+"/v1/messages", strings.NewReader(body))
		req.Header.Set("x-api-key", mk)
		req.Header.Set("anthropic-version", "2023-06-01")
		return http.DefaultClient.Do(req)
	}
	streamResp, err := send(true)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		resp *http.Response
		err  error
	}
	whole := make(chan result, 1)
	go func() { r, err := send(false); whole <- result{r, err} }()
	for hits.Load() < 2 { // both requests reach the upstream
		time.Sleep(5 * time.Millisecond)
	}
	go stop()

	streamBody, err := io.ReadAll(streamResp.Body)
	if err != nil {
		t.Fatalf("the stream was cut: %v (%s)", err, streamBody)
	}
	if !bytes.Contains(streamBody, []byte("event: error")) || !bytes.Contains(streamBody, []byte("shutting down")) {
		t.Errorf("the stream did not end with an error event:\n%s", streamBody)
	}
	w := <-whole
	if w.err != nil {
		t.Fatalf("the whole request was cut: %v", w.err)
	}
	b, _ := io.ReadAll(w.resp.Body)
	if w.resp.StatusCode != 503 || !bytes.Contains(b, []byte("shutting down")) {
		t.Errorf("whole request: %d %s", w.resp.StatusCode, b)
	}
	stop()
	logs := stderr.String()
	stopped := strings.Index(logs, `"msg":"stopped"`)
	if stopped < 0 || strings.Count(logs[:stopped], `"path":"/v1/messages"`) != 2 {
		t.Errorf("want both requests logged before \"stopped\":\n%s", logs)
	}
}

// Without a master key serve listens on loopback only: asked for another
// interface, it refuses to start, saying how to set a key, and makes none.
func TestNoMasterKeyRefusesOtherInterfaces(t *testing.T) {
	t.Setenv("TOLLGATE_MASTER_KEY", "")
	t.Setenv("TOLLGATE_CONFIG", "")
	dir := t.TempDir()
	t.Chdir(dir)
	db := "database: { url: \"sqlite://" + filepath.Join(dir, "gw.db") + "\" }\n"
	for _, tc := range []struct {
		yaml string
		args []string
		want string
	}{
		{"", []string{"--addr", "0.0.0.0:0"}, "--addr 0.0.0.0:0 listens beyond this machine"},
		{"", []string{"--addr", ":0"}, "--addr :0 listens beyond this machine"},
		{db + echoModel, []string{"--addr", "[::]:0"}, "--addr [::]:0 listens beyond this machine"},
		{db + "server: { addr: \"192.0.2.1:8080\" }\n" + echoModel, nil, "server.addr 192.0.2.1:8080 listens beyond this machine"},
	} {
		args := tc.args
		if tc.yaml != "" {
			args = append([]string{"--config", writeConfig(t, dir, tc.yaml)}, args...)
		}
		var stderr syncBuffer
		err := runServe(context.Background(), func() {}, args, &stderr, func(string) { t.Errorf("%v: serve started", args) })
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "set auth.master_key or TOLLGATE_MASTER_KEY") {
			t.Errorf("%v: %v", args, err)
		}
	}
	if names, _ := filepath.Glob(filepath.Join(dir, "*.master-key")); len(names) > 0 {
		t.Errorf("a refused start made a key: %v", names)
	}
	for addr, want := range map[string]bool{"127.0.0.1:8080": true, "127.0.0.2:1": true, "[::1]:8080": true, "localhost:8080": true,
		"0.0.0.0:8080": false, ":8080": false, "[::]:8080": false, "10.0.0.1:8080": false, "gateway.internal:8080": false} {
		if loopback(addr) != want {
			t.Errorf("loopback(%q) = %v", addr, !want)
		}
	}
}
