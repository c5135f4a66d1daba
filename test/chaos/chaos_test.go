package chaos

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/cli"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/ledger"
	"github.com/tollgate/tollgate/internal/store"
)

const (
	master   = "sk-chaos"
	requests = 1000
	workers  = 20
	seed     = 42
)

// outcome is how one client request ended.
type outcome struct {
	id     string
	status int
	kind   string // served, error (a JSON error), broken (a stream ended by an error event), bad, hung
	detail string
}

func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("the chaos test takes a few seconds: go test without -short runs it")
	}
	// Three targets of one model fail 30% of the time each, in every way;
	// a fourth refuses connections and a fifth never completes them.
	a, b, c := newFake(true, seed, 0.3), newFake(true, seed+1, 0.3), newFake(false, seed+2, 0.3)
	defer a.Close()
	defer b.Close()
	defer c.Close()
	timeouts := `timeouts: { connect: 300ms, first_byte: 500ms, idle: 300ms }`
	cfg, err := config.Parse([]byte(fmt.Sprintf(`
providers:
  - { name: a, type: anthropic, base_url: %q, api_key: k, %s }
  - { name: b, type: anthropic, base_url: %q, api_key: k, %s }
  - { name: c, type: openai, base_url: "%s/v1", api_key: k, %s }
  - { name: dead, type: anthropic, base_url: "http://127.0.0.1:1", api_key: k, %s }
  - { name: silent, type: anthropic, base_url: "http://%s", api_key: k, %s }
models:
  - name: chaos
    routing: { max_attempts: 10, retry_deadline: 20s }
    targets: [ { provider: a, model: a }, { provider: b, model: b }, { provider: c, model: c }, { provider: dead, model: d }, { provider: silent, model: s } ]
`, a.URL, timeouts, b.URL, timeouts, c.URL, timeouts, timeouts, blackhole(t), timeouts)), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db, err := store.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "chaos.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	rec, err := ledger.New(db, ledger.Options{FlushInterval: 20 * time.Millisecond, SpillPath: filepath.Join(t.TempDir(), "spill")})
	if err != nil {
		t.Fatal(err)
	}
	built, err := cli.Build(cfg, cli.Options{MasterKey: master, Logger: slog.New(slog.DiscardHandler), Ledger: rec})
	if err != nil {
		t.Fatal(err)
	}
	h, closeIdle := built.Handler, built.Close
	defer closeIdle()
	gw := httptest.NewServer(h)
	defer gw.Close()

	// A seeded mix: streaming or not, Anthropic or OpenAI clients.
	type job struct{ stream, anthropic bool }
	rng := rand.New(rand.NewPCG(seed, 7))
	jobs := make(chan job, requests)
	for i := 0; i < requests; i++ {
		jobs <- job{rng.IntN(2) == 0, rng.IntN(2) == 0}
	}
	close(jobs)
	client := &http.Client{Timeout: 30 * time.Second} // far past any deadline: a timeout here is a hang
	var mu sync.Mutex
	var outcomes []outcome
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				o := send(client, gw.URL, j.stream, j.anthropic)
				mu.Lock()
				outcomes = append(outcomes, o)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)

	kinds := map[string]int{}
	for _, o := range outcomes {
		kinds[o.kind]++
		if o.kind == "error" {
			t.Logf("error %s %d: %.200s", o.id, o.status, o.detail)
		}
		if o.kind == "bad" || o.kind == "hung" {
			t.Errorf("request %s: %s (status %d): %s", o.id, o.kind, o.status, o.detail)
		}
	}
	// Some target is always healthy (30% failures each): at most 0.1% of
	// the requests may be answered with an error. Streams an upstream
	// broke after they began cannot be retried; they must end in the
	// protocol's error event (checked by send: anything else is "bad").
	if kinds["error"] > requests/1000 {
		t.Errorf("%d of %d requests failed although a target was healthy (at most %d allowed); outcomes %v",
			kinds["error"], requests, requests/1000, kinds)
	}

	// One ledger record per request, and every attempt in it.
	scrape, _ := http.NewRequest("GET", gw.URL+"/metrics", nil)
	scrape.Header.Set("Authorization", "Bearer "+master)
	resp, err := client.Do(scrape)
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	gw.Close()
	if err := rec.Close(ctx); err != nil {
		t.Fatal(err)
	}
	recs, err := db.Requests(ctx, store.RequestFilter{Limit: store.MaxRequestsPage - 1})
	if err != nil {
		t.Fatal(err)
	}
	more, _ := db.Requests(ctx, store.RequestFilter{Limit: 1000, AfterID: recs[len(recs)-1].ID})
	recs = append(recs, more...)
	if len(recs) != requests {
		t.Errorf("%d ledger records for %d requests", len(recs), requests)
	}
	ids := map[string]bool{}
	for _, o := range outcomes {
		ids[o.id] = true
	}
	attemptErrors := map[string]int{}

	retries := 0
	for _, r := range recs {
		if !ids[r.ID] {
			t.Errorf("record %s matches no request", r.ID)
		}
		as := gjson.Parse(r.Attempts).Array()
		if r.Status >= 400 {
			t.Logf("failed %s: %s", r.ID, r.Attempts) // what was tried, should the rate fall short
		}
		retries += max(len(as)-1, 0)
		for _, a := range as {
			if a.Get("error").String() != "" {
				attemptErrors[strings.SplitN(a.Get("target").String(), "/", 2)[0]]++
			}
		}
	}
	// Every failure a fake injected is one failed attempt in the ledger.
	for name, f := range map[string]*fake{"a": a, "b": b, "c": c} {
		injected, by := f.failures()
		if attemptErrors[name] != injected {
			t.Errorf("target %s: the ledger shows %d failed attempts, the fake injected %d (%v)", name, attemptErrors[name], injected, by)
		}
	}
	if got := sample(metrics, `tollgate_upstream_retries_total{model="chaos"}`); got != float64(retries) {
		t.Errorf("retries: metrics say %v, the ledger %d", got, retries)
	}
	for _, target := range []string{"dead/d", "silent/s"} {
		if got := sample(metrics, `tollgate_circuit_breaker_state{model="chaos",target="`+target+`"}`); got != 2 {
			t.Errorf("the unreachable target %s's breaker is %v, want 2 (open)", target, got)
		}
	}
	_, ia := a.failures()
	t.Logf("%d requests in %s: %v; %d retries; failed attempts by target %v; injected by a: %v",
		requests, elapsed.Round(time.Millisecond), kinds, retries, attemptErrors, ia)
}

