package gateway_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// A translated request the upstream would refuse is refused by the
// gateway: 400 in the client protocol's own envelope, naming the member by
// its JSON path, and nothing reaches the upstream.
func TestTranslationRefusalsInClientEnvelope(t *testing.T) {
	ant := upstreamtest.Static(upstreamtest.Reply{Body: upstreamtest.File("anthropic_message.json")})
	oai := upstreamtest.Static(upstreamtest.Reply{Body: upstreamtest.File("openai_completion.json")})
	e := newEnv(t, ant, oai, "")
	rs := upstreamtest.Static(upstreamtest.Reply{Body: upstreamtest.File("responses.json")})
	er := responsesEnv(t, rs)

	tests := []struct {
		name, path, body string
		responses        bool // on the Responses upstream (codex)
		param, inMsg     string
	}{
		{"messages→chat: tool_result without tool_use_id", "/v1/messages",
			`{"model":"gpt-x","max_tokens":10,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","content":"ok"}]}]}`,
			false, "messages[2].content[0].tool_use_id", "the id of the tool_use block this result answers"},
		{"messages→chat: max_tokens 0", "/v1/messages",
			`{"model":"gpt-x","max_tokens":0,"messages":[{"role":"user","content":"hi"}]}`, false, "max_tokens", "must be a positive integer"},
		{"messages→responses: tool_result without tool_use_id", "/v1/messages",
			`{"model":"codex","max_tokens":10,"messages":[{"role":"user","content":[{"type":"tool_result","content":"ok"}]}]}`,
			true, "messages[0].content[0].tool_use_id", "required"},
		{"chat→messages: function tool without a name", "/v1/chat/completions",
			`{"model":"claude-x","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"","parameters":{"type":"object"}}}]}`,
			false, "tools[0].function.name", `a non-empty string such as "get_weather"`},
		{"chat→messages: tiff image", "/v1/chat/completions",
			`{"model":"claude-x","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/tiff;base64,SUkq"}}]}]}`,
			false, "messages[0].content[0].image_url.url", "image/jpeg, image/png, image/gif and image/webp"},
		{"chat→messages: max_completion_tokens 0", "/v1/chat/completions",
			`{"model":"claude-x","max_completion_tokens":0,"messages":[{"role":"user","content":"hi"}]}`, false, "max_completion_tokens", "got 0"},
		{"chat→responses: max_completion_tokens -1", "/v1/chat/completions",
			`{"model":"codex","max_completion_tokens":-1,"messages":[{"role":"user","content":"hi"}]}`, true, "max_completion_tokens", "got -1"},
		{"responses→messages: function_call_output without call_id", "/v1/responses",
			`{"model":"claude-x","input":[{"role":"user","content":"hi"},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"type":"function_call_output","output":"ok"}]}`,
			false, "input[2].call_id", "the id of the call this output answers"},
		{"responses→chat: function tool without name", "/v1/responses",
			`{"model":"gpt-x","input":"hi","tools":[{"type":"function"}]}`, false, "tools[0].name", "required"},
		{"responses→chat: max_output_tokens 0", "/v1/responses",
			`{"model":"gpt-x","input":"hi","max_output_tokens":0}`, false, "max_output_tokens", "must be a positive integer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env, auth := e, openAIAuth
			if tc.responses {
				env = er
			}
			anthropicClient := strings.HasPrefix(tc.path, "/v1/messages")
			if anthropicClient {
				auth = anthropicAuth
			}
			before := len(ant.Requests()) + len(oai.Requests()) + len(rs.Requests())
			resp := env.do("POST", tc.path, tc.body, auth...)
			body := readAll(t, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 400 {
				t.Fatalf("status %d, want 400: %s", resp.StatusCode, body)
			}
			msg := gjson.GetBytes(body, "error.message").String()
			if !strings.HasPrefix(msg, tc.param+": ") || !strings.Contains(msg, tc.inMsg) {
				t.Errorf("error.message = %q, want %q…%q", msg, tc.param+": ", tc.inMsg)
			}
			if got := gjson.GetBytes(body, "error.type").String(); got != "invalid_request_error" {
				t.Errorf("error.type = %q: %s", got, body)
			}
			if anthropicClient {
				if gjson.GetBytes(body, "type").String() != "error" || gjson.GetBytes(body, "error.param").Exists() {
					t.Errorf("not the Anthropic envelope: %s", body)
				}
			} else {
				if gjson.GetBytes(body, "type").Exists() || !gjson.GetBytes(body, "error.code").Exists() {
					t.Errorf("not the OpenAI envelope: %s", body)
				}
				if got := gjson.GetBytes(body, "error.param").String(); got != tc.param {
					t.Errorf("error.param = %q, want %q", got, tc.param)
				}
			}
			if after := len(ant.Requests()) + len(oai.Requests()) + len(rs.Requests()); after != before {
				t.Errorf("the refused request reached an upstream")
			}
		})
	}
}

