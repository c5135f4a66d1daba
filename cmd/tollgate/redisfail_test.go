package main_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/store"
)

// startRedis runs a redis-server of the test's own on a free port, without
// persistence, and returns its port and a function that kills it.
func startRedis(t *testing.T, port int) func() {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server is not installed (apt-get install redis-server): %v", err)
	}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	kill := func() { cmd.Process.Kill(); <-done }
	t.Cleanup(kill)
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return kill
		}
		if time.Now().After(deadline) {
			t.Fatal("redis-server did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Redis killed and restarted under two replicas, one failing open and one
// closed: each keeps to its mode while Redis is away, both recover, and
// the budget counter, lost with Redis's data, is reloaded from the ledger.
func TestRedisOutageFailModes(t *testing.T) {
	pgURL, _ := requireServices(t)
	port := freePort(t)
	kill := startRedis(t, port)
	redisURL := fmt.Sprintf("redis://127.0.0.1:%d/0", port)
	up := newFakeOpenAI("-")
	defer up.Close()
	open := startServe(t, buildBinary(t), nil, "--addr", "127.0.0.1:0", "--config", writeConfig(t, replicaConfig(pgURL, redisURL, "fail_open", up.URL)))
	closed := startServe(t, buildBinary(t), nil, "--addr", "127.0.0.1:0", "--config", writeConfig(t, replicaConfig(pgURL, redisURL, "fail_closed", up.URL)))
	keyID, key := createKey(t, "http://"+open.addr, `{"name":"k","limits":{"rpm":1000,"budget_usd":"1"}}`)
	body := `{"model":"m","max_tokens":50,"messages":[{"role":"user","content":"` + strings.Repeat("word ", 120) + `"}]}`
	call := func(s *server) (int, string) {
		resp, out := post(t, "http://"+s.addr+"/v1/chat/completions", body, "Authorization: Bearer "+key)
		return resp.StatusCode, out
	}
	for _, s := range []*server{open, closed} {
		if status, out := call(s); status != 200 {
			t.Fatalf("before the outage: %d %s", status, out)
		}
	}

	kill()
	if status, out := call(closed); status != 503 || gjson.Get(out, "error.type").String() != "service_unavailable_error" ||
		!strings.Contains(out, "cannot be checked") {
		t.Errorf("fail_closed while Redis is down: %d %s", status, out)
	}
	for i := 0; i < 3; i++ {
		if status, out := call(open); status != 200 {
			t.Errorf("fail_open while Redis is down: %d %s", status, out)
		}
	}
	for _, s := range []*server{open, closed} {
		if !strings.Contains(s.stderrText(), "limits: counters unreachable") {
			t.Errorf("no log line for the outage:\n%s", s.stderrText())
		}
	}
	if code, body := ready(t, open); code != 503 || !strings.Contains(body, `"database":"ok"`) || strings.Contains(body, `"limits":"ok"`) {
		t.Errorf("/readyz while Redis is down: %d %s", code, body)
	}
	if m := scrape(t, open); m["tollgate_limiter_unchecked_total"] != 3 || m["tollgate_limiter_errors_total"] < 3 || m["tollgate_limiter_up"] != 0 {
		t.Errorf("fail_open metrics during the outage: %v", m)
	}
	if m := scrape(t, closed); m["tollgate_limiter_unchecked_total"] != 0 || m["tollgate_limiter_errors_total"] < 1 || m["tollgate_limiter_up"] != 0 {
		t.Errorf("fail_closed metrics during the outage: %v", m)
	}

	// Redis comes back empty.
	startRedis(t, port)
	// Each gateway probes Redis in the background while it is down (a
	// fail_open one admits meanwhile without asking it), and says when it
	// is back; the budgets used during the outage are then reloaded from
	// the ledger by the next request.
	waitFor := func(s *server, line string) {
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(s.stderrText(), line) {
			if time.Now().After(deadline) {
				t.Fatalf("no %q after Redis returned:\n%s", line, s.stderrText())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitFor(closed, "limits: counters reachable again")
	waitFor(open, "limits: counters reachable again")
	waitFor(open, "limits: budgets used during the outage reloaded from the ledger")
	for _, s := range []*server{closed, open} {
		if status, out := call(s); status != 200 {
			t.Fatalf("after the recovery: %d %s", status, out)
		}
	}

	if code, body := ready(t, closed); code != 200 || !strings.Contains(body, `"limits":"ok"`) {
		t.Errorf("/readyz after the recovery: %d %s", code, body)
	}
	if m := scrape(t, open); m["tollgate_limiter_up"] != 1 {
		t.Errorf("metrics after the recovery: %v", m)
	}
	rc := redisClient(t, redisURL)
	committed, err := rc.HGet(context.Background(), "tollgate:key:"+keyID+":usd:t", "c").Int64()
	if err != nil {
		t.Fatalf("budget counter after the restart: %v", err)
	}
	for _, s := range []*server{open, closed} {
		s.cmd.Process.Signal(syscall.SIGTERM)
		if err := <-s.done; err != nil {
			t.Fatal(err)
		}
	}
	db, err := store.Open(context.Background(), pgURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	spent, _, err := db.Spend(context.Background(), keyID, nil, time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	// 2 before, 3 open during, 2 after: 7 served requests.
	if spent != 7*fakeCost || committed != spent {
		t.Errorf("ledger spend %d (want %d), reloaded counter %d", spent, 7*fakeCost, committed)
	}
}

// scrape reads a replica's /metrics: tollgate_ samples by name, labels
// dropped and summed.
func scrape(t *testing.T, s *server) map[string]float64 {
	t.Helper()
	_, text := get(t, s, "/metrics")
	out := map[string]float64{}
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "tollgate_") {
			continue
		}
		name, rest, _ := strings.Cut(line, " ")
		name, _, _ = strings.Cut(name, "{")
		v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
		if err != nil {
			t.Fatalf("metrics line %q", line)
		}
		out[name] += v
	}
	return out
}

func ready(t *testing.T, s *server) (int, string) { return get(t, s, "/readyz") }

// get fetches a path from a replica.
func get(t *testing.T, s *server, path string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+s.addr+path, nil)
	req.Header.Set("Authorization", "Bearer "+mk) // /metrics takes the master key
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
