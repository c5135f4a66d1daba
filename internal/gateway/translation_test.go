package gateway_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/gateway"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// An Anthropic client calling a model served by an OpenAI upstream: the
// upstream gets a Chat Completions request, the client a Messages answer.
func TestTranslatedAnthropicClient(t *testing.T) {
	up := upstreamtest.Static(upstreamtest.Reply{Body: upstreamtest.File("openai_completion.json"), Header: http.Header{"X-Request-Id": {"req_up"}}})
	e := newEnv(t, nil, up, "")
	resp := e.do("POST", "/v1/messages", `{"model":"gpt-x","max_tokens":64,"system":"be brief","top_k":5,"messages":[{"role":"user","content":"hi"}]}`, anthropicAuth...)
	body := readAll(t, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	got := up.Last()
	if got.Path != "/v1/chat/completions" || gjson.GetBytes(got.Body, "model").String() != "gpt-upstream-id" ||
		gjson.GetBytes(got.Body, "messages.0.role").String() != "system" || gjson.GetBytes(got.Body, "max_completion_tokens").Int() != 64 {
		t.Errorf("upstream request %s %s", got.Path, got.Body)
	}
	if got.Header.Get("Authorization") != "Bearer "+upstreamKey || got.Header.Get("Anthropic-Version") != "" {
		t.Errorf("upstream headers %v", got.Header)
	}
	// The answer names the upstream model that served it, as on the
	// pass-through lane.
	if gjson.GetBytes(body, "type").String() != "message" || gjson.GetBytes(body, "model").String() != "gpt-upstream-id" ||
		gjson.GetBytes(body, "content.0.text").String() != "Hello! <b>&</b> How can I assist you today?" ||
		gjson.GetBytes(body, "usage.input_tokens").Int() != 127 || gjson.GetBytes(body, "usage.cache_read_input_tokens").Int() != 1792 {
		t.Errorf("client answer %s", body)
	}
	if h := resp.Header.Get("Tollgate-Dropped-Params"); h != "top_k" {
		t.Errorf("tollgate-dropped-params = %q, want top_k", h)
	}
	if h := resp.Header.Get("Tollgate-Upstream-Request-Id"); h != "req_up" {
		t.Errorf("tollgate-upstream-request-id = %q", h)
	}
	line := e.logLine(resp.Header.Get("Tollgate-Request-Id"))
	if line.Get("lane").String() != "translated" || line.Get("cache_read_tokens").Int() != 1792 || line.Get("input_tokens").Int() != 127 {
		t.Errorf("log line %s", line.Raw)
	}
}

// An OpenAI client streaming from an Anthropic upstream.
func TestTranslatedOpenAIClientStream(t *testing.T) {
	up := upstreamtest.Static(upstreamtest.Reply{Events: upstreamtest.Events("anthropic_stream.sse")})
	e := newEnv(t, up, nil, "")
	resp := e.do("POST", "/v1/chat/completions", `{"model":"claude-x","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"weather?"}]}`, openAIAuth...)
	body := string(readAll(t, resp.Body))
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	got := up.Last()
	if got.Path != "/v1/messages" || gjson.GetBytes(got.Body, "max_tokens").Int() != 8192 || got.Header.Get("X-Api-Key") != upstreamKey ||
		got.Header.Get("Anthropic-Version") == "" {
		t.Errorf("upstream request %s %v %s", got.Path, got.Header, got.Body)
	}
	for _, want := range []string{
		`"delta":{"role":"assistant","content":""}`,
		`"delta":{"reasoning_content":"The user wants the weather in Paris <& \"quoted\">."}`,
		`"delta":{"content":"Let me check — ünïcödé ✓ 🌦"}`,
		`"tool_calls":[{"index":0,"id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","type":"function","function":{"name":"get_weather","arguments":""}}]`,
		`"finish_reason":"tool_calls"`,
		`"usage":{"prompt_tokens":4672,"completion_tokens":89,"total_tokens":4761,"prompt_tokens_details":{"cached_tokens":3000,"cache_write_tokens":1200}}`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("stream lacks %s:\n%s", want, body)
		}
	}
	if !strings.HasSuffix(body, "data: [DONE]\n\n") {
		t.Errorf("stream does not end in [DONE]")
	}
	line := e.logLine(resp.Header.Get("Tollgate-Request-Id"))
	if line.Get("input_tokens").Int() != 472 || line.Get("cache_write_1h_tokens").Int() != 1000 || line.Get("output_tokens").Int() != 89 {
		t.Errorf("log line %s", line.Raw)
	}
}

