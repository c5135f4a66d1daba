package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/config"
)

const reloadMK = "0123456789abcdef0123456789abcdef"

// startServeHUP is startServe with a reload channel standing for SIGHUP.
func startServeHUP(t *testing.T, hup chan os.Signal, args ...string) (addr string, stderr *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr = &syncBuffer{}
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- runServeReloading(ctx, func() {}, args, stderr, func(a string) { addrc <- a }, hup)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	select {
	case addr = <-addrc:
		return addr, stderr
	case err := <-done:
		done <- err
		t.Fatalf("serve ended before listening: %v\n%s", err, stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not start:\n%s", stderr)
	}
	return
}

// hupAndWait sends a SIGHUP and waits for the log line msg to appear
// once more than before.
func hupAndWait(t *testing.T, hup chan os.Signal, stderr *syncBuffer, msg string) {
	t.Helper()
	needle := `"msg":"` + msg
	before := strings.Count(stderr.String(), needle)
	hup <- syscall.SIGHUP
	waitFor(t, stderr, func(s string) bool { return strings.Count(s, needle) > before }, msg)
}

func waitFor(t *testing.T, stderr *syncBuffer, ok func(string) bool, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok(stderr.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the log:\n%s", what, stderr)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// ask sends a Messages request for model with key and returns the status
// and body.
func ask(t *testing.T, addr, key, model string) (int, string) {
	t.Helper()
	body := `{"model":"` + model + `","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`
	req, _ := http.NewRequest("POST", "http://"+addr+"/v1/messages", strings.NewReader(body))
	req.Header.Set("x-api-key", key)
	req.Header.Set("anthropic-version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// postReload calls POST /admin/reload with key ("" for none).
func postReload(t *testing.T, addr, key string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", "http://"+addr+"/admin/reload", nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func get(t *testing.T, url, key string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

const reloadBase = "auth: { master_key: \"" + reloadMK + "\" }\ndatabase: { url: none }\n"

// TestReloadAddsAndRemovesModels: after SIGHUP a model added to the file
// answers, a model removed from it is unknown, an unchanged file replaces
// nothing, and settings that need a restart are named, not applied.
func TestReloadAddsAndRemovesModels(t *testing.T) {
	t.Setenv("TOLLGATE_MASTER_KEY", "")
	dir := t.TempDir()
	cfg := writeConfig(t, dir, reloadBase+`
providers: [ { name: demo, type: echo } ]
models: [ { name: old, targets: [ { provider: demo } ] }, { name: kept, targets: [ { provider: demo } ] } ]
`)
	hup := make(chan os.Signal, 1)
	addr, stderr := startServeHUP(t, hup, "--config", cfg, "--addr", "127.0.0.1:0")
	if code, body := ask(t, addr, reloadMK, "old"); code != 200 {
		t.Fatalf("old before the reload: %d %s", code, body)
	}
	if code, _ := ask(t, addr, reloadMK, "new"); code != 404 {
		t.Fatalf("new before the reload: %d", code)
	}

	writeConfig(t, dir, reloadBase+`
server: { log_format: text, max_body_bytes: 1000 }
providers: [ { name: demo, type: echo } ]
models: [ { name: kept, targets: [ { provider: demo } ] }, { name: new, targets: [ { provider: demo } ] } ]
`)
	hupAndWait(t, hup, stderr, "configuration reloaded")
	if code, body := ask(t, addr, reloadMK, "new"); code != 200 || !strings.Contains(body, "hi") {
		t.Errorf("new after the reload: %d %s", code, body)
	}
	if code, body := ask(t, addr, reloadMK, "old"); code != 404 || !strings.Contains(body, "does not exist") {
		t.Errorf("old after the reload: %d %s", code, body)
	}
	if code, _ := ask(t, addr, reloadMK, "kept"); code != 200 {
		t.Errorf("kept after the reload: %d", code)
	}
	if list := get(t, "http://"+addr+"/v1/models", reloadMK); !strings.Contains(list, `"new"`) || strings.Contains(list, `"old"`) {
		t.Errorf("/v1/models after the reload: %s", list)
	}
	logs := stderr.String()
	for _, want := range []string{`"models_added":["new"]`, `"models_removed":["old"]`, `"trigger":"SIGHUP"`,
		`apply only at a restart`, `"settings":["server.max_body_bytes","server.log_format"]`} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log lacks %s:\n%s", want, logs)
		}
	}
	if strings.Contains(logs, "level=") {
		t.Errorf("log_format changed on a reload:\n%s", logs)
	}

	// The same file again: nothing to replace, said so.
	code, body := postReload(t, addr, reloadMK)
	var rep ReloadReport
	if err := json.Unmarshal([]byte(body), &rep); code != 200 || err != nil {
		t.Fatalf("POST /admin/reload: %d %s", code, body)
	}
	if rep.Reloaded || rep.Models != 2 || rep.Providers != 1 || len(rep.ModelsAdded) != 0 || len(rep.RestartRequired) != 2 {
		t.Errorf("reloading the same file: %s", body)
	}
}

// TestReloadWithoutAFile: without a configuration file SIGHUP says there
// is nothing to reload (and the process goes on), as the admin API does.
func TestReloadWithoutAFile(t *testing.T) {
	t.Setenv("TOLLGATE_CONFIG", "")
	t.Setenv("TOLLGATE_MASTER_KEY", reloadMK)
	t.Chdir(t.TempDir()) // the default database is made here
	hup := make(chan os.Signal, 1)
	addr, stderr := startServeHUP(t, hup, "--addr", "127.0.0.1:0")
	hupAndWait(t, hup, stderr, "SIGHUP: there is no configuration file to reload")
	if code, _ := ask(t, addr, reloadMK, "echo"); code != 200 {
		t.Errorf("echo after SIGHUP: %d", code)
	}
	if code, body := postReload(t, addr, reloadMK); code != 400 || !strings.Contains(body, "no configuration file") || !strings.Contains(body, `"invalid_request_error"`) {
		t.Errorf("POST /admin/reload without a file: %d %s", code, body)
	}
}

// TestReloadRefusesABrokenFile: a file that does not load or validate is
// refused, with its error logged and answered; the old one keeps serving.
func TestReloadRefusesABrokenFile(t *testing.T) {
	t.Setenv("TOLLGATE_MASTER_KEY", "")
	dir := t.TempDir()
	good := reloadBase + "providers: [ { name: demo, type: echo } ]\nmodels: [ { name: echo, targets: [ { provider: demo } ] } ]\n"
	cfg := writeConfig(t, dir, good)
	hup := make(chan os.Signal, 1)
	addr, stderr := startServeHUP(t, hup, "--config", cfg, "--addr", "127.0.0.1:0")

	for _, tt := range []struct{ yaml, want string }{
		{"providers: [ { name: demo, type: echo\n", "parsing YAML"},
		{reloadBase + "providers: [ { name: demo, type: echo } ]\nmodels: [ { name: echo2, targets: [ { provider: nope } ] } ]\n", `models[0].targets[0].provider: unknown provider \"nope\"`},
		{reloadBase + "providers: [ { name: demo, type: echo } ]\nmodels: [ { name: echo2, targets: [ { provider: demo } ] } ]\nlimits: { key_defaults: { rpm: -1 } }\n", "limits.key_defaults"},
	} {
		writeConfig(t, dir, tt.yaml)
		code, body := postReload(t, addr, reloadMK)
		if code != 422 || !strings.Contains(body, tt.want) || !strings.Contains(body, "the running configuration is kept") {
			t.Errorf("POST /admin/reload of a broken file: %d %s, want 422 with %s", code, body, tt.want)
		}
		if code, _ := ask(t, addr, reloadMK, "echo"); code != 200 {
			t.Errorf("the old configuration stopped serving: %d", code)
		}
		if code, _ := ask(t, addr, reloadMK, "echo2"); code != 404 {
			t.Errorf("part of a refused file applies: %d", code)
		}
	}
	hupAndWait(t, hup, stderr, "configuration reload refused")
	if logs := stderr.String(); !strings.Contains(logs, `"trigger":"SIGHUP"`) || !strings.Contains(logs, `"trigger":"admin API"`) || strings.Contains(logs, `"msg":"configuration reloaded"`) {
		t.Errorf("refusals not logged as such:\n%s", logs)
	}
	writeConfig(t, dir, good)
	if code, body := postReload(t, addr, reloadMK); code != 200 {
		t.Errorf("reloading the good file again: %d %s", code, body)
	}
}

// TestReloadNeedsTheMasterKey: POST /admin/reload is the admin API's: a
// virtual key gets 403, no key or a wrong one 401, other methods 405,
// all in the admin envelope.
func TestReloadNeedsTheMasterKey(t *testing.T) {
	t.Setenv("TOLLGATE_MASTER_KEY", "")
	t.Setenv("TOLLGATE_CONFIG", "")
	t.Setenv("TOLLGATE_URL", "")
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "auth: { master_key: \""+reloadMK+"\" }\ndatabase: { url: \"sqlite://"+filepath.Join(dir, "gw.db")+"\" }\n"+echoModel)
	var out, errb bytes.Buffer
	if code := Main([]string{"migrate", "--config", cfg}, &out, &errb); code != 0 {
		t.Fatal(errb.String())
	}
	out.Reset()
	if code := Main([]string{"keys", "create", "--name", "v", "--json", "--config", cfg}, &out, &errb); code != 0 {
		t.Fatal(errb.String())
	}
	var created struct{ Key string }
	if err := json.Unmarshal(out.Bytes(), &created); err != nil || created.Key == "" {
		t.Fatalf("keys create: %v %s", err, out.String())
	}
	addr, _, _ := startServe(t, "--config", cfg, "--addr", "127.0.0.1:0")

	for _, tt := range []struct {
		key  string
		code int
		typ  string
	}{{"", 401, "authentication_error"}, {"sk-wrong-0123456789abcdef0123456789", 401, "authentication_error"}, {created.Key, 403, "permission_error"}, {reloadMK, 200, ""}} {
		code, body := postReload(t, addr, tt.key)
		if code != tt.code || tt.typ != "" && !strings.Contains(body, `"type":"`+tt.typ+`"`) {
			t.Errorf("key %.8q: %d %s, want %d %s", tt.key, code, body, tt.code, tt.typ)
		}
	}
	req, _ := http.NewRequest("GET", "http://"+addr+"/admin/reload", nil)
	req.Header.Set("Authorization", "Bearer "+reloadMK)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "POST" {
		t.Errorf("GET /admin/reload: %d allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
	// The admin API checks key model names against the routes of now.
	writeConfig(t, dir, "auth: { master_key: \""+reloadMK+"\" }\ndatabase: { url: \"sqlite://"+filepath.Join(dir, "gw.db")+"\" }\n"+
		"providers: [ { name: demo, type: echo } ]\nmodels: [ { name: fresh, targets: [ { provider: demo } ] } ]\n")
	if code, body := postReload(t, addr, reloadMK); code != 200 {
		t.Fatalf("reload: %d %s", code, body)
	}
	req, _ = http.NewRequest("POST", "http://"+addr+"/admin/keys", strings.NewReader(`{"name":"f","models":["fresh"]}`))
	req.Header.Set("Authorization", "Bearer "+reloadMK)
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Errorf("a key for a model added by the reload: %d %s", resp.StatusCode, b)
	}
}

// slowStream is an Anthropic upstream whose streams send their first
// text, then wait for release before the rest. Closed counts the
// connections that ended.
type slowStream struct {
	*httptest.Server
	release chan struct{}
	closed  atomic.Int32
}

func newSlowStream(t *testing.T) *slowStream {
	s := &slowStream{release: make(chan struct{})}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		event := func(name, data string) {
			io.WriteString(w, "event: "+name+"\ndata: "+data+"\n\n")
			w.(http.Flusher).Flush()
		}
		event("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}`)
		event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"before "}}`)
		select {
		case <-s.release:
		case <-r.Context().Done():
			return
		}
		event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"after"}}`)
		event("content_block_stop", `{"type":"content_block_stop","index":0}`)
		event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}}`)
		event("message_stop", `{"type":"message_stop"}`)
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateClosed {
			s.closed.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// TestReloadKeepsStreamsInFlight: a stream under way when its model and
// provider are removed runs to its end on the old provider; new requests
// see the new configuration at once; the old provider's connection is
// closed once its last request is over.
func TestReloadKeepsStreamsInFlight(t *testing.T) {
	t.Setenv("TOLLGATE_MASTER_KEY", "")
	up := newSlowStream(t)
	dir := t.TempDir()
	cfg := writeConfig(t, dir, reloadBase+`
providers: [ { name: slow, type: anthropic, base_url: "`+up.URL+`", api_key: "k" }, { name: demo, type: echo } ]
models: [ { name: claude-slow, targets: [ { provider: slow, model: m } ] }, { name: echo, targets: [ { provider: demo } ] } ]
`)
	addr, stderr := startServeHUP(t, nil, "--config", cfg, "--addr", "127.0.0.1:0")

	req, _ := http.NewRequest("POST", "http://"+addr+"/v1/messages",
		strings.NewReader(`{"model":"claude-slow","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("x-api-key", reloadMK)
	req.Header.Set("anthropic-version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("stream: %d", resp.StatusCode)
	}
	br := bufio.NewReader(resp.Body)
	var got bytes.Buffer
	for !bytes.Contains(got.Bytes(), []byte("before ")) {
		line, err := br.ReadBytes('\n')
		got.Write(line)
		if err != nil {
			t.Fatalf("the stream ended early: %v\n%s", err, got.String())
		}
	}

	writeConfig(t, dir, reloadBase+"providers: [ { name: demo, type: echo } ]\nmodels: [ { name: echo, targets: [ { provider: demo } ] } ]\n")
	code, body := postReload(t, addr, reloadMK)
	if code != 200 || !strings.Contains(body, `"models_removed":["claude-slow"]`) || !strings.Contains(body, `"providers_removed":["slow"]`) {
		t.Fatalf("reload: %d %s", code, body)
	}
	if code, _ := ask(t, addr, reloadMK, "claude-slow"); code != 404 {
		t.Errorf("a new request for the removed model: %d, want 404", code)
	}
	if n := up.closed.Load(); n != 0 {
		t.Errorf("%d upstream connections closed while the stream runs", n)
	}

	close(up.release)
	rest, err := io.ReadAll(br)
	if err != nil {
		t.Fatalf("the stream was cut: %v\n%s%s", err, got.String(), rest)
	}
	got.Write(rest)
	if s := got.String(); !strings.Contains(s, `"text":"after"`) || !strings.Contains(s, "event: message_stop") || strings.Contains(s, "event: error") {
		t.Errorf("the stream did not run to its end:\n%s", s)
	}
	line := regexp.MustCompile(`"path":"/v1/messages","status":200,[^\n]*"model":"claude-slow","provider":"slow"`)
	waitFor(t, stderr, line.MatchString, "the stream's request line")
	deadline := time.Now().Add(10 * time.Second)
	for up.closed.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the removed provider's connection was not closed after its last request")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestReloadKeepsCounters: the requests counted before a reload still
// count after it, once (the metrics are not reset or registered twice),
// breaker gauges follow the models, and the limiter keeps the minute's
// requests while the new limit applies.
func TestReloadKeepsCounters(t *testing.T) {
	t.Setenv("TOLLGATE_MASTER_KEY", "")
	dir := t.TempDir()
	models := func(rpm string, extra string) string {
		return reloadBase + "providers: [ { name: demo, type: echo } ]\nmodels: [ { name: echo, limits: { rpm: " + rpm + " }, targets: [ { provider: demo } ] }" + extra + " ]\n"
	}
	cfg := writeConfig(t, dir, models("2", ", { name: gone, targets: [ { provider: demo, model: g } ] }"))
	hup := make(chan os.Signal, 1)
	addr, stderr := startServeHUP(t, hup, "--config", cfg, "--addr", "127.0.0.1:0")
	for i := range 2 {
		if code, body := ask(t, addr, reloadMK, "echo"); code != 200 {
			t.Fatalf("request %d: %d %s", i, code, body)
		}
	}
	if code, _ := ask(t, addr, reloadMK, "echo"); code != 429 {
		t.Fatalf("third request under rpm 2: %d", code)
	}

	// rpm 3: the minute's two requests (and the refusal, which counts
	// none) still count, so one more is admitted, not three.
	writeConfig(t, dir, models("3", ", { name: added, targets: [ { provider: demo, model: a } ] }"))
	hupAndWait(t, hup, stderr, "configuration reloaded")
	if code, body := ask(t, addr, reloadMK, "echo"); code != 200 {
		t.Fatalf("first request after the reload: %d %s", code, body)
	}
	if code, body := ask(t, addr, reloadMK, "echo"); code != 429 || !strings.Contains(body, "3") {
		t.Errorf("the limiter forgot the requests before the reload: %d %s", code, body)
	}

	scrape := get(t, "http://"+addr+"/metrics", reloadMK)
	count := func(re string) []string { return regexp.MustCompile(re).FindAllString(scrape, -1) }
	if got := count(`(?m)^tollgate_requests_total\{lane="passthrough",model="echo",provider="demo",status="200"\} .*$`); len(got) != 1 || !strings.HasSuffix(got[0], " 3") {
		t.Errorf("requests served across the reload: %q, want one series at 3\n%s", got, scrape)
	}
	if got := count(`(?m)^tollgate_requests_total\{lane="none",model="echo",provider="",status="429"\} .*$`); len(got) != 1 || !strings.HasSuffix(got[0], " 2") {
		t.Errorf("refusals across the reload: %q, want one series at 2", got)
	}
	if got := count(`(?m)^tollgate_limiter_refusals_total\{limit="requests"\} .*$`); len(got) != 1 || !strings.HasSuffix(got[0], " 2") {
		t.Errorf("limiter refusals across the reload: %q", got)
	}
	if !strings.Contains(scrape, `tollgate_circuit_breaker_state{model="added",target="demo/a"} 0`) || strings.Contains(scrape, `model="gone"`) {
		t.Errorf("breaker gauges do not follow the reload:\n%s", scrape)
	}
}

// TestReloadMakesALimiter: a gateway that started with nothing to limit
// (no database, no model limits) limits a model once a reload gives it
// limits, and /readyz checks the limiter from then on.
func TestReloadMakesALimiter(t *testing.T) {
	t.Setenv("TOLLGATE_MASTER_KEY", "")
	dir := t.TempDir()
	cfg := writeConfig(t, dir, reloadBase+echoModel)
	addr, _, _ := startServe(t, "--config", cfg, "--addr", "127.0.0.1:0")
	if r := get(t, "http://"+addr+"/readyz", reloadMK); strings.Contains(r, "limits") {
		t.Fatalf("a limiter with nothing to limit: %s", r)
	}
	writeConfig(t, dir, reloadBase+"providers: [ { name: demo, type: echo } ]\nmodels: [ { name: echo, limits: { rpm: 1 }, targets: [ { provider: demo } ] } ]\n")
	if code, body := postReload(t, addr, reloadMK); code != 200 || !strings.Contains(body, `"models_changed":["echo"]`) {
		t.Fatalf("reload: %d %s", code, body)
	}
	if code, _ := ask(t, addr, reloadMK, "echo"); code != 200 {
		t.Errorf("first request: %d", code)
	}
	if code, _ := ask(t, addr, reloadMK, "echo"); code != 429 {
		t.Errorf("second request under rpm 1: %d", code)
	}
	if r := get(t, "http://"+addr+"/readyz", reloadMK); !strings.Contains(r, `"limits":"ok"`) {
		t.Errorf("/readyz after the reload: %s", r)
	}
}

// TestReloadHidesNewSecrets: the credentials of a reloaded file are
// hidden in warnings as those of the first are.
func TestReloadHidesNewSecrets(t *testing.T) {
	var buf syncBuffer
	cfg := mustParse(t, reloadBase+echoModel)
	logger := newLogger(cfg, &buf)
	srv, err := Build(cfg, Options{MasterKey: reloadMK, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	const secret = "sk-ant-reloaded-5e6f7a8b9c"
	next := mustParse(t, reloadBase+"providers: [ { name: demo, type: echo }, { name: a, type: anthropic, api_key: \""+secret+"\" } ]\n"+
		"models: [ { name: echo, targets: [ { provider: demo } ] }, { name: c, targets: [ { provider: a, model: m } ] } ]\n")
	rep, err := srv.Reload(next)
	if err != nil || !rep.Reloaded || rep.Models != 2 {
		t.Fatalf("reload: %+v %v", rep, err)
	}
	logger.Warn("upstream said", "error", "bad key "+secret)
	if strings.Contains(buf.String(), secret) {
		t.Errorf("a reloaded credential was logged:\n%s", buf.String())
	}
}

func mustParse(t *testing.T, yaml string) *config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(yaml), os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestReloadConcurrentRequests: requests running while the configuration
// is swapped back and forth all succeed (and, under -race, share nothing
// unsynchronised).
func TestReloadConcurrentRequests(t *testing.T) {
	cfg := mustParse(t, reloadBase+echoModel)
	srv, err := Build(cfg, Options{MasterKey: reloadMK})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	other := mustParse(t, reloadBase+"providers: [ { name: demo, type: echo } ]\nmodels: [ { name: echo, aliases: [e], targets: [ { provider: demo } ] } ]\n")
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var failed atomic.Int32
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				req := httptest.NewRequest("POST", "/v1/messages", strings.NewReader(`{"model":"echo","max_tokens":5,"messages":[{"role":"user","content":"x"}]}`))
				req.Header.Set("x-api-key", reloadMK)
				req.Header.Set("anthropic-version", "2023-06-01")
				rec := httptest.NewRecorder()
				srv.Handler.ServeHTTP(rec, req)
				if rec.Code != 200 {
					failed.Add(1)
				}
			}
		})
	}
	for i := range 50 {
		next := cfg
		if i%2 == 0 {
			next = other
		}
		if _, err := srv.Reload(next); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if n := failed.Load(); n > 0 {
		t.Errorf("%d requests failed across reloads", n)
	}
}

// TestRestartOnlySettings: what a reload cannot apply is named field by
// field; providers, models and limits never are.
func TestRestartOnlySettings(t *testing.T) {
	was := mustParse(t, reloadBase+echoModel)
	now := mustParse(t, "auth: { master_key: \"another-0123456789abcdef0123456789\" }\ndatabase: { url: none }\n"+
		"redis: { url: \"redis://127.0.0.1:6379\" }\nmetrics: { addr: \"127.0.0.1:9090\" }\nlimits: { key_defaults: { rpm: 5 } }\n"+
		"providers: [ { name: other, type: echo } ]\nmodels: [ { name: e, targets: [ { provider: other } ] } ]\n")
	got := strings.Join(restartOnly(was, now), " ")
	if want := "auth.master_key redis.url metrics.addr"; got != want {
		t.Errorf("restartOnly = %q, want %q", got, want)
	}
	if got := restartOnly(was, was); len(got) != 0 {
		t.Errorf("an unchanged file: %q", got)
	}
}

// TestReloadAccessLog: logging.access decides which requests get a line,
// and a reload changes it for the requests that follow.
func TestReloadAccessLog(t *testing.T) {
	t.Setenv("TOLLGATE_MASTER_KEY", "")
	dir := t.TempDir()
	const models = `
providers: [ { name: demo, type: echo } ]
models: [ { name: m, targets: [ { provider: demo } ] } ]
`
	cfg := writeConfig(t, dir, reloadBase+"logging: { access: off }"+models)
	hup := make(chan os.Signal, 1)
	addr, stderr := startServeHUP(t, hup, "--config", cfg, "--addr", "127.0.0.1:0")
	lines := func() []string {
		var out []string
		for l := range strings.Lines(stderr.String()) {
			if strings.Contains(l, `"msg":"request"`) {
				out = append(out, l)
			}
		}
		return out
	}
	waitLines := func(n int) []string {
		t.Helper()
		waitFor(t, stderr, func(string) bool { return len(lines()) >= n }, fmt.Sprintf("%d request lines", n))
		return lines()
	}
	for range 3 {
		if code, body := ask(t, addr, reloadMK, "m"); code != 200 {
			t.Fatalf("off: %d %s", code, body)
		}
	}
	if code, _ := ask(t, addr, reloadMK, "nope"); code != 404 {
		t.Fatalf("off, unknown model: %d", code)
	}

	writeConfig(t, dir, reloadBase+"logging: { access: errors }"+models)
	hupAndWait(t, hup, stderr, "configuration reloaded")
	if !strings.Contains(stderr.String(), `"access_log_changed":true`) {
		t.Errorf("the reload's line does not say the access log changed:\n%s", stderr)
	}
	ask(t, addr, reloadMK, "m")
	ask(t, addr, reloadMK, "nope")
	got := waitLines(1)
	if len(got) != 1 || !strings.Contains(got[0], `"status":404`) {
		t.Fatalf("off, then errors: want only the 404 after the reload, got %q", got)
	}

	writeConfig(t, dir, reloadBase+"logging: { access: sample(2) }"+models)
	hupAndWait(t, hup, stderr, "configuration reloaded")
	for range 4 {
		ask(t, addr, reloadMK, "m")
	}
	ask(t, addr, reloadMK, "nope")
	got = waitLines(4)
	if len(got) != 4 || !strings.Contains(got[3], `"status":404`) {
		t.Fatalf("sample(2): want two of four successes and the 404, got %q", got)
	}
	if n := strings.Count(strings.Join(got[1:3], ""), `"status":200`); n != 2 {
		t.Errorf("sample(2): %d of the lines for successes, want 2: %q", n, got)
	}
}
