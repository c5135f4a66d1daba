package gateway_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// Every bad input gets the right status in the envelope of the protocol the
// client called.
func TestBadInputs(t *testing.T) {
	e := newEnv(t, nil, nil, "")
	const (
		msgOK  = `{"model":"echo","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`
		chatOK = `{"model":"echo","messages":[{"role":"user","content":"hi"}]}`
	)
	tests := []struct {
		name       string
		method     string
		path       string
		body       string
		headers    []string
		wantStatus int
		wantType   string // error.type
		wantInMsg  string
	}{
		{"messages: no key", "POST", "/v1/messages", msgOK, []string{"anthropic-version: 2023-06-01"}, 401, "authentication_error", "missing API key"},
		{"messages: wrong key", "POST", "/v1/messages", msgOK, []string{"x-api-key: nope", "anthropic-version: 2023-06-01"}, 401, "authentication_error", "invalid API key"},
		{"messages: both keys", "POST", "/v1/messages", msgOK, append([]string{"Authorization: Bearer " + masterKey}, anthropicAuth...), 400, "invalid_request_error", "not both"},
		{"messages: malformed bearer", "POST", "/v1/messages", msgOK, []string{"Authorization: Basic abc", "anthropic-version: 2023-06-01"}, 401, "authentication_error", "Bearer"},
		{"messages: no anthropic-version", "POST", "/v1/messages", msgOK, []string{"x-api-key: " + masterKey}, 400, "invalid_request_error", "anthropic-version"},
		{"messages: malformed JSON says where", "POST", "/v1/messages", "{\"model\":\"echo\",\n  \"max_tokens\": 10,,}", anthropicAuth, 400, "invalid_request_error", "line 2, column"},
		{"messages: truncated JSON", "POST", "/v1/messages", `{"model":"echo"`, anthropicAuth, 400, "invalid_request_error", "malformed JSON"},
		{"messages: trailing garbage", "POST", "/v1/messages", msgOK + `{}`, anthropicAuth, 400, "invalid_request_error", "malformed JSON"},
		{"messages: not an object", "POST", "/v1/messages", `[1,2]`, anthropicAuth, 400, "invalid_request_error", "JSON object"},
		{"messages: empty body", "POST", "/v1/messages", ``, anthropicAuth, 400, "invalid_request_error", "empty"},
		{"messages: duplicate model key", "POST", "/v1/messages", `{"model":"echo","max_tokens":10,"model":"claude-x","messages":[{"role":"user","content":"hi"}]}`, anthropicAuth, 400, "invalid_request_error", "duplicate"},
		{"messages: escaped duplicate key", "POST", "/v1/messages", `{"model":"echo","max_tokens":10,"mod\u0065l":"claude-x","messages":[{"role":"user","content":"hi"}]}`, anthropicAuth, 400, "invalid_request_error", "duplicate"},
		{"messages: missing model", "POST", "/v1/messages", `{"max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`, anthropicAuth, 400, "invalid_request_error", "model"},
		{"messages: model not a string", "POST", "/v1/messages", `{"model":5,"max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`, anthropicAuth, 400, "invalid_request_error", "model"},
		{"messages: unknown model", "POST", "/v1/messages", `{"model":"nope","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`, anthropicAuth, 404, "not_found_error", "nope"},
		{"messages: missing max_tokens", "POST", "/v1/messages", `{"model":"echo","messages":[{"role":"user","content":"hi"}]}`, anthropicAuth, 400, "invalid_request_error", "max_tokens"},
		{"messages: max_tokens not a number", "POST", "/v1/messages", `{"model":"echo","max_tokens":"10","messages":[{"role":"user","content":"hi"}]}`, anthropicAuth, 400, "invalid_request_error", "max_tokens"},
		{"messages: empty messages", "POST", "/v1/messages", `{"model":"echo","max_tokens":10,"messages":[ ]}`, anthropicAuth, 400, "invalid_request_error", "at least one message"},
		{"messages: missing messages", "POST", "/v1/messages", `{"model":"echo","max_tokens":10}`, anthropicAuth, 400, "invalid_request_error", "messages"},
		{"messages: stream not a bool", "POST", "/v1/messages", `{"model":"echo","max_tokens":10,"stream":"yes","messages":[{"role":"user","content":"hi"}]}`, anthropicAuth, 400, "invalid_request_error", "stream"},
		{"messages: too large", "POST", "/v1/messages", `{"model":"echo","max_tokens":10,"messages":[{"role":"user","content":"` + strings.Repeat("x", 5000) + `"}]}`, anthropicAuth, 413, "request_too_large", "4096"},
		{"messages: wrong method", "GET", "/v1/messages", "", anthropicAuth, 405, "invalid_request_error", "POST"},
		{"count_tokens: wrong method", "PUT", "/v1/messages/count_tokens", "", anthropicAuth, 405, "invalid_request_error", "POST"},

		{"chat: no key", "POST", "/v1/chat/completions", chatOK, nil, 401, "invalid_request_error", "missing API key"},
		{"chat: wrong key", "POST", "/v1/chat/completions", chatOK, []string{"Authorization: Bearer nope"}, 401, "invalid_request_error", "invalid API key"},
		{"chat: both keys", "POST", "/v1/chat/completions", chatOK, append([]string{"x-api-key: " + masterKey}, openAIAuth...), 400, "invalid_request_error", "not both"},
		{"chat: malformed JSON", "POST", "/v1/chat/completions", `{"model":"echo","messages":[}`, openAIAuth, 400, "invalid_request_error", "column"},
		{"chat: invalid UTF-8", "POST", "/v1/chat/completions", "{\"model\":\"echo\",\"messages\":[{\"role\":\"user\",\"content\":\"\xff\"}]}", openAIAuth, 400, "invalid_request_error", "UTF-8"},
		{"chat: duplicate stream key", "POST", "/v1/chat/completions", `{"model":"echo","stream":true,"stream":false,"messages":[{"role":"user","content":"hi"}]}`, openAIAuth, 400, "invalid_request_error", "duplicate"},
		{"chat: unknown model", "POST", "/v1/chat/completions", `{"model":"nope","messages":[{"role":"user","content":"hi"}]}`, openAIAuth, 404, "invalid_request_error", "nope"},
		{"chat: empty messages", "POST", "/v1/chat/completions", `{"model":"echo","messages":[]}`, openAIAuth, 400, "invalid_request_error", "at least one message"},
		{"chat: too large", "POST", "/v1/chat/completions", `{"model":"echo","messages":[{"role":"user","content":"` + strings.Repeat("x", 5000) + `"}]}`, openAIAuth, 413, "invalid_request_error", "4096"},
		{"chat: wrong method", "DELETE", "/v1/chat/completions", "", openAIAuth, 405, "invalid_request_error", "POST"},
		{"messages→openai: n/a field refused", "POST", "/v1/messages", `{"model":"gpt-x","max_tokens":10,"mcp_servers":[{"type":"url","url":"https://x"}],"messages":[{"role":"user","content":"hi"}]}`, anthropicAuth, 400, "invalid_request_error", "mcp_servers"},
		{"chat→anthropic: n>1 refused", "POST", "/v1/chat/completions", `{"model":"claude-x","n":2,"messages":[{"role":"user","content":"hi"}]}`, openAIAuth, 400, "invalid_request_error", "n:"},
		{"chat→anthropic: bad message shape", "POST", "/v1/chat/completions", `{"model":"claude-x","messages":[{"role":"user","content":5}]}`, openAIAuth, 400, "invalid_request_error", "messages[0].content: expected a string"},
		{"models: wrong method", "POST", "/v1/models", "", openAIAuth, 405, "invalid_request_error", "GET"},
		{"unknown path", "GET", "/v2/nothing", "", openAIAuth, 404, "invalid_request_error", "no such endpoint"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := e.do(tc.method, tc.path, tc.body, tc.headers...)
			defer resp.Body.Close()
			body := readAll(t, resp.Body)
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status = %d, want %d; body %s", resp.StatusCode, tc.wantStatus, body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q, want application/json", ct)
			}
			id := resp.Header.Get("Tollgate-Request-Id")
			if !strings.HasPrefix(id, "req_") {
				t.Errorf("Tollgate-Request-Id = %q, want req_…", id)
			}
			anthropicStyle := strings.HasPrefix(tc.path, "/v1/messages")
			if anthropicStyle {
				if got := gjson.GetBytes(body, "type").String(); got != "error" {
					t.Errorf("envelope type = %q, want error; body %s", got, body)
				}
				if got := gjson.GetBytes(body, "request_id").String(); got != id {
					t.Errorf("request_id = %q, want %q", got, id)
				}
				if got := resp.Header.Get("Request-Id"); got != id {
					t.Errorf("request-id header = %q, want %q", got, id)
				}
			} else {
				for _, f := range []string{"error.message", "error.type", "error.param", "error.code"} {
					if !gjson.GetBytes(body, f).Exists() {
						t.Errorf("OpenAI envelope lacks %s: %s", f, body)
					}
				}
				if gjson.GetBytes(body, "type").Exists() {
					t.Errorf("OpenAI envelope has a top-level type: %s", body)
				}
			}
			if got := gjson.GetBytes(body, "error.type").String(); got != tc.wantType {
				t.Errorf("error.type = %q, want %q; body %s", got, tc.wantType, body)
			}
			if msg := gjson.GetBytes(body, "error.message").String(); !strings.Contains(msg, tc.wantInMsg) {
				t.Errorf("error.message = %q, want it to mention %q", msg, tc.wantInMsg)
			}
			if tc.wantStatus == http.StatusMethodNotAllowed && resp.Header.Get("Allow") == "" {
				t.Errorf("405 without an Allow header")
			}
			if strings.Contains(string(body), "goroutine") || strings.Contains(string(body), ".go:") {
				t.Errorf("error leaks internals: %s", body)
			}
		})
	}
}