func TestTranslatedErrors(t *testing.T) {
	tests := []struct {
		name       string
		openai     bool
		reply      upstreamtest.Reply
		wantStatus int
		wantType   string
		wantHeader map[string]string
	}{
		{name: "anthropic 529 to an OpenAI client", openai: true,
			reply:      upstreamtest.Reply{Status: 529, Body: []byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`), Header: http.Header{"Retry-After": {"4"}}},
			wantStatus: 503, wantType: "service_unavailable_error", wantHeader: map[string]string{"Retry-After": "4"}},
		{name: "openai 503 to an Anthropic client",
			reply:      upstreamtest.Reply{Status: 503, Body: []byte(`{"error":{"message":"busy","type":"server_error"}}`)},
			wantStatus: 529, wantType: "overloaded_error"},
		{name: "openai 429 to an Anthropic client",
			reply:      upstreamtest.Reply{Status: 429, Body: []byte(`{"error":{"message":"slow","type":"requests","code":"rate_limit_exceeded"}}`), Header: http.Header{"Retry-After": {"7"}}},
			wantStatus: 429, wantType: "rate_limit_error", wantHeader: map[string]string{"Retry-After": "7"}},
		{name: "upstream credential refused: 502, not 401", openai: true,
			reply:      upstreamtest.Reply{Status: 401, Body: []byte(`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)},
			wantStatus: 502, wantType: "server_error", wantHeader: map[string]string{"X-Should-Retry": "false"}},
		{name: "first stream event an error: JSON error",
			reply:      upstreamtest.Reply{Events: [][]byte{[]byte("data: {\"error\":{\"message\":\"busy\",\"type\":\"server_error\"}}\n\n")}},
			wantStatus: 500, wantType: "api_error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			up := upstreamtest.Static(tc.reply)
			var e *env
			var resp *http.Response
			if tc.openai {
				e = newEnv(t, up, nil, "")
				resp = e.do("POST", "/v1/chat/completions", `{"model":"claude-x","messages":[{"role":"user","content":"x"}]}`, openAIAuth...)
			} else {
				e = newEnv(t, nil, up, "")
				resp = e.do("POST", "/v1/messages", `{"model":"gpt-x","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"x"}]}`, anthropicAuth...)
			}
			body := readAll(t, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.wantStatus || gjson.GetBytes(body, "error.type").String() != tc.wantType {
				t.Errorf("got %d %s, want %d %s", resp.StatusCode, body, tc.wantStatus, tc.wantType)
			}
			for k, v := range tc.wantHeader {
				if g := resp.Header.Get(k); g != v {
					t.Errorf("header %s = %q, want %q", k, g, v)
				}
			}
		})
	}
}

func TestTranslatedStreamCut(t *testing.T) {
	events := upstreamtest.Events("openai_stream.sse")
	up := upstreamtest.Static(upstreamtest.Reply{Events: events[:3], Cut: true})
	e := newEnv(t, nil, up, "")
	resp := e.do("POST", "/v1/messages", `{"model":"gpt-x","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"x"}]}`, anthropicAuth...)
	body := string(readAll(t, resp.Body))
	resp.Body.Close()
	if !strings.HasPrefix(body, "event: message_start\n") || !strings.HasSuffix(body, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"upstream stream interrupted\"}}\n\n") {
		t.Errorf("stream:\n%s", body)
	}
	if strings.Contains(body, "message_stop") {
		t.Errorf("a cut stream ended in message_stop")
	}
}

