package protocol_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/cli"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/ledger"
	"github.com/tollgate/tollgate/internal/outcome"
	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

const master = "sk-master-line-0123456789abcdef0123"

// records keeps the ledger rows of a test's requests.
type records struct {
	mu   sync.Mutex
	rows []store.Request
}

func (r *records) Record(o *outcome.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rows = append(r.rows, ledger.Row(o))
}

func (r *records) last() store.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rows[len(r.rows)-1]
}

type env struct {
	t         *testing.T
	url       string
	line, oai *upstreamtest.Server
	rec       *records
}

// newEnv runs the whole gateway with a line upstream, an OpenAI-compatible
// one and an Anthropic one that no test reaches.
func newEnv(t *testing.T, line, oai func(upstreamtest.Received) upstreamtest.Reply) *env {
	t.Helper()
	e := &env{t: t, line: upstreamtest.New(line), oai: upstreamtest.New(oai), rec: &records{}}
	t.Cleanup(e.line.Close)
	t.Cleanup(e.oai.Close)
	cfg, err := config.Parse([]byte(`
providers:
  - { name: lineup, type: line, base_url: "`+e.line.URL+`", api_key: line-secret }
  - { name: oai, type: openai, base_url: "`+e.oai.URL+`/v1", api_key: oai-secret }
  - { name: ant, type: anthropic, base_url: "http://127.0.0.1:1", api_key: ant-secret }
models:
  - { name: liner, targets: [ { provider: lineup, model: line-up-1 } ] }
  - { name: gpt, targets: [ { provider: oai, model: gpt-up } ] }
  - { name: claude, targets: [ { provider: ant, model: claude-up } ] }
  - { name: limited, targets: [ { provider: lineup, model: line-up-1 } ], limits: { rpm: 1 } }
`), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	built, err := cli.Build(cfg, cli.Options{MasterKey: master, Logger: slog.New(slog.DiscardHandler), Ledger: e.rec})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(built.Handler)
	t.Cleanup(func() { srv.Close(); built.Close() })
	e.url = srv.URL
	return e
}

func (e *env) post(path, body string, headers ...string) (*http.Response, []byte) {
	e.t.Helper()
	req, _ := http.NewRequest("POST", e.url+path, strings.NewReader(body))
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, b
}

var auth = "Authorization: Bearer " + master

func lineAnswer(upstreamtest.Received) upstreamtest.Reply {
	return upstreamtest.Reply{Body: []byte(`{"text":"two lines\nback","tokens":{"in":7,"out":3},"x_extra":[1, 2.50]}`)}
}

var lineStream = [][]byte{
	[]byte("event: line\ndata: {\"text\":\"two \"}\n\n"),
	[]byte("event: line\ndata: {\"text\":\"lines\"}\n\n"),
	[]byte("event: end\ndata: {\"tokens\":{\"in\":7,\"out\":2}}\n\n"),
}

func unused(upstreamtest.Received) upstreamtest.Reply {
	return upstreamtest.Reply{Status: http.StatusTeapot, Body: []byte(`{"error":"must not be called"}`)}
}

// A line client on a line upstream takes the pass-through lane: the
// upstream gets the client's bytes with the model rewritten and its own
// credential; the client gets the upstream's bytes; usage is tapped and
// recorded; the ledger names the protocol.
func TestLinePassThrough(t *testing.T) {
	e := newEnv(t, func(r upstreamtest.Received) upstreamtest.Reply {
		if gjson.GetBytes(r.Body, "stream").Bool() {
			return upstreamtest.Reply{Events: lineStream}
		}
		return lineAnswer(r)
	}, unused)
	body := `{"prompt": ["hello", "world"], "model" : "liner", "max_lines": 2, "x_keep": {"a": null}}`
	resp, got := e.post("/v1/line", body, auth)
	if resp.StatusCode != 200 || string(got) != string(lineAnswer(upstreamtest.Received{}).Body) {
		t.Fatalf("answer: %d %s", resp.StatusCode, got)
	}
	up := e.line.Last()
	if want := strings.Replace(body, `"liner"`, `"line-up-1"`, 1); string(up.Body) != want || up.Path != "/line" ||
		up.Header.Get("Line-Key") != "line-secret" || up.Header.Get("Authorization") != "" {
		t.Errorf("upstream got %s %s %v", up.Path, up.Body, up.Header)
	}
	rec := e.rec.last()
	if rec.ClientProtocol != "line" || rec.Lane != "passthrough" || rec.Input != 7 || rec.Output != 3 || rec.Status != 200 {
		t.Errorf("record: %+v", rec)
	}

	resp, got = e.post("/v1/line", `{"model":"liner","stream":true,"prompt":["hi"]}`, auth)
	if resp.StatusCode != 200 || !bytes.Equal(got, bytes.Join(lineStream, nil)) || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %q", resp.StatusCode, got)
	}
	if rec := e.rec.last(); rec.Output != 2 || !rec.Stream {
		t.Errorf("stream record: %+v", rec)
	}
}

