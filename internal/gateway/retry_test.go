package gateway_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/cli"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/ledger"
	"github.com/tollgate/tollgate/internal/outcome"
	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// retryEnv is a gateway whose models have several targets on fake upstreams.
func retryEnv(t *testing.T, yaml string) *httptest.Server {
	t.Helper()
	cfg, err := config.Parse([]byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	built, err := cli.Build(cfg, cli.Options{MasterKey: masterKey, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	h, closeIdle := built.Handler, built.Close
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); closeIdle() })
	return srv
}

// ask sends an Anthropic request for model to srv and returns the whole answer.
func ask(t *testing.T, srv *httptest.Server, model string, stream bool) (int, http.Header, string) {
	t.Helper()
	return askAbout(t, srv, model, stream, "hi")
}

// askAbout is ask, starting a conversation about what.
func askAbout(t *testing.T, srv *httptest.Server, model string, stream bool, what string) (int, http.Header, string) {
	t.Helper()
	body := `{"model":"` + model + `","max_tokens":16,"stream":` + strconv.FormatBool(stream) + `,"messages":[{"role":"user","content":"` + what + `"}]}`
	req, _ := http.NewRequest("POST", srv.URL+"/v1/messages", strings.NewReader(body))
	req.Header.Set("X-Api-Key", masterKey)
	req.Header.Set("Anthropic-Version", "2023-06-01")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func status(code int, body string, header ...string) *upstreamtest.Server {
	h := http.Header{"Content-Type": {"application/json"}}
	for _, kv := range header {
		k, v, _ := strings.Cut(kv, ": ")
		h.Set(k, v)
	}
	return upstreamtest.Static(upstreamtest.Reply{Status: code, Header: h, Body: []byte(body)})
}

func TestRetriesAcrossTargets(t *testing.T) {
	ok := upstreamtest.Static(upstreamtest.Reply{Body: upstreamtest.File("anthropic_message.json")})
	okOpenAI := upstreamtest.Static(upstreamtest.Reply{Body: upstreamtest.File("openai_completion.json")})
	overloaded := status(529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	broken := status(500, `{"type":"error","error":{"type":"api_error","message":"boom"}}`)
	limited := status(429, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`, "Retry-After: 60")
	bad := status(400, `{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}`)
	for _, s := range []*upstreamtest.Server{ok, okOpenAI, overloaded, broken, limited, bad} {
		defer s.Close()
	}
	srv := retryEnv(t, fmt.Sprintf(`
providers:
  - { name: dead, type: anthropic, base_url: "http://127.0.0.1:1", api_key: k }
  - { name: ok, type: anthropic, base_url: %q, api_key: k }
  - { name: ok-openai, type: openai, base_url: "%s/v1", api_key: k }
  - { name: overloaded, type: anthropic, base_url: %q, api_key: k }
  - { name: broken, type: anthropic, base_url: %q, api_key: k }
  - { name: limited, type: anthropic, base_url: %q, api_key: k }
  - { name: bad, type: anthropic, base_url: %q, api_key: k }
models:
  - { name: dead-first, targets: [ { provider: dead, model: m }, { provider: ok, model: m, priority: 1 } ] }
  - { name: overloaded-first, targets: [ { provider: overloaded, model: m }, { provider: ok, model: m, fallback: true } ] }
  - { name: cross, targets: [ { provider: broken, model: m }, { provider: ok-openai, model: m, fallback: true } ] }
  - { name: all-bad, targets: [ { provider: broken, model: m }, { provider: limited, model: m, priority: 1 } ] }
  - { name: client-error, targets: [ { provider: bad, model: m }, { provider: ok, model: m, priority: 1 } ] }
  - { name: one-attempt, routing: { max_attempts: 1 }, targets: [ { provider: broken, model: m }, { provider: ok, model: m, priority: 1 } ] }
  - { name: weighted, targets: [ { provider: ok, model: m, weight: 3 }, { provider: ok-openai, model: m, weight: 1 } ] }
`, ok.URL, okOpenAI.URL, overloaded.URL, broken.URL, limited.URL, bad.URL))

	call := func(model string) (int, http.Header, string) { return ask(t, srv, model, false) }

	for _, model := range []string{"dead-first", "overloaded-first"} {
		before := len(ok.Requests())
		code, h, body := call(model)
		if code != 200 || gjson.Get(body, "type").String() != "message" {
			t.Errorf("%s: %d %s", model, code, body)
		}
		// The answer says which target gave it, and what the gateway took
		// before sending it (the failed attempt's wait excluded).
		overhead, err := strconv.ParseFloat(h.Get("Tollgate-Overhead-Ms"), 64)
		if h.Get("Tollgate-Target") != "ok/m" || err != nil || overhead < 0 || overhead > 1000 {
			t.Errorf("%s: target %q, overhead %q", model, h.Get("Tollgate-Target"), h.Get("Tollgate-Overhead-Ms"))
		}
		if len(ok.Requests()) != before+1 {
			t.Errorf("%s: the healthy target was not asked", model)
		}
	}
	// A fallback in the other protocol: the answer is translated.
	if code, h, body := call("cross"); code != 200 || gjson.Get(body, "type").String() != "message" || h.Get("Request-Id") != h.Get("Tollgate-Request-Id") {
		t.Errorf("cross-protocol fallback: %d %v %s", code, h, body)
	}
	// Every target failed: the last failure is relayed, as it came.
	if code, h, body := call("all-bad"); code != 429 || h.Get("Retry-After") != "60" || !strings.Contains(body, "slow down") || h.Get("Tollgate-Target") != "limited/m" {
		t.Errorf("all targets failing: %d %v %s", code, h, body)
	}
	// A client error is not retried.
	before := len(ok.Requests())
	if code, _, _ := call("client-error"); code != 400 || len(ok.Requests()) != before {
		t.Errorf("400: %d, healthy target asked %d times", code, len(ok.Requests())-before)
	}
	if code, _, body := call("one-attempt"); code != 500 || !strings.Contains(body, "boom") {
		t.Errorf("max_attempts 1: %d %s", code, body)
	}
	// Weights share the conversations: 3 to 1.
	a, b := len(ok.Requests()), len(okOpenAI.Requests())
	for i := 0; i < 400; i++ {
		if code, _, body := askAbout(t, srv, "weighted", false, "conversation "+strconv.Itoa(i)); code != 200 {
			t.Fatalf("weighted: %d %s", code, body)
		}
	}
	share := float64(len(ok.Requests())-a) / float64(len(ok.Requests())-a+len(okOpenAI.Requests())-b)
	if share < 0.65 || share > 0.85 {
		t.Errorf("weight 3 of 4 got %.2f of the requests", share)
	}
}

func TestAnswerHeadersCanBeTurnedOff(t *testing.T) {
	ok := upstreamtest.Static(upstreamtest.Reply{Body: upstreamtest.File("anthropic_message.json")})
	defer ok.Close()
	srv := retryEnv(t, `
server: { target_header: false, overhead_header: false }
providers: [ { name: ok, type: anthropic, base_url: "`+ok.URL+`", api_key: k } ]
models: [ { name: m, targets: [ { provider: ok, model: up } ] } ]
`)
	code, h, _ := ask(t, srv, "m", false)
	if code != 200 || h.Get("Tollgate-Target") != "" || h.Get("Tollgate-Overhead-Ms") != "" {
		t.Errorf("%d %v", code, h)
	}
}

func TestCircuitBreakerSkipsABrokenTarget(t *testing.T) {
	ok := upstreamtest.Static(upstreamtest.Reply{Body: upstreamtest.File("anthropic_message.json")})
	broken := status(500, `{"type":"error","error":{"type":"api_error","message":"boom"}}`)
	defer ok.Close()
	defer broken.Close()
	srv := retryEnv(t, fmt.Sprintf(`
providers:
  - { name: ok, type: anthropic, base_url: %q, api_key: k }
  - { name: broken, type: anthropic, base_url: %q, api_key: k, breaker: { failures: 2, cooldown: 1h } }
models:
  - { name: m, targets: [ { provider: broken, model: b }, { provider: ok, model: o, fallback: true } ] }
  - { name: only-broken, targets: [ { provider: broken, model: b } ] }
`, ok.URL, broken.URL))
	call := func(model string) int { code, _, _ := ask(t, srv, model, false); return code }
	for i := 0; i < 6; i++ {
		if code := call("m"); code != 200 {
			t.Fatalf("request %d: %d", i, code)
		}
	}
	// Two failures opened the breaker: the broken target was asked twice.
	if n := len(broken.Requests()); n != 2 {
		t.Errorf("the broken target was asked %d times, want 2", n)
	}
	metrics := scrape(t, srv)
	for _, want := range []string{`tollgate_circuit_breaker_state{model="m",target="broken/b"} 2`, `tollgate_circuit_breaker_state{model="m",target="ok/o"} 0`} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	// Its only target open, a model is still tried rather than refused.
	if code := call("only-broken"); code != 500 || len(broken.Requests()) != 3 {
		t.Errorf("all open: %d, broken asked %d times", code, len(broken.Requests()))
	}
}

// A stream that opens with an overloaded error event has sent the client
// nothing yet: the next target answers instead.
func TestStreamStartErrorIsRetried(t *testing.T) {
	overloaded := upstreamtest.Static(upstreamtest.Reply{Events: [][]byte{
		[]byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n")}})
	ok := upstreamtest.Static(upstreamtest.Reply{Events: upstreamtest.Events("anthropic_stream.sse")})
	defer overloaded.Close()
	defer ok.Close()
	srv := retryEnv(t, fmt.Sprintf(`
providers:
  - { name: overloaded, type: anthropic, base_url: %q, api_key: k }
  - { name: ok, type: anthropic, base_url: %q, api_key: k }
models:
  - { name: m, targets: [ { provider: overloaded, model: a }, { provider: ok, model: b, priority: 1 } ] }
  - { name: alone, targets: [ { provider: overloaded, model: a } ] }
`, overloaded.URL, ok.URL))
	call := func(model string) (int, http.Header, string) { return ask(t, srv, model, true) }
	code, h, body := call("m")
	if code != 200 || !strings.Contains(body, "event: message_stop") || h.Get("Tollgate-Target") != "ok/b" {
		t.Errorf("retried stream: %d %v %.200s", code, h, body)
	}
	// Alone, the error is the answer: a JSON error with the error's status.
	code, h, body = call("alone")
	if code != 529 || h.Get("Content-Type") != "application/json" || gjson.Get(body, "error.type").String() != "overloaded_error" {
		t.Errorf("stream start error, no other target: %d %v %s", code, h, body)
	}
}

type recordFunc func(store.Request)

func (f recordFunc) Record(o *outcome.Request) { f(ledger.Row(o)) }

// The ledger's one record lists every attempt.
func TestLedgerListsAttempts(t *testing.T) {
	ok := upstreamtest.Static(upstreamtest.Reply{Body: upstreamtest.File("anthropic_message.json")})
	defer ok.Close()
	cfg, err := config.Parse([]byte(`
providers:
  - { name: dead, type: anthropic, base_url: "http://127.0.0.1:1", api_key: k }
  - { name: ok, type: anthropic, base_url: "`+ok.URL+`", api_key: k }
models: [ { name: m, targets: [ { provider: dead, model: d }, { provider: ok, model: o, priority: 1 } ] } ]
`), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var recs []store.Request
	built, err := cli.Build(cfg, cli.Options{MasterKey: masterKey, Logger: slog.New(slog.DiscardHandler), Ledger: recordFunc(func(r store.Request) {
		mu.Lock()
		recs = append(recs, r)
		mu.Unlock()
	})})
	if err != nil {
		t.Fatal(err)
	}
	h, closeIdle := built.Handler, built.Close
	defer closeIdle()
	srv := httptest.NewServer(h)
	defer srv.Close()
	ask(t, srv, "m", false)
	srv.Close() // the handler has finished: its record is in
	mu.Lock()
	defer mu.Unlock()
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	a := gjson.Parse(recs[0].Attempts)
	if !a.IsArray() || len(a.Array()) != 2 || a.Get("0.target").String() != "dead/d" || a.Get("0.status").Int() != 0 ||
		a.Get("0.error").String() == "" || a.Get("1.target").String() != "ok/o" || a.Get("1.status").Int() != 200 ||
		a.Get("1.error").String() != "" || recs[0].Provider != "ok" || recs[0].Status != 200 {
		t.Errorf("record: %+v", recs[0])
	}
}

func TestRequestMetrics(t *testing.T) {
	ok := upstreamtest.Static(upstreamtest.Reply{Body: upstreamtest.File("anthropic_message.json")})
	defer ok.Close()
	srv := retryEnv(t, `
providers:
  - { name: dead, type: anthropic, base_url: "http://127.0.0.1:1", api_key: k }
  - { name: ok, type: anthropic, base_url: "`+ok.URL+`", api_key: k }
models: [ { name: m, aliases: [a], targets: [ { provider: dead, model: d }, { provider: ok, model: o, priority: 1 } ], pricing: { input: "1", output: "2", cache_read: "0.1" } } ]
`)
	for _, model := range []string{"a", "m", "no-such-model"} {
		ask(t, srv, model, false)
	}
	b := scrape(t, srv)
	for _, want := range []string{
		`tollgate_requests_total{lane="passthrough",model="m",provider="ok",status="200"} 2`,
		`tollgate_requests_total{lane="none",model="",provider="",status="404"} 1`, // client-sent names are not labels
		`tollgate_upstream_retries_total{model="m"} 2`,
		`tollgate_request_duration_seconds_count{lane="passthrough",model="m"} 2`,
		`tollgate_tokens_total{bucket="output",model="m"} 50`,
		`tollgate_gateway_overhead_seconds_count{lane="passthrough"} 2`,
		`tollgate_streams_in_flight 0`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if !strings.Contains(string(b), `tollgate_cost_usd_total{model="m"}`) {
		t.Error("no cost metric")
	}
}

// A target whose retry-after runs past the retry deadline is not asked
// again; the others are, with backoff, until max_attempts.
func TestRetryAfterPastTheDeadlineSkipsTheTarget(t *testing.T) {
	limited := status(429, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`, "Retry-After: 60")
	broken := status(500, `{"type":"error","error":{"type":"api_error","message":"boom"}}`)
	defer limited.Close()
	defer broken.Close()
	srv := retryEnv(t, fmt.Sprintf(`
providers:
  - { name: limited, type: anthropic, base_url: %q, api_key: k }
  - { name: broken, type: anthropic, base_url: %q, api_key: k, breaker: { failures: 100 } }
models:
  - { name: m, routing: { max_attempts: 4, retry_deadline: 3s }, targets: [ { provider: limited, model: l }, { provider: broken, model: b, priority: 1 } ] }
`, limited.URL, broken.URL))
	start := time.Now()
	code, _, _ := ask(t, srv, "m", false)
	if code != 500 || len(limited.Requests()) != 1 || len(broken.Requests()) != 3 || time.Since(start) > 3*time.Second {
		t.Errorf("status %d; limited asked %d times, broken %d, in %s", code, len(limited.Requests()), len(broken.Requests()), time.Since(start))
	}
}

// scrape reads /metrics with the master key, which it requires by default.
func scrape(t *testing.T, srv *httptest.Server) []byte {
	t.Helper()
	req, _ := http.NewRequest("GET", srv.URL+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+masterKey)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET /metrics: %d %s", resp.StatusCode, body)
	}
	return body
}

// When every breaker is open and the retry deadline leaves no time to try
// a target anyway, the answer is a 503 that says so, not a crash.
func TestNoTargetCanBeTried(t *testing.T) {
	srv := retryEnv(t, `
providers:
  - { name: dead, type: anthropic, base_url: "http://127.0.0.1:1", api_key: k, breaker: { failures: 1, cooldown: 1h } }
models:
  - { name: m, targets: [ { provider: dead, model: d } ], routing: { retry_deadline: 1ns } }
`)
	if code, _, body := ask(t, srv, "m", false); code != http.StatusBadGateway {
		t.Fatalf("first request: %d %s", code, body)
	}
	code, h, body := ask(t, srv, "m", false)
	if code != http.StatusServiceUnavailable || h.Get("Retry-After") == "" || !strings.Contains(body, `no target of model \"m\" can be tried now`) {
		t.Errorf("with the breaker open: %d %v %s", code, h, body)
	}
}