// send makes one request and classifies how it ended.
func send(client *http.Client, base string, stream, anthropic bool) outcome {
	path, body := "/v1/chat/completions", `{"model":"chaos","max_tokens":64,"stream":`+strconv.FormatBool(stream)+`,"messages":[{"role":"user","content":"hello"}]}`
	if anthropic {
		path = "/v1/messages"
	}
	req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+master)
	req.Header.Set("Anthropic-Version", "2023-06-01")
	resp, err := client.Do(req)
	if err != nil {
		return outcome{kind: "hung", detail: err.Error()}
	}
	defer resp.Body.Close()
	o := outcome{id: resp.Header.Get("Tollgate-Request-Id"), status: resp.StatusCode}
	b, err := io.ReadAll(resp.Body)
	text := string(b)
	switch {
	case err != nil:
		o.kind, o.detail = "hung", "reading: "+err.Error()
	case resp.StatusCode != 200:
		o.kind, o.detail = "error", text
		if !gjson.Valid(text) || !gjson.Get(text, "error").Exists() {
			o.kind = "bad"
		}
	case !stream:
		o.kind = "served"
		if !gjson.Valid(text) {
			o.kind, o.detail = "bad", text
		}
	case anthropic && strings.HasSuffix(strings.TrimSpace(text), "event: message_stop\ndata: {\"type\":\"message_stop\"}"),
		!anthropic && strings.HasSuffix(text, "data: [DONE]\n\n"):
		o.kind = "served"
	case anthropic && strings.Contains(text, "event: error\n"), !anthropic && strings.Contains(text, `data: {"error":`):
		o.kind = "broken"
	default:
		o.kind, o.detail = "bad", "a stream without a proper end: "+text[max(len(text)-300, 0):]
	}
	return o
}

// sample reads one sample of a Prometheus text exposition.
func sample(metrics []byte, name string) float64 {
	for _, line := range strings.Split(string(metrics), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return -1
}