// A line client on an OpenAI-compatible upstream takes the translation
// lane through the registered pair, whole and streamed.
func TestLineClientOnChatUpstream(t *testing.T) {
	e := newEnv(t, unused, func(r upstreamtest.Received) upstreamtest.Reply {
		if gjson.GetBytes(r.Body, "stream").Bool() {
			return upstreamtest.Reply{Events: upstreamtest.Events("openai_stream.sse")}
		}
		return upstreamtest.Reply{Body: upstreamtest.File("openai_completion.json")}
	})
	resp, got := e.post("/v1/line", `{"model":"gpt","prompt":["one","two"]}`, auth)
	if resp.StatusCode != 200 || !gjson.GetBytes(got, "text").Exists() || gjson.GetBytes(got, "tokens.out").Int() == 0 {
		t.Fatalf("answer: %d %s", resp.StatusCode, got)
	}
	up := e.oai.Last()
	if up.Path != "/v1/chat/completions" || gjson.GetBytes(up.Body, "messages.0.content").String() != "one\ntwo" ||
		gjson.GetBytes(up.Body, "model").String() != "gpt-up" {
		t.Errorf("upstream got %s %s", up.Path, up.Body)
	}
	if id := resp.Header.Get("Line-Request-Id"); !strings.HasPrefix(id, "req_") {
		t.Errorf("line-request-id = %q", id)
	}
	if rec := e.rec.last(); rec.Lane != "translated" || rec.ClientProtocol != "line" || rec.Output == 0 {
		t.Errorf("record: %+v", rec)
	}

	resp, got = e.post("/v1/line", `{"model":"gpt","stream":true,"prompt":["one"]}`, auth)
	if resp.StatusCode != 200 || !bytes.Contains(got, []byte("event: line\n")) || !bytes.HasSuffix(got, []byte("}}\n\n")) ||
		!bytes.Contains(got, []byte("event: end\n")) {
		t.Fatalf("stream: %d %s", resp.StatusCode, got)
	}
	if rec := e.rec.last(); rec.Output == 0 || !rec.Stream {
		t.Errorf("stream record: %+v", rec)
	}
	// What the pair refuses is a 400 in the line envelope, naming the field.
	resp, got = e.post("/v1/line", `{"model":"gpt","max_lines":500,"prompt":["one"]}`, auth)
	if resp.StatusCode != 400 || gjson.GetBytes(got, "problem.field").String() != "max_lines" {
		t.Errorf("refused by the pair: %d %s", resp.StatusCode, got)
	}
}

// An OpenAI client on a line upstream is translated by the pair the other
// way; a stream request is answered as chunks.
func TestChatClientOnLineUpstream(t *testing.T) {
	e := newEnv(t, lineAnswer, unused)
	resp, got := e.post("/v1/chat/completions", `{"model":"liner","messages":[{"role":"user","content":"hi"}]}`, auth)
	if resp.StatusCode != 200 || gjson.GetBytes(got, "choices.0.message.content").String() != "two lines\nback" ||
		gjson.GetBytes(got, "usage.completion_tokens").Int() != 3 {
		t.Fatalf("answer: %d %s", resp.StatusCode, got)
	}
	if up := e.line.Last(); gjson.GetBytes(up.Body, "prompt.0").String() != "hi" {
		t.Errorf("upstream got %s", up.Body)
	}
	resp, got = e.post("/v1/chat/completions", `{"model":"liner","stream":true,"messages":[{"role":"user","content":"hi"}]}`, auth)
	if resp.StatusCode != 200 || !bytes.HasSuffix(got, []byte("data: [DONE]\n\n")) || !bytes.Contains(got, []byte(`"content":"two lines\nback"`)) {
		t.Fatalf("stream: %d %s", resp.StatusCode, got)
	}
}

