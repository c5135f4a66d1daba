package gateway_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// A body with fields the gateway knows nothing about, odd formatting,
// escapes that a re-encoder would change, and a model in the middle.
const anthropicRequest = `{
  "x_unknown_first": {"keep": [1, 2.50, 1e3, 12345678901234567890]},
  "model" : "claude-x",
  "max_tokens": 1024,
  "system": [{"type": "text", "text": "Be <brief> & kind", "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
  "thinking": {"type": "enabled", "budget_tokens": 2000},
  "messages": [{"role": "user", "content": "Weather in Paris? \u00fc \ud83c\udf26"},
               {"role": "assistant", "content": [{"type": "thinking", "thinking": "…", "signature": "EqQBCgIYAhIM=="}]},
               {"role": "user", "content": "go on"}],
  "stream": STREAM
}`

func TestPassthroughAnthropicRequestBytes(t *testing.T) {
	for _, stream := range []bool{false, true} {
		up := upstreamtest.Static(upstreamtest.Reply{Body: upstreamtest.File("anthropic_message.json")})
		if stream {
			up = upstreamtest.Static(upstreamtest.Reply{Events: upstreamtest.Events("anthropic_stream.sse")})
		}
		e := newEnv(t, up, nil, "")
		s := map[bool]string{false: "false", true: "true"}[stream]
		body := strings.Replace(anthropicRequest, "STREAM", s, 1)
		resp := e.do("POST", "/v1/messages", body, append(anthropicAuth,
			"anthropic-beta: interleaved-thinking-2025-05-14", "User-Agent: claude-cli/2.0", "X-Custom-Secret: do-not-forward")...)
		readAll(t, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("stream=%v: status %d", stream, resp.StatusCode)
		}
		got := up.Last()
		want := strings.Replace(body, `"model" : "claude-x"`, `"model" : "claude-upstream-id"`, 1)
		if string(got.Body) != want {
			t.Errorf("stream=%v: upstream body differs from the client's beyond the model:\n got %s\nwant %s", stream, got.Body, want)
		}
		if got.Path != "/v1/messages" {
			t.Errorf("upstream path = %q", got.Path)
		}
		checkUpstreamHeaders(t, got, map[string]string{
			"X-Api-Key":         upstreamKey,
			"Anthropic-Version": "2023-06-01",
			"Anthropic-Beta":    "interleaved-thinking-2025-05-14",
			"User-Agent":        "claude-cli/2.0",
			"Content-Type":      "application/json",
			"X-Custom-Secret":   "",
			"Authorization":     "",
		})
	}
}

// checkUpstreamHeaders checks header values ("" = absent) and that the
// client's key reached the upstream nowhere.
func checkUpstreamHeaders(t *testing.T, got upstreamtest.Received, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if g := got.Header.Get(k); g != v {
			t.Errorf("upstream header %s = %q, want %q", k, g, v)
		}
	}
	for k, vs := range got.Header {
		for _, v := range vs {
			if strings.Contains(v, masterKey) {
				t.Errorf("client key forwarded upstream in header %s", k)
			}
		}
	}
	if bytes.Contains(got.Body, []byte(masterKey)) {
		t.Errorf("client key forwarded upstream in the body")
	}
}

func TestPassthroughOpenAIRequestBytes(t *testing.T) {
	up := upstreamtest.Static(upstreamtest.Reply{Body: upstreamtest.File("openai_completion.json")})
	e := newEnv(t, nil, up, "")
	body := `{"messages":[{"role":"user","content":"<b>hi</b> & bye"}],"model":"gpt-x","seed":7,"x_vendor":{"a":null},"temperature":0.70}`
	resp := e.do("POST", "/v1/chat/completions", body, append(openAIAuth, "OpenAI-Organization: org-client")...)
	readAll(t, resp.Body)
	resp.Body.Close()
	got := up.Last()
	if want := strings.Replace(body, `"gpt-x"`, `"gpt-upstream-id"`, 1); string(got.Body) != want {
		t.Errorf("upstream body:\n got %s\nwant %s", got.Body, want)
	}
	if got.Path != "/v1/chat/completions" {
		t.Errorf("upstream path = %q", got.Path)
	}
	checkUpstreamHeaders(t, got, map[string]string{
		"Authorization": "Bearer " + upstreamKey, "X-Api-Key": "", "Openai-Organization": "",
	})
}

