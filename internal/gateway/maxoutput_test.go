package gateway_test

import (
	"testing"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// TestMaxOutputMustBePositiveInteger: a bound on the output that is not a
// positive whole number (-1, 0, 5.5, 1e308) is refused with
// 400 invalid_request_error in the client's envelope, naming the member,
// on every endpoint and lane, streamed or not, before anything reaches
// an upstream; positive integers pass.
func TestMaxOutputMustBePositiveInteger(t *testing.T) {
	ant := upstreamtest.Static(upstreamtest.Reply{Body: upstreamtest.File("anthropic_message.json")})
	oai := upstreamtest.Static(upstreamtest.Reply{Body: upstreamtest.File("openai_completion.json")})
	rs := upstreamtest.Static(upstreamtest.Reply{Body: upstreamtest.File("responses.json")})
	for _, s := range []*upstreamtest.Server{ant, oai, rs} {
		t.Cleanup(s.Close)
	}
	e := newEnvYAML(t, `
providers:
  - { name: ant, type: anthropic, base_url: "`+ant.URL+`", api_key: "`+upstreamKey+`" }
  - { name: oai, type: openai, base_url: "`+oai.URL+`/v1", api_key: "`+upstreamKey+`" }
  - { name: oair, type: openai-responses, base_url: "`+rs.URL+`/v1", api_key: "`+upstreamKey+`" }
models:
  - { name: claude-x, targets: [ { provider: ant, model: claude-upstream-id } ] }
  - { name: gpt-x, targets: [ { provider: oai, model: gpt-upstream-id } ] }
  - { name: codex, targets: [ { provider: oair, model: gpt-5-codex } ] }
`)
	upstreamRequests := func() int { return len(ant.Requests()) + len(oai.Requests()) + len(rs.Requests()) }

	type endpoint struct {
		path, conversation string
		params             []string
		passthrough        string // a model on the pass-through lane
		translated         []string
	}
	endpoints := []endpoint{
		{"/v1/messages", `"messages":[{"role":"user","content":"hi"}]`, []string{"max_tokens"}, "claude-x", []string{"gpt-x", "codex"}},
		{"/v1/chat/completions", `"messages":[{"role":"user","content":"hi"}]`, []string{"max_tokens", "max_completion_tokens"}, "gpt-x", []string{"claude-x", "codex"}},
		{"/v1/responses", `"input":"hi"`, []string{"max_output_tokens"}, "codex", []string{"claude-x", "gpt-x"}},
	}
	for _, ep := range endpoints {
		auth := openAIAuth
		anthropicClient := ep.path == "/v1/messages"
		if anthropicClient {
			auth = anthropicAuth
		}
		for _, param := range ep.params {
			for _, model := range append([]string{ep.passthrough}, ep.translated...) {
				body := func(v string, stream bool) string {
					b := `{"model":"` + model + `",` + ep.conversation + `,"` + param + `":` + v
					if anthropicClient && param != "max_tokens" {
						b += `,"max_tokens":10`
					}
					if stream {
						b += `,"stream":true`
					}
					return b + "}"
				}
				for _, tv := range []struct{ v, msg string }{
					{"-1", "must be a positive integer"}, {"0", "must be a positive integer"}, {"-99999999999999999999", "must be a positive integer"},
					{"1e308", "expected an integer"}, {"5.5", "expected an integer"}, {"1.0", "expected an integer"}, {"1E3", "expected an integer"},
				} {
					v := tv.v
					for _, stream := range []bool{false, true} {
						name := ep.path + " " + model + " " + param + "=" + v
						if stream {
							name += " stream"
						}
						t.Run(name, func(t *testing.T) {
							before := upstreamRequests()
							resp := e.do("POST", ep.path, body(v, stream), auth...)
							got := readAll(t, resp.Body)
							resp.Body.Close()
							if resp.StatusCode != 400 {
								t.Fatalf("status %d, want 400: %s", resp.StatusCode, got)
							}
							if typ := gjson.GetBytes(got, "error.type").String(); typ != "invalid_request_error" {
								t.Errorf("error.type = %q: %s", typ, got)
							}
							if msg := gjson.GetBytes(got, "error.message").String(); msg != param+": "+tv.msg+", got "+v {
								t.Errorf("error.message = %q", msg)
							}
							if anthropicClient {
								if gjson.GetBytes(got, "type").String() != "error" {
									t.Errorf("not the Anthropic envelope: %s", got)
								}
							} else if p := gjson.GetBytes(got, "error.param").String(); p != param {
								t.Errorf("error.param = %q: %s", p, got)
							}
							if n := upstreamRequests() - before; n != 0 {
								t.Errorf("%d requests reached an upstream", n)
							}
						})
					}
				}
				t.Run(ep.path+" "+model+" "+param+"=1024", func(t *testing.T) {
					before := upstreamRequests()
					resp := e.do("POST", ep.path, body("1024", false), auth...)
					got := readAll(t, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						t.Fatalf("status %d: %s", resp.StatusCode, got)
					}
					if n := upstreamRequests() - before; n != 1 {
						t.Errorf("%d requests reached an upstream, want 1", n)
					}
				})
			}
		}
	}
}
