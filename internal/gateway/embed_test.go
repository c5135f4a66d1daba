package gateway_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/cli"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// embedEnv is a gateway with embedding models on a fake OpenAI-compatible
// upstream (emb: with usage in its answers; emb-bare: an upstream that
// reports none), a model on an Anthropic provider, and a SQLite ledger.
func embedEnv(t *testing.T) (*env, *upstreamtest.Server, *store.Store) {
	t.Helper()
	up := upstreamtest.New(func(r upstreamtest.Received) upstreamtest.Reply {
		return upstreamtest.OpenAIEmbeddings(r, strings.HasPrefix(r.Path, "/bare/"))
	})
	t.Cleanup(up.Close)
	e, db := ledgerEnv(t, `
providers:
  - { name: oai, type: openai, base_url: "`+up.URL+`/v1", api_key: k }
  - { name: bare, type: openai, base_url: "`+up.URL+`/bare/v1", api_key: k }
  - { name: ant, type: anthropic, base_url: "`+up.URL+`", api_key: k }
models:
  - { name: emb, targets: [ { provider: oai, model: text-embedding-3-small } ], pricing: { input: "0.02", output: "0" } }
  - { name: emb-bare, targets: [ { provider: bare, model: nomic-embed-text } ], pricing: { input: "0.02", output: "0" } }
  - { name: emb-limited, targets: [ { provider: oai, model: text-embedding-3-small } ], limits: { tpm: 100 } }
  - name: emb-budget
    targets: [ { provider: oai, model: text-embedding-3-small } ]
    pricing: { input: "100000", output: "0" }
    limits: { budget_usd: "5", budget_period: monthly }
  - { name: claude, targets: [ { provider: ant, model: claude-x } ] }
`)
	return e, up, db
}

