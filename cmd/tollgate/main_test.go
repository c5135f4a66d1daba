package main_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// binary is the tollgate binary built once for these tests.
var binary string

// mk is the master key of the configured test servers (32 characters at
// least, as serve requires).
const mk = "mk-test-0123456789abcdef0123456789"

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tollgate-test")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "tollgate")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		os.Stderr.Write(out)
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func buildBinary(*testing.T) string { return binary }

// server is a running `tollgate serve` process.
type server struct {
	cmd    *exec.Cmd
	addr   string
	key    string
	mu     sync.Mutex // guards stderr, written by the reading goroutine
	stderr *bytes.Buffer
	done   chan error
}

var (
	listenRE = regexp.MustCompile(`"msg":"tollgate listening","addr":"([^"]+)"`)
)

// startServe runs the binary with args, in a directory of its own (the
// default database is created there), and waits until it listens.
func startServe(t *testing.T, bin string, env []string, args ...string) *server {
	t.Helper()
	return startServeIn(t, t.TempDir(), bin, env, args...)
}

func startServeIn(t *testing.T, dir, bin string, env []string, args ...string) *server {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(filteredEnv(), env...)
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, stderr: &bytes.Buffer{}, done: make(chan error, 1)}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			s.mu.Lock()
			s.stderr.WriteString(sc.Text() + "\n")
			if m := listenRE.FindStringSubmatch(sc.Text()); m != nil && s.addr == "" {
				s.addr = m[1]
				close(ready)
			}
			s.mu.Unlock()
		}
	}()
	go func() { s.done <- cmd.Wait(); pw.Close() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	select {
	case <-ready:
	case err := <-s.done:
		t.Fatalf("tollgate exited before listening: %v\n%s", err, s.stderrText())
	case <-time.After(20 * time.Second):
		t.Fatalf("tollgate did not start listening:\n%s", s.stderrText())
	}
	// Without a configured master key, serve keeps a generated one in
	// the working directory (written before it listens).
	if b, err := os.ReadFile(filepath.Join(dir, "tollgate.master-key")); err == nil {
		s.key = strings.TrimSpace(string(b))
	}
	return s
}

func (s *server) stderrText() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

func filteredEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TOLLGATE_") {
			out = append(out, kv)
		}
	}
	return out
}