// What a client is told about a body it got wrong names the member in the
// API's own terms (a JSON path, what is accepted), never the decoder's Go
// types or packages, on every client endpoint.
func TestBadBodyMessagesNameNoGoInternals(t *testing.T) {
	e := newEnv(t, nil, nil, "")
	tests := []struct {
		path, body string
		inMsg      string // "" when any 400 message will do
	}{
		{"/v1/messages", `{"model":"gpt-x","max_tokens":10,"messages":[{"role":"user","content":"x"},{"role":1,"content":"y"}]}`, "messages[1].role: expected a string, got a number"},
		{"/v1/messages", `{"model":"gpt-x","max_tokens":10,"messages":[{"role":"user","content":5}]}`, "messages[0].content: expected a string or an array of content blocks, got a number"},
		{"/v1/messages", `{"model":"gpt-x","max_tokens":10,"messages":[{"role":"user","content":"x","role":"user"}]}`, `messages[0]: duplicate field "role"`},
		{"/v1/messages", `{"model":"gpt-x","max_tokens":10,"tool_choice":[1],"messages":[{"role":"user","content":"x"}]}`, "tool_choice: expected an object, got an array"},
		{"/v1/messages", `{"model":"gpt-x","max_tokens":10,"messages":[{"role":"user","content":"x"}`, "malformed JSON in request body at line 1, column 75"},
		{"/v1/messages/count_tokens", `{"model":"gpt-x","messages":[{"role":"user","content":"x"}`, "malformed JSON in request body at line 1, column 59"},
		{"/v1/messages/count_tokens", `{"model":"gpt-x","messages":[1,}`, ""},
		{"/v1/chat/completions", `{"model":"claude-x","messages":[{"role":"user","content":{}}]}`, "messages[0].content: expected a string, an array of content parts or null, got an object"},
		{"/v1/chat/completions", `{"model":"claude-x","messages":[{"role":"user","content":"x"}],"stop":5}`, "stop: expected an array, got a number"},
		{"/v1/chat/completions", `{"model":"claude-x","messages":[{"role":"user","content":"x"}],"max_tokens":2.5}`, "max_tokens: expected an integer, got 2.5"},
		{"/v1/chat/completions", `{"model":"claude-x","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":[]}]}`, "tools[0].function: expected an object, got an array"},
		{"/v1/chat/completions", `{"model":"claude-x","messages":[{"role":"user","content":"x"}],"response_format":"json"}`, "response_format: expected an object, got a string"},
		{"/v1/responses", `{"model":"claude-x","input":5}`, "input: expected a string or an array"},
		{"/v1/responses", `{"model":"claude-x","input":[{"type":"message","role":"user","content":5}]}`, "input[0].content: expected a string, an array of content parts or null, got a number"},
		{"/v1/responses", `{"model":"gpt-x","input":[{"role":"user","content":[{"type":"input_text","text":7}]}]}`, "input[0].content[0].text: expected a string, got a number"},
		{"/v1/responses", `{"model":"gpt-x","input":"x","temperature":"hot"}`, "temperature: expected a number, got a string"},
		{"/v1/responses", `{"model":"gpt-x","input":"x","tool_choice":{"type":1}}`, "tool_choice.type: expected a string, got a number"},
	}
	for _, tc := range tests {
		t.Run(tc.path+" "+tc.body, func(t *testing.T) {
			body := e.post400(t, tc.path, tc.body)
			msg := gjson.GetBytes(body, "error.message").String()
			if !strings.Contains(msg, tc.inMsg) {
				t.Errorf("error.message = %q, want it to contain %q", msg, tc.inMsg)
			}
			assertNoGoInternals(t, msg)
		})
	}
}

// assertNoGoInternals fails when a client message names Go internals.
func assertNoGoInternals(t *testing.T, msg string) {
	t.Helper()
	if msg == "" {
		t.Error("empty error message")
	}
	for _, bad := range []string{"Go ", "json:", "jsontext", "unmarshal", "Unmarshal", "jsonx.", "anthropic.", "openai.", "responses.", "translate.", "time.", "reflect."} {
		if strings.Contains(msg, bad) {
			t.Errorf("message %q names Go internals (%q)", msg, bad)
		}
	}
}

