package gateway_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// The system-message capabilities set in configuration reach the
// translators: leading_system_only folds Claude Code's mid-conversation
// system entries into the user turn for chat templates that take one
// leading system message; system_messages keeps an OpenAI client's later
// system message in place for Anthropic models that take them.
func TestSystemMessageCapabilities(t *testing.T) {
	oai := upstreamtest.Static(upstreamtest.Reply{Body: upstreamtest.File("openai_completion.json")})
	ant := upstreamtest.Static(upstreamtest.Reply{Body: upstreamtest.File("anthropic_message.json")})
	t.Cleanup(oai.Close)
	t.Cleanup(ant.Close)
	e := newEnvYAML(t, `
providers:
  - { name: oai, type: openai, base_url: "`+oai.URL+`/v1", api_key: "`+upstreamKey+`" }
  - { name: ant, type: anthropic, base_url: "`+ant.URL+`", api_key: "`+upstreamKey+`" }
models:
  - { name: vllm, targets: [ { provider: oai, model: u } ], capabilities: { leading_system_only: true } }
  - { name: gpt, targets: [ { provider: oai, model: u } ] }
  - { name: claude, targets: [ { provider: ant, model: u } ], capabilities: { system_messages: true } }
  - { name: claude-old, targets: [ { provider: ant, model: u } ] }
`)
	anthropicBody := `{"model":"MODEL","max_tokens":64,"system":"be brief","messages":[
		{"role":"user","content":"hi"},{"role":"assistant","content":"hello"},
		{"role":"system","content":"Plan mode is active."},{"role":"user","content":"go on"}]}`
	for model, want := range map[string][]string{
		"vllm": {"system", "user", "assistant", "user"},
		"gpt":  {"system", "user", "assistant", "system", "user"},
	} {
		resp := e.do("POST", "/v1/messages", strings.Replace(anthropicBody, "MODEL", model, 1), anthropicAuth...)
		body := readAll(t, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: status %d: %s", model, resp.StatusCode, body)
		}
		var got []string
		for _, r := range gjson.GetBytes(oai.Last().Body, "messages.#.role").Array() {
			got = append(got, r.String())
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: upstream roles %q, want %q", model, got, want)
		}
		if !strings.Contains(string(oai.Last().Body), "Plan mode is active.") {
			t.Errorf("%s: the folded system text is lost: %s", model, oai.Last().Body)
		}
	}

	chatBody := `{"model":"MODEL","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"},
		{"role":"assistant","content":"hello"},{"role":"system","content":"Plan mode is active."},{"role":"user","content":"go on"}]}`
	for model, wantInMessages := range map[string]bool{"claude": true, "claude-old": false} {
		resp := e.do("POST", "/v1/chat/completions", strings.Replace(chatBody, "MODEL", model, 1), openAIAuth...)
		body := readAll(t, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: status %d: %s", model, resp.StatusCode, body)
		}
		roles := gjson.GetBytes(ant.Last().Body, "messages.#.role").String()
		if got := gjson.Parse(roles).Get(`#(=="system")`).Exists(); got != wantInMessages {
			t.Errorf("%s: upstream roles %s; a system entry inside messages: %v, want %v", model, roles, got, wantInMessages)
		}
		if !strings.Contains(string(ant.Last().Body), "Plan mode is active.") {
			t.Errorf("%s: the later system text is lost: %s", model, ant.Last().Body)
		}
	}
}