// The golden test: what the upstream sends is what the client gets, to the
// byte, and the usage tap reads it on the way.
func TestPassthroughRelaysBytes(t *testing.T) {
	tests := []struct {
		name    string
		reply   upstreamtest.Reply
		path    string
		body    string
		headers []string
		want    []byte
		usage   map[string]int64
	}{
		{
			name:  "anthropic stream",
			reply: upstreamtest.Reply{Events: upstreamtest.Events("anthropic_stream.sse"), Header: http.Header{"Request-Id": {"req_upstream_1"}, "Anthropic-Ratelimit-Requests-Remaining": {"99"}}},
			path:  "/v1/messages", headers: anthropicAuth,
			body:  `{"model":"claude-x","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"x"}]}`,
			want:  upstreamtest.File("anthropic_stream.sse"),
			usage: map[string]int64{"input_tokens": 472, "cache_read_tokens": 3000, "cache_write_5m_tokens": 200, "cache_write_1h_tokens": 1000, "output_tokens": 89},
		},
		{
			name:  "anthropic message",
			reply: upstreamtest.Reply{Body: upstreamtest.File("anthropic_message.json"), Header: http.Header{"Request-Id": {"req_upstream_1"}, "Anthropic-Ratelimit-Requests-Remaining": {"99"}}},
			path:  "/v1/messages", headers: anthropicAuth,
			body:  `{"model":"anthropic/claude-x","max_tokens":10,"messages":[{"role":"user","content":"x"}]}`,
			want:  upstreamtest.File("anthropic_message.json"),
			usage: map[string]int64{"input_tokens": 12, "cache_read_tokens": 2048, "output_tokens": 25},
		},
		{
			name:  "openai stream with usage requested",
			reply: upstreamtest.Reply{Events: upstreamtest.Events("openai_stream.sse"), Header: http.Header{"X-Request-Id": {"req_upstream_1"}, "X-Ratelimit-Remaining-Requests": {"99"}}},
			path:  "/v1/chat/completions", headers: openAIAuth,
			body:  `{"model":"gpt-x","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x"}]}`,
			want:  upstreamtest.File("openai_stream.sse"),
			usage: map[string]int64{"input_tokens": 93, "cache_read_tokens": 1024, "output_tokens": 46},
		},
		{
			name:  "openai completion",
			reply: upstreamtest.Reply{Body: upstreamtest.File("openai_completion.json"), Header: http.Header{"X-Request-Id": {"req_upstream_1"}, "X-Ratelimit-Remaining-Requests": {"99"}}},
			path:  "/v1/chat/completions", headers: openAIAuth,
			body:  `{"model":"gpt-x","messages":[{"role":"user","content":"x"}]}`,
			want:  upstreamtest.File("openai_completion.json"),
			usage: map[string]int64{"input_tokens": 127, "cache_read_tokens": 1792, "output_tokens": 10},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			up := upstreamtest.Static(tc.reply)
			var e *env
			if strings.HasPrefix(tc.path, "/v1/messages") {
				e = newEnv(t, up, nil, "")
			} else {
				e = newEnv(t, nil, up, "")
			}
			resp := e.do("POST", tc.path, tc.body, tc.headers...)
			got := readAll(t, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, got)
			}
			if !bytes.Equal(got, tc.want) {
				t.Errorf("client got different bytes than the upstream sent:\n got %q\nwant %q", got, tc.want)
			}
			for k, v := range tc.reply.Header {
				if g := resp.Header.Get(k); g != v[0] {
					t.Errorf("response header %s = %q, want %q (relayed)", k, g, v[0])
				}
			}
			line := e.logLine(resp.Header.Get("Tollgate-Request-Id"))
			for k, v := range tc.usage {
				if g := line.Get(k).Int(); g != v {
					t.Errorf("log %s = %d, want %d", k, g, v)
				}
			}
			if line.Get("lane").String() != "passthrough" || line.Get("status").Int() != 200 {
				t.Errorf("log line = %s", line.Raw)
			}
		})
	}
}

// Without include_usage the gateway asks for usage anyway (to meter) and
// hides it from the client: the usage-only chunk is dropped.
func TestPassthroughOpenAIStreamStripsInjectedUsage(t *testing.T) {
	up := upstreamtest.Static(upstreamtest.Reply{Events: upstreamtest.Events("openai_stream.sse")})
	e := newEnv(t, nil, up, "")
	resp := e.do("POST", "/v1/chat/completions", `{"model":"gpt-x","stream":true,"messages":[{"role":"user","content":"x"}]}`, openAIAuth...)
	got := readAll(t, resp.Body)
	resp.Body.Close()
	if !gjson.GetBytes(up.Last().Body, "stream_options.include_usage").Bool() {
		t.Errorf("upstream was not asked for usage: %s", up.Last().Body)
	}
	events := upstreamtest.Events("openai_stream.sse")
	var want []byte
	for _, ev := range events {
		if !bytes.Contains(ev, []byte(`"choices":[],"usage":{`)) {
			want = append(want, ev...)
		}
	}
	if !bytes.Equal(got, want) {
		t.Errorf("client stream:\n got %q\nwant %q", got, want)
	}
	line := e.logLine(resp.Header.Get("Tollgate-Request-Id"))
	if line.Get("cache_read_tokens").Int() != 1024 || line.Get("output_tokens").Int() != 46 {
		t.Errorf("usage not metered: %s", line.Raw)
	}
}