// GET /v1/models lists the names a client can send: a pattern such as
// claude-* is not one, though the names it covers are served.
func TestModelListLeavesOutPatterns(t *testing.T) {
	e := newEnvYAML(t, `
providers: [ { name: e, type: echo } ]
models:
  - { name: echo, aliases: ["gpt-*", chat], targets: [ { provider: e } ] }
  - { name: "claude-*", targets: [ { provider: e } ] }
`)
	body := readAll(t, e.do("GET", "/v1/models", "", openAIAuth...).Body)
	var ids []string
	for _, m := range gjson.GetBytes(body, "data.#.id").Array() {
		ids = append(ids, m.Str)
	}
	if strings.Join(ids, ",") != "echo,chat" {
		t.Errorf("listed %v, want echo and chat", ids)
	}
	if resp := e.do("GET", "/v1/models/claude-opus-4-8", "", openAIAuth...); resp.StatusCode != 200 {
		t.Errorf("a name the pattern covers: %d", resp.StatusCode)
	}
}

// A tool schema whose definitions each refer to the next one twice, 30
// levels deep (about 3 KB), would be 2^30 copies once its $refs are
// inlined for Gemini: every client gets a 400 in its own envelope naming
// where the schema grew past the bound, and Gemini is never called.
func TestGeminiSchemaFanOutRefused(t *testing.T) {
	up := upstreamtest.Static(upstreamtest.Reply{Body: []byte(`{"candidates":[{"content":{"role":"model","parts":[{"text":"hi"}]},"finishReason":"STOP"}]}`)})
	t.Cleanup(up.Close)
	e := newEnvYAML(t, `
server: { max_body_bytes: 16384 }
providers:
  - { name: goog, type: gemini, base_url: "`+up.URL+`", api_key: "`+upstreamKey+`" }
models:
  - { name: gem, targets: [ { provider: goog, model: gemini-up } ] }
`)
	var s strings.Builder
	s.WriteString(`{"type":"object","properties":{"root":{"$ref":"#/$defs/d0"}},"$defs":{`)
	for i := range 30 {
		fmt.Fprintf(&s, `"d%d":{"type":"object","properties":{"left":{"$ref":"#/$defs/d%d"},"right":{"$ref":"#/$defs/d%d"}}},`, i, i+1, i+1)
	}
	s.WriteString(`"d30":{"type":"string"}}}`)
	schema := s.String()

	for _, tc := range []struct{ path, body, param string }{
		{"/v1/messages", `{"model":"gem","max_tokens":100,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","input_schema":` + schema + `}]}`, "tools[0].input_schema"},
		{"/v1/chat/completions", `{"model":"gem","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":` + schema + `}}]}`, "tools[0].function.parameters"},
		{"/v1/responses", `{"model":"gem","input":"hi","store":false,"tools":[{"type":"function","name":"f","parameters":` + schema + `}]}`, "tools[0].parameters"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			body := e.post400(t, tc.path, tc.body)
			msg := gjson.GetBytes(body, "error.message").String()
			if !strings.HasPrefix(msg, tc.param+".properties.root.#/$defs/d0.") || !strings.Contains(msg, ": schema expands past ") {
				t.Errorf("error.message = %q", msg)
			}
			if got := gjson.GetBytes(body, "error.type").String(); got != "invalid_request_error" {
				t.Errorf("error.type = %q: %s", got, body)
			}
			if tc.path == "/v1/messages" {
				if gjson.GetBytes(body, "type").String() != "error" {
					t.Errorf("not the Anthropic envelope: %s", body)
				}
			} else if p := gjson.GetBytes(body, "error.param").String(); !strings.HasPrefix(p, tc.param+".") {
				t.Errorf("error.param = %q, want under %s: %s", p, tc.param, body)
			}
		})
	}
	if n := len(up.Requests()); n != 0 {
		t.Errorf("Gemini was called %d times", n)
	}
}

// post400 sends body to path with the key where that path's clients put
// it, and returns the answer, which must be a 400.
func (e *env) post400(t *testing.T, path, body string) []byte {
	t.Helper()
	auth := openAIAuth
	if strings.HasPrefix(path, "/v1/messages") {
		auth = anthropicAuth
	}
	resp := e.do("POST", path, body, auth...)
	b := readAll(t, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Fatalf("status %d, want 400: %.300s", resp.StatusCode, b)
	}
	return b
}