func post(t *testing.T, url string, body string, headers ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

func TestZeroConfigServe(t *testing.T) {
	bin := buildBinary(t)
	s := startServe(t, bin, nil, "--addr", "127.0.0.1:0")
	if s.key == "" {
		t.Fatalf("no generated master key file:\n%s", s.stderrText())
	}
	if strings.Contains(s.stderrText(), s.key) {
		t.Fatalf("the generated master key was printed:\n%s", s.stderrText())
	}
	base := "http://" + s.addr
	resp, body := post(t, base+"/v1/messages", `{"model":"echo","max_tokens":50,"messages":[{"role":"user","content":"hello gateway"}]}`,
		"x-api-key: "+s.key, "anthropic-version: 2023-06-01")
	if resp.StatusCode != 200 || gjson.Get(body, "content.0.text").String() != "hello gateway" {
		t.Errorf("messages: %d %s", resp.StatusCode, body)
	}
	resp, body = post(t, base+"/v1/chat/completions", `{"model":"echo","stream":true,"messages":[{"role":"user","content":"one two three"}]}`,
		"Authorization: Bearer "+s.key)
	if resp.StatusCode != 200 || !strings.Contains(body, `"content":"one "`) || !strings.HasSuffix(body, "data: [DONE]\n\n") {
		t.Errorf("chat stream: %d %s", resp.StatusCode, body)
	}
	resp, _ = post(t, base+"/v1/chat/completions", `{"model":"echo","messages":[{"role":"user","content":"x"}]}`, "Authorization: Bearer wrong")
	if resp.StatusCode != 401 {
		t.Errorf("wrong key: %d, want 401", resp.StatusCode)
	}
	if code, body := ready(t, s); code != 200 || !strings.Contains(body, `"database":"ok"`) {
		t.Errorf("/readyz: %d %s", code, body)
	}
	// Request lines are flushed in batches, at least every 100ms.
	deadline := time.Now().Add(3 * time.Second)
	for !strings.Contains(s.stderrText(), `"msg":"request"`) {
		if time.Now().After(deadline) {
			t.Fatalf("no request log line:\n%s", s.stderrText())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestZeroConfigBindsLoopbackOnly: without a master key, serve refuses
// an address beyond loopback (exit 1, saying how to set a key).
func TestZeroConfigBindsLoopbackOnly(t *testing.T) {
	bin := buildBinary(t)
	cmd := exec.Command(bin, "serve", "--addr", "0.0.0.0:0")
	cmd.Dir = t.TempDir()
	cmd.Env = filteredEnv()
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); err == nil || code != 1 || !strings.Contains(string(out), "no master key is configured: set auth.master_key or TOLLGATE_MASTER_KEY") {
		t.Errorf("--addr 0.0.0.0:0 without a master key: exit %d (%v):\n%s", code, err, out)
	}
	s2 := startServe(t, bin, []string{"TOLLGATE_MASTER_KEY=chosen-0123456789abcdef0123456789"}, "--addr", "127.0.0.1:0")
	if s2.key != "" {
		t.Errorf("a key was generated although TOLLGATE_MASTER_KEY was set")
	}
	resp, _ := post(t, "http://"+s2.addr+"/v1/chat/completions", `{"model":"echo","messages":[{"role":"user","content":"x"}]}`, "Authorization: Bearer chosen-0123456789abcdef0123456789")
	if resp.StatusCode != 200 {
		t.Errorf("TOLLGATE_MASTER_KEY not honoured: %d", resp.StatusCode)
	}
}

func TestVersionAndCheckConfig(t *testing.T) {
	bin := buildBinary(t)
	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "tollgate ") {
		t.Errorf("version: %q %v", out, err)
	}
	cfg := filepath.Join(t.TempDir(), "tollgate.yaml")
	os.WriteFile(cfg, []byte(`
auth: { master_key: "${MK}" }
providers:
  - { name: ant, type: anthropic, api_key: "sk-ant-api03-verysecretvalue" }
models:
  - { name: claude-sonnet-4-5, aliases: [anthropic/claude-sonnet-4.5], targets: [ { provider: ant, model: claude-sonnet-4-5-20250929 } ] }
`), 0o600)
	cmd := exec.Command(bin, "check-config", "--config", cfg)
	cmd.Env = append(filteredEnv(), "MK=master-secret-value-0123456789abcdef")
	out, err = cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("check-config: %v\n%s", err, out)
	}
	for _, want := range []string{"claude-sonnet-4-5 (aliases: anthropic/claude-sonnet-4.5)", "ant/claude-sonnet-4-5-20250929 (anthropic)", "https://api.anthropic.com"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("check-config output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "verysecret") || strings.Contains(string(out), "master-secret") {
		t.Errorf("check-config prints secrets:\n%s", out)
	}
	// A missing variable is an error that names it; the exit code is 1.
	cmd = exec.Command(bin, "check-config", "--config", cfg)
	cmd.Env = filteredEnv()
	out, err = cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "auth.master_key: environment variable MK is not set") {
		t.Errorf("check-config without MK: %v\n%s", err, out)
	}
	// serve refuses a bad config at start-up.
	os.WriteFile(cfg, []byte("providers: [ { name: a, type: echo, colour: red } ]\nmodels: [ { name: m, targets: [ { provider: a } ] } ]\n"), 0o600)
	cmd = exec.Command(bin, "serve", "--config", cfg)
	cmd.Dir = t.TempDir()
	out, err = cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "providers[0].colour: unknown field") {
		t.Errorf("serve with a bad config: %v\n%s", err, out)
	}
}

// SIGTERM lets in-flight streams finish within the drain time, then exits.
func TestGracefulShutdown(t *testing.T) {
	bin := buildBinary(t)
	events := upstreamtest.Events("anthropic_stream.sse")
	up := upstreamtest.Static(upstreamtest.Reply{Events: events, Gap: 60 * time.Millisecond})
	defer up.Close()
	for _, tc := range []struct {
		name     string
		drain    string
		complete bool
	}{
		{"stream finishes within the drain time", "10s", true},
		{"stream cut when the drain time is over", "200ms", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), "tollgate.yaml")
			os.WriteFile(cfg, []byte(`
server: { drain_timeout: `+tc.drain+` }
auth: { master_key: `+mk+` }
providers: [ { name: ant, type: anthropic, base_url: "`+up.URL+`", api_key: up } ]
models: [ { name: claude, targets: [ { provider: ant, model: claude-x } ] } ]
`), 0o600)
			s := startServe(t, bin, nil, "--config", cfg, "--addr", "127.0.0.1:0")
			req, _ := http.NewRequest("POST", "http://"+s.addr+"/v1/messages",
				strings.NewReader(`{"model":"claude","max_tokens":9,"stream":true,"messages":[{"role":"user","content":"x"}]}`))
			req.Header.Set("x-api-key", mk)
			req.Header.Set("anthropic-version", "2023-06-01")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			s.cmd.Process.Signal(syscall.SIGTERM)
			body, _ := io.ReadAll(resp.Body)
			finished := strings.HasSuffix(string(body), "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
			if finished != tc.complete {
				t.Errorf("stream finished = %v, want %v; got %d bytes", finished, tc.complete, len(body))
			}
			select {
			case err := <-s.done:
				if err != nil {
					t.Errorf("exit: %v\n%s", err, s.stderrText())
				}
			case <-time.After(15 * time.Second):
				t.Fatal("tollgate did not exit after SIGTERM")
			}
			if _, err := http.Get("http://" + s.addr + "/healthz"); err == nil {
				t.Errorf("still accepting connections after shutdown")
			}
		})
	}
}

