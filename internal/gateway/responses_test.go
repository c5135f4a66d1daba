package gateway_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// responsesEnv is a gateway with a Responses upstream on up, served as the
// model "codex".
func responsesEnv(t *testing.T, up *upstreamtest.Server) *env {
	t.Helper()
	t.Cleanup(up.Close)
	return newEnvYAML(t, `
providers:
  - { name: oair, type: openai-responses, base_url: "`+up.URL+`/v1", api_key: "`+upstreamKey+`" }
models:
  - { name: codex, targets: [ { provider: oair, model: gpt-5-codex-2025-09-15 } ] }
`)
}

// A Responses client on a Responses upstream takes the pass-through lane:
// the upstream gets the client's bytes with the model rewritten and its
// own key; the client gets the upstream's bytes; usage comes from the
// terminal event (or the body), cached tokens in their own bucket.
func TestResponsesPassThrough(t *testing.T) {
	for _, stream := range []bool{false, true} {
		reply := upstreamtest.Reply{Body: upstreamtest.File("responses.json"), Header: http.Header{"X-Request-Id": {"req_up"}}}
		want := upstreamtest.File("responses.json")
		if stream {
			reply = upstreamtest.Reply{Events: upstreamtest.Events("responses_stream.sse")}
			want = upstreamtest.File("responses_stream.sse")
		}
		up := upstreamtest.Static(reply)
		e := responsesEnv(t, up)
		body := `{"model":"codex","input":[{"type":"message","role":"developer","content":"be brief"},{"role":"user","content":[{"type":"input_text","text":"list files"}]}],` +
			`"store":false,"include":["reasoning.encrypted_content"],"client_metadata":{"x":1},"stream":` + map[bool]string{false: "false", true: "true"}[stream] + `}`
		resp := e.do("POST", "/v1/responses", body, openAIAuth...)
		got := readAll(t, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !bytes.Equal(got, want) {
			t.Fatalf("stream=%v: %d, the client got other bytes than the upstream sent:\n%.400s", stream, resp.StatusCode, got)
		}
		u := up.Last()
		if u.Path != "/v1/responses" || string(u.Body) != strings.Replace(body, `"codex"`, `"gpt-5-codex-2025-09-15"`, 1) ||
			u.Header.Get("Authorization") != "Bearer "+upstreamKey {
			t.Errorf("stream=%v: upstream got %s %s %v", stream, u.Path, u.Body, u.Header)
		}
		line := e.logLine(resp.Header.Get("Tollgate-Request-Id"))
		if line.Get("lane").Str != "passthrough" || line.Get("input_tokens").Int() != 5234-4096 || line.Get("cache_read_tokens").Int() != 4096 ||
			line.Get("output_tokens").Int() != 187 || line.Get("reasoning_tokens").Int() != 128 {
			t.Errorf("stream=%v: log line %s", stream, line.Raw)
		}
	}
}

// A Responses stream cut before its terminal event ends with
// response.failed, numbered after the last event relayed; one that opens
// with an error event is an ordinary JSON error.
func TestResponsesStreamFailures(t *testing.T) {
	events := upstreamtest.Events("responses_stream.sse")
	up := upstreamtest.Static(upstreamtest.Reply{Events: events[:12], Cut: true})
	e := responsesEnv(t, up)
	resp := e.do("POST", "/v1/responses", `{"model":"codex","stream":true,"input":"hi"}`, openAIAuth...)
	got := readAll(t, resp.Body)
	resp.Body.Close()
	tail := got[bytes.LastIndex(got, []byte("event: ")):]
	d := gjson.ParseBytes(tail[bytes.Index(tail, []byte("data: "))+6:])
	if resp.StatusCode != 200 || !bytes.HasPrefix(got, bytes.Join(events[:12], nil)) || d.Get("type").Str != "response.failed" ||
		d.Get("sequence_number").Int() != 12 || d.Get("response.id").Str != "resp_68a1f0c2e4b08190a8f1b3c5d7e9f102" ||
		d.Get("response.status").Str != "failed" || d.Get("response.error.code").Str != "server_error" || d.Get("error").Exists() {
		t.Errorf("cut stream: %d, ends with %s", resp.StatusCode, tail)
	}

	for name, first := range map[string]string{
		"nested": `{"type":"error","sequence_number":0,"error":{"type":"invalid_request_error","code":"context_length_exceeded","message":"Your input exceeds the context window","param":"input"}}`,
		"flat":   `{"type":"error","sequence_number":0,"code":"rate_limit_exceeded","message":"Slow down","param":null}`,
	} {
		up := upstreamtest.Static(upstreamtest.Reply{Events: [][]byte{[]byte("event: error\ndata: " + first + "\n\n")}})
		e := responsesEnv(t, up)
		resp := e.do("POST", "/v1/responses", `{"model":"codex","stream":true,"input":"hi"}`, openAIAuth...)
		got := readAll(t, resp.Body)
		resp.Body.Close()
		want := map[string]int{"nested": 400, "flat": 429}[name]
		if resp.StatusCode != want || gjson.GetBytes(got, "error.message").Str == "" || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s error event first: %d %s", name, resp.StatusCode, got)
		}
	}
}

