package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSIGHUPReloads: a real SIGHUP reloads the configuration file (a
// model added answers, one removed does not) and does not end the
// process; a second one with a broken file is refused.
func TestSIGHUPReloads(t *testing.T) {
	bin := buildBinary(t)
	cfg := filepath.Join(t.TempDir(), "tollgate.yaml")
	write := func(models string) {
		t.Helper()
		if err := os.WriteFile(cfg, []byte("auth: { master_key: "+mk+" }\ndatabase: { url: none }\nproviders: [ { name: demo, type: echo } ]\nmodels: "+models+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("[ { name: before, targets: [ { provider: demo } ] } ]")
	s := startServe(t, bin, nil, "--config", cfg, "--addr", "127.0.0.1:0")
	ask := func(model string) int {
		t.Helper()
		resp, _ := post(t, "http://"+s.addr+"/v1/chat/completions", `{"model":"`+model+`","messages":[{"role":"user","content":"x"}]}`, "Authorization: Bearer "+mk)
		return resp.StatusCode
	}
	waitLog := func(msg string, n int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for strings.Count(s.stderrText(), `"msg":"`+msg) < n {
			if time.Now().After(deadline) {
				t.Fatalf("no %q in the log:\n%s", msg, s.stderrText())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	write("[ { name: after, targets: [ { provider: demo } ] } ]")
	s.cmd.Process.Signal(syscall.SIGHUP)
	waitLog("configuration reloaded", 1)
	if code := ask("after"); code != 200 {
		t.Errorf("the added model: %d", code)
	}
	if code := ask("before"); code != 404 {
		t.Errorf("the removed model: %d", code)
	}

	write("[ { name: broken, targets: [ { provider: missing } ] } ]")
	s.cmd.Process.Signal(syscall.SIGHUP)
	waitLog("configuration reload refused", 1)
	if code := ask("after"); code != 200 {
		t.Errorf("the running configuration after a refused reload: %d", code)
	}
	select {
	case err := <-s.done:
		t.Fatalf("tollgate exited on SIGHUP: %v\n%s", err, s.stderrText())
	default:
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	if err := <-s.done; err != nil {
		t.Errorf("exit: %v\n%s", err, s.stderrText())
	}
}