// Every request ends in exactly one ledger record, written out by the time
// a graceful shutdown completes.
func TestLedgerRecordsEveryRequest(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	s := startServeIn(t, dir, bin, []string{"TOLLGATE_MASTER_KEY=" + mk}, "--addr", "127.0.0.1:0")
	base := "http://" + s.addr
	var ids []string
	for _, req := range []struct{ body, key string }{
		{`{"model":"echo","messages":[{"role":"user","content":"one two"}]}`, mk},
		{`{"model":"echo","stream":true,"messages":[{"role":"user","content":"three"}]}`, mk},
		{`{"model":"echo","messages":[{"role":"user","content":"x"}]}`, "wrong"},
		{`{"model":"nope","messages":[{"role":"user","content":"x"}]}`, mk},
	} {
		resp, _ := post(t, base+"/v1/chat/completions", req.body, "Authorization: Bearer "+req.key)
		ids = append(ids, resp.Header.Get("Tollgate-Request-Id"))
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	if err := <-s.done; err != nil {
		t.Fatalf("exit: %v\n%s", err, s.stderrText())
	}
	db, err := store.Open(context.Background(), "sqlite://"+filepath.Join(dir, "tollgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	recs, err := db.Requests(context.Background(), store.RequestFilter{})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]store.Request{}
	for _, r := range recs {
		byID[r.ID] = r
	}
	if len(recs) != len(ids) || len(byID) != len(ids) {
		t.Fatalf("%d records (%d distinct) for %d requests", len(recs), len(byID), len(ids))
	}
	ok, stream, unauth, unknown := byID[ids[0]], byID[ids[1]], byID[ids[2]], byID[ids[3]]
	if ok.Status != 200 || ok.Lane != "passthrough" || ok.Output == 0 || ok.Input == 0 || ok.ClientProtocol != "openai" || ok.ClientIP != "127.0.0.1" {
		t.Errorf("served request: %+v", ok)
	}
	if !stream.Stream || stream.Output == 0 {
		t.Errorf("streamed request: %+v", stream)
	}
	if unauth.Status != 401 || unauth.ErrorType != "authentication_error" {
		t.Errorf("rejected request: %+v", unauth)
	}
	if unknown.Status != 404 || unknown.ErrorType != "not_found_error" || unknown.Model != "nope" {
		t.Errorf("unknown model: %+v", unknown)
	}
}

// With database.ledger_sync a request's record is committed before its
// answer ends: each is in the database as soon as the client has the
// answer, and a kill -9 right after loses none.
func TestLedgerSyncRecordsBeforeAnswering(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	cfg := writeConfig(t, `
auth: { master_key: "`+mk+`" }
database: { url: "sqlite://`+filepath.Join(dir, "tollgate.db")+`", spill_path: "`+filepath.Join(dir, "spill")+`", ledger_sync: true }
providers: [ { name: demo, type: echo } ]
models: [ { name: echo, targets: [ { provider: demo } ] } ]
`)
	s := startServeIn(t, dir, bin, nil, "--config", cfg, "--addr", "127.0.0.1:0")
	db, err := store.Open(context.Background(), "sqlite://"+filepath.Join(dir, "tollgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var ids []string
	for i, body := range []string{
		`{"model":"echo","messages":[{"role":"user","content":"one two"}]}`,
		`{"model":"echo","stream":true,"messages":[{"role":"user","content":"three"}]}`,
		`{"model":"nope","messages":[{"role":"user","content":"x"}]}`,
	} {
		resp, _ := post(t, "http://"+s.addr+"/v1/chat/completions", body, "Authorization: Bearer "+mk)
		ids = append(ids, resp.Header.Get("Tollgate-Request-Id"))
		recs, err := db.Requests(context.Background(), store.RequestFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != i+1 || !slices.ContainsFunc(recs, func(r store.Request) bool { return r.ID == ids[i] }) {
			t.Fatalf("after answer %d the database holds %d records, not its own %s: %v", i+1, len(recs), ids[i], recs)
		}
	}
	s.cmd.Process.Kill()
	<-s.done
	recs, err := db.Requests(context.Background(), store.RequestFilter{})
	if err != nil || len(recs) != len(ids) {
		t.Fatalf("after kill -9: %d records, %v", len(recs), err)
	}
}