// POST /v1/responses/input_tokens goes to a Responses upstream as it is;
// for another target the gateway counts, in the Responses shape, and says
// it estimated.
func TestResponsesInputTokens(t *testing.T) {
	up := upstreamtest.Static(upstreamtest.Reply{Body: []byte(`{"object":"response.input_tokens","input_tokens":42}`)})
	t.Cleanup(up.Close)
	e := newEnvYAML(t, `
providers:
  - { name: oair, type: openai-responses, base_url: "`+up.URL+`/v1", api_key: "`+upstreamKey+`" }
  - { name: ant, type: anthropic, base_url: "http://127.0.0.1:1", api_key: k }
models:
  - { name: codex, targets: [ { provider: oair, model: gpt-5-codex } ] }
  - { name: claude, targets: [ { provider: ant, model: claude-x } ] }
`)
	body := `{"model":"MODEL","instructions":"Be brief.","input":[{"role":"user","content":"How many tokens is this?"}]}`
	resp := e.do("POST", "/v1/responses/input_tokens", strings.Replace(body, "MODEL", "codex", 1), openAIAuth...)
	got := readAll(t, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(got) != `{"object":"response.input_tokens","input_tokens":42}` || up.Last().Path != "/v1/responses/input_tokens" {
		t.Errorf("pass-through: %d %s %s", resp.StatusCode, got, up.Last().Path)
	}
	resp = e.do("POST", "/v1/responses/input_tokens", strings.Replace(body, "MODEL", "claude", 1), openAIAuth...)
	got = readAll(t, resp.Body)
	resp.Body.Close()
	if n := gjson.GetBytes(got, "input_tokens").Int(); resp.StatusCode != 200 || gjson.GetBytes(got, "object").Str != "response.input_tokens" ||
		n < 8 || n > 40 || resp.Header.Get("Tollgate-Token-Count") != "estimate" {
		t.Errorf("estimate: %d %s %v", resp.StatusCode, got, resp.Header)
	}
}

// POST /v1/responses/compact goes to a Responses upstream as it is, its
// answer relayed and its usage recorded; a model served by another
// protocol answers 501 in the OpenAI envelope without calling its
// upstream, since no translator speaks compaction.
func TestResponsesCompact(t *testing.T) {
	answer := []byte(`{"id":"cmp_1","object":"response.compaction","created_at":1755500000,"output":[{"type":"compaction","encrypted_content":"gAAA"}],` +
		`"usage":{"input_tokens":900,"input_tokens_details":{"cached_tokens":0},"output_tokens":40,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":940}}`)
	up := upstreamtest.Static(upstreamtest.Reply{Body: answer})
	t.Cleanup(up.Close)
	ant := upstreamtest.Static(upstreamtest.Reply{Body: upstreamtest.File("anthropic_message.json")})
	t.Cleanup(ant.Close)
	e := newEnvYAML(t, `
providers:
  - { name: oair, type: openai-responses, base_url: "`+up.URL+`/v1", api_key: "`+upstreamKey+`" }
  - { name: ant, type: anthropic, base_url: "`+ant.URL+`", api_key: k }
models:
  - { name: codex, targets: [ { provider: oair, model: gpt-5-codex } ] }
  - { name: claude, targets: [ { provider: ant, model: claude-x } ] }
`)
	body := `{"model":"MODEL","instructions":"Be brief.","input":[{"role":"user","content":"list files"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"a.txt"}]}]}`
	resp := e.do("POST", "/v1/responses/compact", strings.Replace(body, "MODEL", "codex", 1), openAIAuth...)
	got := readAll(t, resp.Body)
	resp.Body.Close()
	u := up.Last()
	if resp.StatusCode != 200 || !bytes.Equal(got, answer) || u.Path != "/v1/responses/compact" ||
		string(u.Body) != strings.Replace(body, "MODEL", "gpt-5-codex", 1) || u.Header.Get("Authorization") != "Bearer "+upstreamKey {
		t.Errorf("pass-through: %d %s; upstream got %s %s", resp.StatusCode, got, u.Path, u.Body)
	}
	line := e.logLine(resp.Header.Get("Tollgate-Request-Id"))
	if line.Get("lane").Str != "passthrough" || line.Get("input_tokens").Int() != 900 || line.Get("output_tokens").Int() != 40 {
		t.Errorf("log line %s", line.Raw)
	}

	resp = e.do("POST", "/v1/responses/compact", strings.Replace(body, "MODEL", "claude", 1), openAIAuth...)
	got = readAll(t, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 501 || gjson.GetBytes(got, "error.param").Str != "model" ||
		!strings.Contains(gjson.GetBytes(got, "error.message").Str, "/v1/responses/compact is served only by upstreams that speak") ||
		len(ant.Requests()) != 0 {
		t.Errorf("another protocol's target: %d %s; its upstream got %d requests", resp.StatusCode, got, len(ant.Requests()))
	}

	resp = e.do("GET", "/v1/responses/compact", "", openAIAuth...)
	got = readAll(t, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "POST" || gjson.GetBytes(got, "error.message").Str == "" {
		t.Errorf("GET: %d %v %s", resp.StatusCode, resp.Header, got)
	}
}
