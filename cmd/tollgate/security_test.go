package main_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// serve refuses a master key too short to resist guessing, from the
// configuration or from the environment, saying how to make one.
func TestShortMasterKeyRefused(t *testing.T) {
	bin := buildBinary(t)
	cfg := filepath.Join(t.TempDir(), "tollgate.yaml")
	os.WriteFile(cfg, []byte("auth: { master_key: x }\nproviders: [ { name: d, type: echo } ]\nmodels: [ { name: e, targets: [ { provider: d } ] } ]\n"), 0o600)
	for _, tc := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"serve", "--config", cfg}, "", "auth.master_key: is 1 characters long; at least 32 are required (generate one with: openssl rand -hex 32)"},
		{[]string{"serve", "--addr", "127.0.0.1:0"}, "TOLLGATE_MASTER_KEY=x", "TOLLGATE_MASTER_KEY: is 1 characters long"},
		{[]string{"check-config", "--config", cfg}, "", "auth.master_key: is 1 characters long"},
	} {
		cmd := exec.Command(bin, tc.args...)
		cmd.Dir = t.TempDir()
		cmd.Env = append(filteredEnv(), tc.env)
		done := make(chan struct{})
		var out []byte
		var err error
		go func() { out, err = cmd.CombinedOutput(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("%v started with a one-character master key", tc.args)
		}
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), tc.want) {
			t.Errorf("%v %s: %v\n%s", tc.args, tc.env, err, out)
		}
	}
}

// A client that sends its headers or its body too slowly is cut off, so
// connections cannot be held open without a key; oversized headers get 431.
func TestSlowClientsAreCutOff(t *testing.T) {
	bin := buildBinary(t)
	cfg := filepath.Join(t.TempDir(), "tollgate.yaml")
	os.WriteFile(cfg, []byte(`
server: { read_header_timeout: 300ms, read_timeout: 600ms, max_header_bytes: 8192 }
auth: { master_key: `+mk+` }
providers: [ { name: d, type: echo } ]
models: [ { name: e, targets: [ { provider: d } ] } ]
`), 0o600)
	s := startServe(t, bin, nil, "--config", cfg, "--addr", "127.0.0.1:0")
	for name, partial := range map[string]string{
		"headers never finish": "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n",
		"body never finishes":  "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"model\":",
	} {
		c, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		c.Write([]byte(partial))
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		io.Copy(io.Discard, c) // until the server closes the connection
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("%s: connection held for %v", name, took)
		}
		c.Close()
	}
	req, _ := http.NewRequest("GET", "http://"+s.addr+"/healthz", nil)
	req.Header.Set("X-Padding", strings.Repeat("p", 16<<10))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("16 KiB of headers with max_header_bytes 8192: %d", resp.StatusCode)
	}
	// A stream longer than read_timeout is not cut: the deadline ends
	// with the body.
	resp, body := post(t, "http://"+s.addr+"/v1/chat/completions", `{"model":"e","stream":true,"messages":[{"role":"user","content":"`+strings.Repeat("word ", 200)+`"}]}`,
		"Authorization: Bearer "+mk)
	if resp.StatusCode != 200 || !strings.HasSuffix(body, "data: [DONE]\n\n") {
		t.Errorf("stream: %d %.200s", resp.StatusCode, body)
	}
}

var metricsListenRE = regexp.MustCompile(`"msg":"metrics listening","addr":"([^"]+)"`)

// metrics.addr serves /metrics on a listener of its own, and only there.
func TestMetricsOnTheirOwnAddress(t *testing.T) {
	bin := buildBinary(t)
	cfg := filepath.Join(t.TempDir(), "tollgate.yaml")
	os.WriteFile(cfg, []byte(`
auth: { master_key: `+mk+` }
metrics: { addr: "127.0.0.1:0", auth: none }
providers: [ { name: d, type: echo } ]
models: [ { name: e, targets: [ { provider: d } ] } ]
`), 0o600)
	s := startServe(t, bin, nil, "--config", cfg, "--addr", "127.0.0.1:0")
	m := metricsListenRE.FindStringSubmatch(s.stderrText())
	if m == nil {
		t.Fatalf("no metrics listener logged:\n%s", s.stderrText())
	}
	resp, err := http.Get("http://" + m[1] + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	found := false
	for sc.Scan() {
		found = found || strings.HasPrefix(sc.Text(), "tollgate_")
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || !found {
		t.Errorf("metrics listener: %d, samples %v", resp.StatusCode, found)
	}
	if code, body := get(t, s, "/metrics"); code == 200 || strings.Contains(body, "tollgate_") {
		t.Errorf("the main listener serves the metrics too: %d", code)
	}
}

// check-config never prints a password inside a provider's base_url.
func TestCheckConfigMasksURLPasswords(t *testing.T) {
	bin := buildBinary(t)
	cfg := filepath.Join(t.TempDir(), "tollgate.yaml")
	os.WriteFile(cfg, []byte(`
database: { url: "postgres://tg:db-hunter2-secret@db:5432/tg" }
providers:
  - { name: corp, type: openai, base_url: "https://svc:proxy-hunter2-secret@llm.internal/v1", api_key: "sk-upstream-hunter2" }
models: [ { name: m, targets: [ { provider: corp, model: x } ] } ]
`), 0o600)
	out, err := exec.Command(bin, "check-config", "--config", cfg).CombinedOutput()
	if err != nil {
		t.Fatalf("check-config: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "hunter2") || !strings.Contains(string(out), "https://svc:****@llm.internal/v1") {
		t.Errorf("check-config:\n%s", out)
	}
}