// Compatible upstreams that put usage on the last content chunk get it
// replaced by null rather than the chunk dropped.
func TestPassthroughOpenAIStreamNullsUsageOnContentChunk(t *testing.T) {
	up := upstreamtest.Static(upstreamtest.Reply{Events: [][]byte{
		[]byte("data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"hi\"},\"finish_reason\":null}]}\n\n"),
		[]byte("data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":1,\"total_tokens\":6}}\n\n"),
		[]byte("data: [DONE]\n\n"),
	}})
	e := newEnv(t, nil, up, "")
	resp := e.do("POST", "/v1/chat/completions", `{"model":"gpt-x","stream":true,"messages":[{"role":"user","content":"x"}]}`, openAIAuth...)
	got := string(readAll(t, resp.Body))
	resp.Body.Close()
	want := "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"hi\"},\"finish_reason\":null}]}\n\n" +
		"data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":null}\n\n" +
		"data: [DONE]\n\n"
	if got != want {
		t.Errorf("client stream:\n got %q\nwant %q", got, want)
	}
	if line := e.logLine(resp.Header.Get("Tollgate-Request-Id")); line.Get("input_tokens").Int() != 5 {
		t.Errorf("usage not metered: %s", line.Raw)
	}
}

func TestPassthroughUpstreamErrors(t *testing.T) {
	tests := []struct {
		name       string
		reply      upstreamtest.Reply
		openai     bool
		wantStatus int
		wantBody   string // exact, when relayed
		wantType   string // error.type, when rendered by the gateway
		wantHeader map[string]string
	}{
		{name: "anthropic 529 relayed as is",
			reply:      upstreamtest.Reply{Status: 529, Body: []byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_u"}`), Header: http.Header{"Retry-After": {"3"}}},
			wantStatus: 529, wantBody: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_u"}`,
			wantHeader: map[string]string{"Retry-After": "3"}},
		{name: "anthropic 400 relayed as is",
			reply:      upstreamtest.Reply{Status: 400, Body: []byte(`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 300000 tokens > 200000 maximum"}}`)},
			wantStatus: 400, wantBody: `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 300000 tokens > 200000 maximum"}}`},
		{name: "openai 429 relayed with retry-after", openai: true,
			reply:      upstreamtest.Reply{Status: 429, Body: []byte(`{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`), Header: http.Header{"Retry-After": {"7"}, "X-Ratelimit-Reset-Requests": {"7s"}}},
			wantStatus: 429, wantBody: `{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
			wantHeader: map[string]string{"Retry-After": "7", "X-Ratelimit-Reset-Requests": "7s"}},
		{name: "anthropic 401 is the gateway's credential: 502",
			reply:      upstreamtest.Reply{Status: 401, Body: []byte(`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)},
			wantStatus: 502, wantType: "api_error", wantHeader: map[string]string{"X-Should-Retry": "false"}},
		{name: "openai 401 is the gateway's credential: 502", openai: true,
			reply:      upstreamtest.Reply{Status: 401, Body: []byte(`{"error":{"message":"Incorrect API key","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`)},
			wantStatus: 502, wantType: "server_error", wantHeader: map[string]string{"X-Should-Retry": "false"}},
		{name: "anthropic stream starting with an error event becomes a JSON error",
			reply:      upstreamtest.Reply{Events: [][]byte{[]byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n")}},
			wantStatus: 529, wantBody: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
		{name: "openai stream starting with an error chunk becomes a JSON error", openai: true,
			reply:      upstreamtest.Reply{Events: [][]byte{[]byte(": ping\n\n"), []byte("data: {\"error\":{\"message\":\"busy\",\"type\":\"server_error\",\"param\":null,\"code\":null}}\n\n")}},
			wantStatus: 500, wantBody: `{"error":{"message":"busy","type":"server_error","param":null,"code":null}}`},
		{name: "stream closed before any event: 502",
			reply:      upstreamtest.Reply{Events: [][]byte{}},
			wantStatus: 502, wantType: "api_error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			up := upstreamtest.Static(tc.reply)
			var e *env
			var resp *http.Response
			if tc.openai {
				e = newEnv(t, nil, up, "")
				resp = e.do("POST", "/v1/chat/completions", `{"model":"gpt-x","stream":true,"messages":[{"role":"user","content":"x"}]}`, openAIAuth...)
			} else {
				e = newEnv(t, up, nil, "")
				resp = e.do("POST", "/v1/messages", `{"model":"claude-x","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"x"}]}`, anthropicAuth...)
			}
			body := readAll(t, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status = %d, want %d: %s", resp.StatusCode, tc.wantStatus, body)
			}
			if tc.wantBody != "" && string(body) != tc.wantBody {
				t.Errorf("body = %s, want %s", body, tc.wantBody)
			}
			if tc.wantType != "" {
				if got := gjson.GetBytes(body, "error.type").String(); got != tc.wantType {
					t.Errorf("error.type = %q, want %q: %s", got, tc.wantType, body)
				}
				if strings.Contains(string(body), upstreamKey) {
					t.Errorf("error leaks the upstream key: %s", body)
				}
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type = %q, want JSON", ct)
			}
			for k, v := range tc.wantHeader {
				if g := resp.Header.Get(k); g != v {
					t.Errorf("header %s = %q, want %q", k, g, v)
				}
			}
		})
	}
}

// Once the stream has started, a failure ends it with a protocol error
// event and never with a made-up normal ending.
func TestPassthroughStreamFailures(t *testing.T) {
	antEvents := upstreamtest.Events("anthropic_stream.sse")
	oaiEvents := upstreamtest.Events("openai_stream.sse")
	tests := []struct {
		name     string
		openai   bool
		reply    upstreamtest.Reply
		extra    string
		wantTail string // the end of what the client received
	}{
		{name: "anthropic cut mid-way", reply: upstreamtest.Reply{Events: antEvents[:5], Cut: true},
			wantTail: "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"upstream stream interrupted\"}}\n\n"},
		{name: "anthropic clean EOF before message_stop", reply: upstreamtest.Reply{Events: antEvents[:5]},
			wantTail: "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"upstream stream ended before its final event\"}}\n\n"},
		{name: "anthropic idle", reply: upstreamtest.Reply{Events: antEvents[:3], Hang: true}, extra: `, timeouts: { idle: 150ms }`,
			wantTail: "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"upstream sent nothing for longer than its idle timeout\"}}\n\n"},
		{name: "openai cut mid-way", openai: true, reply: upstreamtest.Reply{Events: oaiEvents[:4], Cut: true},
			wantTail: "data: {\"error\":{\"message\":\"upstream stream interrupted\",\"type\":\"server_error\",\"param\":null,\"code\":\"upstream_stream_interrupted\"}}\n\n"},
		{name: "openai EOF without [DONE]", openai: true, reply: upstreamtest.Reply{Events: oaiEvents[:len(oaiEvents)-1]},
			wantTail: "data: {\"error\":{\"message\":\"upstream stream ended before its final event\",\"type\":\"server_error\",\"param\":null,\"code\":\"upstream_stream_interrupted\"}}\n\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			up := upstreamtest.Static(tc.reply)
			var e *env
			var resp *http.Response
			if tc.openai {
				e = newEnv(t, nil, up, tc.extra)
				resp = e.do("POST", "/v1/chat/completions", `{"model":"gpt-x","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x"}]}`, openAIAuth...)
			} else {
				e = newEnv(t, up, nil, tc.extra)
				resp = e.do("POST", "/v1/messages", `{"model":"claude-x","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"x"}]}`, anthropicAuth...)
			}
			body := string(readAll(t, resp.Body))
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("status = %d: %s", resp.StatusCode, body)
			}
			if !strings.HasSuffix(body, tc.wantTail) {
				t.Errorf("stream does not end in the error event:\n got %q\nwant suffix %q", body, tc.wantTail)
			}
			for _, fake := range []string{"message_stop", "[DONE]"} {
				if strings.Contains(body, fake) {
					t.Errorf("stream contains a normal ending %q after a failure", fake)
				}
			}
			line := e.logLine(resp.Header.Get("Tollgate-Request-Id"))
			if line.Get("error").String() == "" {
				t.Errorf("log line has no error: %s", line.Raw)
			}
			if !tc.openai && line.Get("input_tokens").Int() != 472 {
				t.Errorf("usage seen so far not kept: %s", line.Raw)
			}
		})
	}
}