// ledgerEnv starts a gateway configured by yaml, with a SQLite ledger it
// writes every 10 ms, and returns it with the database.
func ledgerEnv(t *testing.T, yaml string) (*env, *store.Store) {
	t.Helper()
	db, rec := ledgerDB(t)
	cfg, err := config.Parse([]byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	built, err := cli.Build(cfg, cli.Options{MasterKey: masterKey, Logger: slog.New(slog.NewJSONHandler(logs, nil)), Store: db, Ledger: rec})
	if err != nil {
		t.Fatal(err)
	}
	gw := httptest.NewServer(built.Handler)
	t.Cleanup(func() { gw.Close(); built.Close(); rec.Close(context.Background()) })
	return &env{t: t, gw: gw, logs: logs}, db
}

// waitRecord waits for the ledger record of request id.
func waitRecord(t *testing.T, db *store.Store, id string) store.Request {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		r, err := db.RequestByID(context.Background(), id)
		if err == nil {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("no ledger record for %s: %v", id, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// An embeddings request passes through with only its model rewritten; the
// answer is relayed; the ledger records the endpoint, the input tokens
// the upstream reported and their cost. An upstream that reports no usage
// has the inputs counted locally, marked as estimated.
func TestEmbeddingsPassthrough(t *testing.T) {
	e, up, db := embedEnv(t)
	body := `{"model": "emb", "input": ["hello world", "foo"], "encoding_format": "float", "dimensions": 4, "user": "u-1"}`
	resp := e.do("POST", "/v1/embeddings", body, openAIAuth...)
	got := readAll(t, resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, got)
	}
	sent := up.Last()
	if sent.Path != "/v1/embeddings" {
		t.Errorf("upstream path %q", sent.Path)
	}
	if want := strings.Replace(body, `"emb"`, `"text-embedding-3-small"`, 1); string(sent.Body) != want {
		t.Errorf("upstream body:\n got %s\nwant %s", sent.Body, want)
	}
	data := gjson.GetBytes(got, "data").Array()
	if len(data) != 2 || len(data[1].Get("embedding").Array()) != 4 {
		t.Fatalf("answer: %s", got)
	}
	for i, text := range []string{"hello world", "foo"} {
		want := upstreamtest.Embedding(text, 4)
		for j, v := range data[i].Get("embedding").Array() {
			if float32(v.Float()) != want[j] {
				t.Fatalf("input %d value %d: %v, want %v", i, j, v.Float(), want[j])
			}
		}
	}
	r := waitRecord(t, db, resp.Header.Get("Tollgate-Request-Id"))
	if r.Endpoint != "/v1/embeddings" || r.Input != 3 || r.Output != 0 || r.UsageEstimated || r.Stream ||
		r.CostNanoUSD == nil || *r.CostNanoUSD != 60 || r.Lane != "passthrough" || r.UpstreamModel != "text-embedding-3-small" {
		t.Errorf("record: %+v (cost %v)", r, r.CostNanoUSD)
	}

	resp = e.do("POST", "/v1/embeddings", `{"model":"emb-bare","input":["hello world","foo"]}`, openAIAuth...)
	got = readAll(t, resp.Body)
	if resp.StatusCode != 200 || gjson.GetBytes(got, "usage").Exists() {
		t.Fatalf("bare upstream: status %d: %s", resp.StatusCode, got)
	}
	r = waitRecord(t, db, resp.Header.Get("Tollgate-Request-Id"))
	if r.Input != 3 || !r.UsageEstimated || r.CostNanoUSD == nil || *r.CostNanoUSD != 60 {
		t.Errorf("record of an answer without usage: %+v", r)
	}
}

// Every input shape OpenAI takes reaches the upstream as it was sent.
func TestEmbeddingsInputShapes(t *testing.T) {
	e, up, _ := embedEnv(t)
	for _, input := range []string{`"one text"`, `["a", "b", "c"]`, `[1, 2, 3]`, `[[1, 2], [3], [4, 5, 6]]`} {
		resp := e.do("POST", "/v1/embeddings", `{"model":"emb","input":`+input+`,"encoding_format":"base64"}`, openAIAuth...)
		got := readAll(t, resp.Body)
		if resp.StatusCode != 200 {
			t.Errorf("input %s: status %d: %s", input, resp.StatusCode, got)
			continue
		}
		if s := gjson.GetBytes(up.Last().Body, "input").Raw; s != input {
			t.Errorf("input %s reached the upstream as %s", input, s)
		}
		if gjson.GetBytes(got, "data.0.embedding").Type != gjson.String {
			t.Errorf("input %s: base64 answer %s", input, got)
		}
	}
}

// Requests the gateway refuses, each in OpenAI's envelope with the
// member at fault; none reaches the upstream.
func TestEmbeddingsRefusals(t *testing.T) {
	e, up, _ := embedEnv(t)
	for _, c := range []struct {
		body   string
		status int
		param  string
		code   string
	}{
		{`{"model":"emb"}`, 400, "input", ""},
		{`{"model":"emb","input":[]}`, 400, "input", ""},
		{`{"model":"emb","input":["a", 1]}`, 400, "input", ""},
		{`{"model":"emb","input":"a","encoding_format":"int8"}`, 400, "encoding_format", ""},
		{`{"model":"emb","input":"a","dimensions":0}`, 400, "dimensions", ""},
		{`{"input":"a"}`, 400, "model", ""},
		{`{"model":"claude","input":"a"}`, 400, "model", "model_not_embedding"},
		{`{"model":"nope","input":"a"}`, 404, "model", "model_not_found"},
	} {
		resp := e.do("POST", "/v1/embeddings", c.body, openAIAuth...)
		got := readAll(t, resp.Body)
		if resp.StatusCode != c.status || gjson.GetBytes(got, "error.param").String() != c.param ||
			gjson.GetBytes(got, "error.type").String() != "invalid_request_error" ||
			c.code != "" && gjson.GetBytes(got, "error.code").String() != c.code {
			t.Errorf("%s: %d %s", c.body, resp.StatusCode, got)
		}
	}
	if n := len(up.Requests()); n != 0 {
		t.Errorf("%d refused requests reached the upstream", n)
	}
}

// A model's tokens-per-minute limit counts an embeddings request's input
// (and no output): requests fit until the window is spent, and one larger
// than the limit is told to send less, not to lower an output limit.
func TestEmbeddingsTokenLimit(t *testing.T) {
	e, _, _ := embedEnv(t)
	text := strings.Repeat("word ", 30) // 150 bytes: about 38 tokens reserved
	resp := e.do("POST", "/v1/embeddings", `{"model":"emb-limited","input":"`+text+`"}`, openAIAuth...)
	got := readAll(t, resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("first request: %d %s", resp.StatusCode, got)
	}
	remaining, _ := strconv.Atoi(resp.Header.Get("X-Ratelimit-Remaining-Tokens"))
	if remaining <= 0 || remaining >= 100 {
		t.Errorf("remaining tokens after the first request: %q", resp.Header.Get("X-Ratelimit-Remaining-Tokens"))
	}
	resp = e.do("POST", "/v1/embeddings", `{"model":"emb-limited","input":["`+text+`","`+text+`"]}`, openAIAuth...)
	got = readAll(t, resp.Body)
	if msg := gjson.GetBytes(got, "error.message").String(); resp.StatusCode != http.StatusTooManyRequests ||
		gjson.GetBytes(got, "error.code").String() != "rate_limit_exceeded" || strings.Contains(msg, "max_") {
		t.Errorf("over the limit: %d %s", resp.StatusCode, got)
	}
	text = strings.Repeat("word ", 90)
	resp = e.do("POST", "/v1/embeddings", `{"model":"emb-limited","input":"`+text+`"}`, openAIAuth...)
	got = readAll(t, resp.Body)
	if msg := gjson.GetBytes(got, "error.message").String(); resp.StatusCode != http.StatusTooManyRequests ||
		!strings.Contains(msg, "its input is estimated at") || strings.Contains(msg, "max_") {
		t.Errorf("larger than the limit: %d %s", resp.StatusCode, got)
	}
}

// A USD budget counts an embeddings request's input at its price: the
// worst case (the input's estimate, no output) is reserved, the cost of
// the tokens the upstream reported is charged, and a request the rest of
// the budget cannot cover is refused.
func TestEmbeddingsBudget(t *testing.T) {
	e, _, db := embedEnv(t)
	text := strings.Repeat("word ", 30) // 30 tokens to the fake: $3 at $0.10 a token; about 38 reserved ($3.80)
	resp := e.do("POST", "/v1/embeddings", `{"model":"emb-budget","input":"`+text+`"}`, openAIAuth...)
	got := readAll(t, resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("first request: %d %s", resp.StatusCode, got)
	}
	if r := waitRecord(t, db, resp.Header.Get("Tollgate-Request-Id")); r.CostNanoUSD == nil || *r.CostNanoUSD != 3_000_000_000 {
		t.Errorf("first request's cost: %v", r.CostNanoUSD)
	}
	resp = e.do("POST", "/v1/embeddings", `{"model":"emb-budget","input":"`+text+`"}`, openAIAuth...)
	got = readAll(t, resp.Body)
	if msg := gjson.GetBytes(got, "error.message").Str; resp.StatusCode != http.StatusTooManyRequests ||
		gjson.GetBytes(got, "error.code").Str != "insufficient_quota" || !strings.Contains(msg, "budget") || strings.Contains(msg, "max_") {
		t.Errorf("over the budget: %d %s", resp.StatusCode, got)
	}
	resp = e.do("POST", "/v1/embeddings", `{"model":"emb-budget","input":"a few words"}`, openAIAuth...)
	if got := readAll(t, resp.Body); resp.StatusCode != 200 {
		t.Errorf("a request the rest of the budget covers: %d %s", resp.StatusCode, got)
	}
}

// A batch the upstream refuses after others were made fails the request,
// but the batches it made, which the upstream bills, are counted in the
// record: a client cannot have vectors made for nothing by ending its
// inputs with one the upstream refuses.
func TestEmbeddingsFailedBatchIsBilled(t *testing.T) {
	up := upstreamtest.New(func(r upstreamtest.Received) upstreamtest.Reply {
		if strings.Contains(string(r.Body), "REFUSED") {
			return upstreamtest.Reply{Status: 400, Body: []byte(`{"error":{"code":400,"message":"Request contains an invalid argument.","status":"INVALID_ARGUMENT"}}`)}
		}
		return upstreamtest.GeminiEmbeddings(r)
	})
	t.Cleanup(up.Close)
	e, db := ledgerEnv(t, `
providers: [ { name: goog, type: gemini, base_url: "`+up.URL+`", api_key: k } ]
models: [ { name: emb, targets: [ { provider: goog, model: gemini-embedding-001 } ], pricing: { input: "0.15", output: "0" } } ]
`)
	inputs := make([]string, 250)
	for i := range inputs {
		inputs[i] = `"word"`
	}
	inputs[249] = `"REFUSED"`
	resp := e.do("POST", "/v1/embeddings", `{"model":"emb","input":[`+strings.Join(inputs, ",")+`]}`, openAIAuth...)
	got := readAll(t, resp.Body)
	if resp.StatusCode != 400 || gjson.GetBytes(got, "error.type").Str != "invalid_request_error" {
		t.Fatalf("a refused batch: %d %s", resp.StatusCode, got)
	}
	if n := len(up.Requests()); n != 3 {
		t.Errorf("%d upstream requests, want 3 (two made, one refused)", n)
	}
	r := waitRecord(t, db, resp.Header.Get("Tollgate-Request-Id"))
	if r.Input != 200 || !r.UsageEstimated || r.CostNanoUSD == nil || *r.CostNanoUSD != 200*150 {
		t.Errorf("record of the failed request: input %d estimated %v cost %v, want the 200 inputs made", r.Input, r.UsageEstimated, r.CostNanoUSD)
	}
	// Token arrays, which Gemini cannot take, are refused before any batch.
	before := len(up.Requests())
	resp = e.do("POST", "/v1/embeddings", `{"model":"emb","input":[[1,2],[3]]}`, openAIAuth...)
	if got := readAll(t, resp.Body); resp.StatusCode != 400 || gjson.GetBytes(got, "error.param").Str != "input" || len(up.Requests()) != before {
		t.Errorf("token arrays to Gemini: %d %s", resp.StatusCode, got)
	}
}

// An attempt whose batches were made in part before it failed, then
// another target that serves the request: the record has both (the first
// upstream billed its batches), the client is told the second's.
func TestEmbeddingsFallbackKeepsSpentBatches(t *testing.T) {
	goog := upstreamtest.New(func(r upstreamtest.Received) upstreamtest.Reply {
		if strings.Contains(string(r.Body), "REFUSED") {
			return upstreamtest.Reply{Status: 503, Body: []byte(`{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}`)}
		}
		return upstreamtest.GeminiEmbeddings(r)
	})
	t.Cleanup(goog.Close)
	oai := upstreamtest.New(func(r upstreamtest.Received) upstreamtest.Reply { return upstreamtest.OpenAIEmbeddings(r, false) })
	t.Cleanup(oai.Close)
	e, db := ledgerEnv(t, `
providers:
  - { name: goog, type: gemini, base_url: "`+goog.URL+`", api_key: k }
  - { name: oai, type: openai, base_url: "`+oai.URL+`/v1", api_key: k }
models:
  - name: emb
    targets: [ { provider: goog, model: gemini-embedding-001, priority: 0 }, { provider: oai, model: text-embedding-3-small, priority: 1 } ]
    pricing: { input: "0.15", output: "0" }
`)
	inputs := make([]string, 250)
	for i := range inputs {
		inputs[i] = `"word"`
	}
	inputs[249] = `"REFUSED"`
	resp := e.do("POST", "/v1/embeddings", `{"model":"emb","input":[`+strings.Join(inputs, ",")+`]}`, openAIAuth...)
	got := readAll(t, resp.Body)
	if resp.StatusCode != 200 || gjson.GetBytes(got, "usage.prompt_tokens").Int() != 250 {
		t.Fatalf("the fallback's answer: %d %.300s", resp.StatusCode, got)
	}
	r := waitRecord(t, db, resp.Header.Get("Tollgate-Request-Id"))
	if r.Input != 200+250 || !r.UsageEstimated || r.Provider != "oai" {
		t.Errorf("record: input %d estimated %v provider %q, want Gemini's 200 made and OpenAI's 250", r.Input, r.UsageEstimated, r.Provider)
	}
}