// Without a translator for a pair of protocols the answer is a 501 that
// names both, in the client's envelope; the upstream is not called.
func TestMissingPair(t *testing.T) {
	e := newEnv(t, unused, unused)
	resp, got := e.post("/v1/messages", `{"model":"liner","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`,
		"x-api-key: "+master, "anthropic-version: 2023-06-01")
	if resp.StatusCode != 501 || gjson.GetBytes(got, "type").String() != "error" ||
		!strings.Contains(string(got), "line upstream") || !strings.Contains(string(got), "anthropic requests") {
		t.Errorf("anthropic client on a line upstream: %d %s", resp.StatusCode, got)
	}
	resp, got = e.post("/v1/line", `{"model":"claude","prompt":["hi"]}`, auth)
	if resp.StatusCode != 501 || !strings.Contains(gjson.GetBytes(got, "problem.message").String(), "line requests into anthropic") {
		t.Errorf("line client on an anthropic upstream: %d %s", resp.StatusCode, got)
	}
	if n := len(e.line.Requests()); n != 0 {
		t.Errorf("the line upstream was called %d times", n)
	}
}

// The gateway's own answers come in the line envelope: bad input, an
// unknown model, a wrong key, a rate limit, and the model list.
func TestLineEnvelope(t *testing.T) {
	e := newEnv(t, lineAnswer, unused)
	for _, tc := range []struct {
		name, body, key string
		status          int
		kind, field     string
	}{
		{"no prompt", `{"model":"liner"}`, auth, 400, "invalid_request_error", "prompt"},
		{"empty prompt", `{"model":"liner","prompt":[]}`, auth, 400, "invalid_request_error", "prompt"},
		{"prompt not a list", `{"model":"liner","prompt":"x"}`, auth, 400, "invalid_request_error", "prompt"},
		{"bad JSON", `{"model":"liner",}`, auth, 400, "invalid_request_error", ""},
		{"unknown model", `{"model":"nope","prompt":["x"]}`, auth, 404, "not_found_error", "model"},
		{"wrong key", `{"model":"liner","prompt":["x"]}`, "Authorization: Bearer nope", 401, "authentication_error", ""},
	} {
		resp, got := e.post("/v1/line", tc.body, tc.key)
		p := gjson.GetBytes(got, "problem")
		if resp.StatusCode != tc.status || p.Get("kind").String() != tc.kind || p.Get("field").String() != tc.field ||
			!strings.HasPrefix(resp.Header.Get("Line-Request-Id"), "req_") {
			t.Errorf("%s: %d %s %v", tc.name, resp.StatusCode, got, resp.Header)
		}
	}
	if resp, got := e.post("/v1/line", `{"model":"limited","prompt":["x"]}`, auth); resp.StatusCode != 200 || resp.Header.Get("Line-Limit-Requests") != "1" {
		t.Errorf("first limited request: %d %s %v", resp.StatusCode, got, resp.Header)
	}
	resp, got := e.post("/v1/line", `{"model":"limited","prompt":["x"]}`, auth)
	if resp.StatusCode != 429 || gjson.GetBytes(got, "problem.kind").String() != "rate_limit_error" ||
		resp.Header.Get("Line-Remaining-Requests") != "0" || resp.Header.Get("Retry-After") == "" {
		t.Errorf("rate limited: %d %s %v", resp.StatusCode, got, resp.Header)
	}
	req, _ := http.NewRequest("GET", e.url+"/v1/models", nil)
	req.Header.Set("Authorization", "Bearer "+master)
	req.Header.Set("Line-Version", "1")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if ids := gjson.GetBytes(b, "lines_models").Array(); len(ids) != 4 || ids[0].String() != "liner" {
		t.Errorf("model list for a line client: %s", b)
	}
}