func TestPassthroughUpstreamUnreachableAndSlow(t *testing.T) {
	t.Run("unreachable: 502", func(t *testing.T) {
		e := newEnv(t, nil, nil, "") // providers point at 127.0.0.1:1
		resp := e.do("POST", "/v1/messages", `{"model":"claude-x","max_tokens":5,"messages":[{"role":"user","content":"x"}]}`, anthropicAuth...)
		body := readAll(t, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 502 || gjson.GetBytes(body, "error.type").String() != "api_error" {
			t.Errorf("got %d %s, want 502 api_error", resp.StatusCode, body)
		}
	})
	for _, tc := range []struct {
		name, timeouts, path, body, wantType string
		headers                              []string
		anthropic                            bool
	}{
		{"first byte timeout: 504", `, timeouts: { first_byte: 50ms }`, "/v1/chat/completions",
			`{"model":"gpt-x","messages":[{"role":"user","content":"x"}]}`, "server_error", openAIAuth, false},
		{"total timeout: 504", `, timeouts: { total: 50ms }`, "/v1/messages",
			`{"model":"claude-x","max_tokens":5,"messages":[{"role":"user","content":"x"}]}`, "timeout_error", anthropicAuth, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := upstreamtest.New(func(upstreamtest.Received) upstreamtest.Reply {
				time.Sleep(300 * time.Millisecond)
				return upstreamtest.Reply{Body: []byte(`{}`)}
			})
			var e *env
			if tc.anthropic {
				e = newEnv(t, up, nil, tc.timeouts)
			} else {
				e = newEnv(t, nil, up, tc.timeouts)
			}
			resp := e.do("POST", tc.path, tc.body, tc.headers...)
			body := readAll(t, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 504 || gjson.GetBytes(body, "error.type").String() != tc.wantType {
				t.Errorf("got %d %s, want 504 %s", resp.StatusCode, body, tc.wantType)
			}
		})
	}
}

// A client that goes away cancels the upstream request at once.
func TestClientDisconnectCancelsUpstream(t *testing.T) {
	up := upstreamtest.Static(upstreamtest.Reply{Events: upstreamtest.Events("anthropic_stream.sse")[:2], Hang: true})
	e := newEnv(t, up, nil, "")
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", e.gw.URL+"/v1/messages",
		strings.NewReader(`{"model":"claude-x","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"x"}]}`))
	req.Header.Set("x-api-key", masterKey)
	req.Header.Set("anthropic-version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 10)
	if _, err := resp.Body.Read(buf); err != nil { // the stream has started
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	select {
	case <-up.ClientGone():
	case <-time.After(5 * time.Second):
		t.Fatal("upstream request still open 5s after the client left")
	}
}

func TestCountTokensPassthrough(t *testing.T) {
	up := upstreamtest.Static(upstreamtest.Reply{Body: []byte(`{"input_tokens":42}`)})
	e := newEnv(t, up, nil, "")
	resp := e.do("POST", "/v1/messages/count_tokens", `{"model":"claude-x","messages":[{"role":"user","content":"x"}]}`, anthropicAuth...)
	body := readAll(t, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != `{"input_tokens":42}` {
		t.Errorf("got %d %s", resp.StatusCode, body)
	}
	if got := up.Last(); got.Path != "/v1/messages/count_tokens" || gjson.GetBytes(got.Body, "model").String() != "claude-upstream-id" {
		t.Errorf("upstream got %s %s", got.Path, got.Body)
	}
}

func TestModels(t *testing.T) {
	e := newEnv(t, nil, nil, "")
	resp := e.do("GET", "/v1/models", "", openAIAuth...)
	body := readAll(t, resp.Body)
	resp.Body.Close()
	if got := gjson.GetBytes(body, "data.#.id").String(); got != `["claude-x","anthropic/claude-x","gpt-x","echo"]` || gjson.GetBytes(body, "object").String() != "list" {
		t.Errorf("OpenAI list = %s", body)
	}
	resp = e.do("GET", "/v1/models", "", anthropicAuth...)
	body = readAll(t, resp.Body)
	resp.Body.Close()
	if gjson.GetBytes(body, "data.0.type").String() != "model" || gjson.GetBytes(body, "has_more").Type != gjson.False || gjson.GetBytes(body, "last_id").String() != "echo" {
		t.Errorf("Anthropic list = %s", body)
	}
	resp = e.do("GET", "/v1/models/anthropic/claude-x", "", openAIAuth...)
	body = readAll(t, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || gjson.GetBytes(body, "id").String() != "anthropic/claude-x" {
		t.Errorf("GET model = %d %s", resp.StatusCode, body)
	}
	resp = e.do("GET", "/v1/models/nope", "", anthropicAuth...)
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("GET unknown model = %d, want 404", resp.StatusCode)
	}
	resp = e.do("GET", "/healthz", "")
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("healthz = %d", resp.StatusCode)
	}
}