func TestCountTokensEstimateForOpenAITargets(t *testing.T) {
	e := newEnv(t, nil, nil, "")
	resp := e.do("POST", "/v1/messages/count_tokens", `{"model":"gpt-x","messages":[{"role":"user","content":"hello there, how are you today?"}]}`, anthropicAuth...)
	body := readAll(t, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || gjson.GetBytes(body, "input_tokens").Int() < 5 || resp.Header.Get("Tollgate-Token-Count") != "estimate" {
		t.Errorf("got %d %s %v", resp.StatusCode, body, resp.Header)
	}
}

// A translated stream whose OpenAI upstream goes silent keeps the Anthropic
// client's connection alive with ping events, placed between events.
func TestTranslatedStreamKeepalive(t *testing.T) {
	old := gateway.SetPingInterval(60 * time.Millisecond)
	defer gateway.SetPingInterval(old)
	events := upstreamtest.Events("openai_stream.sse")
	up := upstreamtest.Static(upstreamtest.Reply{Events: events, Gap: 250 * time.Millisecond})
	e := newEnv(t, nil, up, "")
	resp := e.do("POST", "/v1/messages", `{"model":"gpt-x","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"x"}]}`, anthropicAuth...)
	body := string(readAll(t, resp.Body))
	resp.Body.Close()
	if !strings.Contains(body, "event: ping\ndata: {\"type\": \"ping\"}\n\n") {
		t.Errorf("no keep-alive ping in a stream with 250ms silences:\n%s", body)
	}
	if !strings.HasSuffix(body, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n") {
		t.Errorf("stream did not end normally:\n%s", body)
	}
	for _, ev := range strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n") {
		if !strings.HasPrefix(ev, "event: ") || strings.Count(ev, "\ndata: ") != 1 {
			t.Fatalf("malformed event (a ping inside another event?): %q", ev)
		}
	}
}

// An upstream that answers a stream request with one JSON object: the
// client still gets a stream (TRANSLATION.md §3.5).
func TestTranslatedSyntheticStream(t *testing.T) {
	up := upstreamtest.Static(upstreamtest.Reply{Body: upstreamtest.File("openai_completion.json")})
	e := newEnv(t, nil, up, "")
	resp := e.do("POST", "/v1/messages", `{"model":"gpt-x","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"x"}]}`, anthropicAuth...)
	body := string(readAll(t, resp.Body))
	resp.Body.Close()
	if resp.Header.Get("Content-Type") != "text/event-stream" || !strings.HasPrefix(body, "event: message_start\n") ||
		!strings.Contains(body, `"text":"Hello! <b>&</b> How can I assist you today?"`) || !strings.HasSuffix(body, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n") {
		t.Errorf("%s\n%s", resp.Header.Get("Content-Type"), body)
	}
}

// A translated stream that pings its client ends cleanly: stopping the
// pinger twice (before the stream's end, and on return) once panicked
// after the last event, so a served stream was logged as a failure.
func TestTranslatedPingingStreamEndsCleanly(t *testing.T) {
	oai := upstreamtest.Static(upstreamtest.Reply{Events: upstreamtest.Events("openai_stream.sse")})
	e := newEnv(t, nil, oai, "")
	resp := e.do("POST", "/v1/messages", `{"model":"gpt-x","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, anthropicAuth...)
	body := string(readAll(t, resp.Body))
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(body, "event: message_stop") {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	id := resp.Header.Get("Tollgate-Request-Id")
	deadline := time.Now().Add(2 * time.Second)
	for !strings.Contains(e.logs.String(), id) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if l := e.logLine(id); l.Get("error").Exists() || l.Get("level").String() != "INFO" {
		t.Errorf("log line: %s", l.Raw)
	}
}
