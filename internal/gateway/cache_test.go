package gateway_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/cli"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// On the pass-through lane the client's bytes go as they are unless the
// model's prompt_cache mode is auto: then a request with no breakpoints
// gets them, one with its own keeps them, and an OpenAI request gets a
// prompt_cache_key. A client's own prompt_cache_key is sent scoped to
// its tenant (TestPromptCacheKeyPerTenant).
func TestPromptCachePassThrough(t *testing.T) {
	long := strings.Repeat("context ", 800)
	ant := upstreamtest.Static(upstreamtest.Reply{Body: upstreamtest.File("anthropic_message.json")})
	oai := upstreamtest.Static(upstreamtest.Reply{Body: upstreamtest.File("openai_completion.json")})
	defer ant.Close()
	defer oai.Close()
	e := newEnvYAML(t, `
providers:
  - { name: ant, type: anthropic, base_url: "`+ant.URL+`", api_key: k }
  - { name: oai, type: openai, base_url: "`+oai.URL+`/v1", api_key: k }
models:
  - { name: claude-default, targets: [ { provider: ant, model: c } ] }
  - { name: claude-auto, targets: [ { provider: ant, model: c } ], prompt_cache: { mode: auto, ttl: 1h } }
  - { name: gpt-default, targets: [ { provider: oai, model: g } ] }
  - { name: gpt-auto, targets: [ { provider: oai, model: g } ], prompt_cache: { mode: auto } }
  - { name: gpt-nokey, targets: [ { provider: oai, model: g } ], prompt_cache: { mode: auto }, capabilities: { no_prompt_cache_key: true } }
`)
	msgs := func(model, system string) string {
		return `{"model":"` + model + `","max_tokens":5,"system":` + system + `,"messages":[{"role":"user","content":"hi"}]}`
	}
	own := `[{"type":"text","text":"` + long + `","cache_control":{"type":"ephemeral"}}]`
	cases := []struct {
		name, path, body string
		header           string // tollgate-cache-breakpoints
		check            func(t *testing.T, sent []byte)
	}{
		{"default: the client's bytes", "/v1/messages", msgs("claude-default", `"`+long+`"`), "", func(t *testing.T, sent []byte) {
			if strings.Contains(string(sent), "cache_control") {
				t.Errorf("breakpoints added: %s", sent[:200])
			}
		}},
		{"auto: breakpoints when the client set none", "/v1/messages", msgs("claude-auto", `"`+long+`"`), "2", func(t *testing.T, sent []byte) {
			if gjson.GetBytes(sent, "system.0.cache_control.ttl").Str != "1h" || gjson.GetBytes(sent, "messages.0.content.0.cache_control.ttl").Str != "1h" {
				t.Errorf("sent %s", sent)
			}
		}},
		{"auto: the client's own breakpoints kept", "/v1/messages", msgs("claude-auto", own), "0", func(t *testing.T, sent []byte) {
			if strings.Count(string(sent), "cache_control") != 1 {
				t.Errorf("sent %s", sent)
			}
		}},
		{"openai default: no key", "/v1/chat/completions", `{"model":"gpt-default","messages":[{"role":"user","content":"hi"}]}`, "", func(t *testing.T, sent []byte) {
			if gjson.GetBytes(sent, "prompt_cache_key").Exists() {
				t.Errorf("sent %s", sent)
			}
		}},
		{"openai auto: the gateway's key", "/v1/chat/completions", `{"model":"gpt-auto","messages":[{"role":"user","content":"hi"}]}`, "", func(t *testing.T, sent []byte) {
			if k := gjson.GetBytes(sent, "prompt_cache_key").Str; !strings.HasPrefix(k, "tollgate-") || len(k) != len("tollgate-")+16 {
				t.Errorf("sent %s", sent)
			}
		}},
		{"openai auto: the client's key, scoped to its tenant", "/v1/chat/completions", `{"model":"gpt-auto","prompt_cache_key":"mine","messages":[{"role":"user","content":"hi"}]}`, "", func(t *testing.T, sent []byte) {
			if k := gjson.GetBytes(sent, "prompt_cache_key").Str; !strings.HasPrefix(k, "tollgate-") || len(k) != len("tollgate-")+16 {
				t.Errorf("sent %s", sent)
			}
		}},
		{"openai auto on an upstream that refuses the key", "/v1/chat/completions", `{"model":"gpt-nokey","messages":[{"role":"user","content":"hi"}]}`, "", func(t *testing.T, sent []byte) {
			if gjson.GetBytes(sent, "prompt_cache_key").Exists() {
				t.Errorf("sent %s", sent)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			headers := []string{"Authorization: Bearer " + masterKey}
			up := oai
			if strings.HasPrefix(c.path, "/v1/messages") {
				headers = append(headers, "anthropic-version: 2023-06-01")
				up = ant
			}
			resp := e.do("POST", c.path, c.body, headers...)
			readAll(t, resp.Body)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if got := resp.Header.Get("Tollgate-Cache-Breakpoints"); got != c.header {
				t.Errorf("tollgate-cache-breakpoints %q, want %q", got, c.header)
			}
			c.check(t, up.Last().Body)
		})
	}
}

// A Responses conversation continued by previous_response_id keeps its
// first turn's target: its key is read from the whole stored
// conversation.
func TestStickyResponsesChain(t *testing.T) {
	db, _ := ledgerDB(t)
	var fakes [2]*upstreamtest.Server
	for i := range fakes {
		fakes[i] = upstreamtest.Static(upstreamtest.Reply{Body: upstreamtest.File("anthropic_message.json")})
		defer fakes[i].Close()
	}
	gw := serveYAML(t, `
providers:
  - { name: a0, type: anthropic, base_url: "`+fakes[0].URL+`", api_key: k }
  - { name: a1, type: anthropic, base_url: "`+fakes[1].URL+`", api_key: k }
models:
  - { name: claude, targets: [ { provider: a0, model: c }, { provider: a1, model: c } ] }
`, cli.Options{Store: db})
	send := func(body string) (string, string) {
		req, _ := http.NewRequest("POST", gw.URL+"/v1/responses", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+masterKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b := readAll(t, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, b)
		}
		return gjson.GetBytes(b, "id").Str, resp.Header.Get("Tollgate-Target")
	}
	targets := map[string]int{}
	for i := range 20 {
		id, first := send(`{"model":"claude","instructions":"be brief","input":"conversation ` + strconv.Itoa(i) + `"}`)
		prev := id
		for turn := range 3 {
			next, target := send(`{"model":"claude","previous_response_id":"` + prev + `","input":"and then ` + strconv.Itoa(turn) + `"}`)
			if target != first {
				t.Fatalf("conversation %d: turn 1 on %s, turn %d on %s", i, first, turn+2, target)
			}
			prev = next
		}
		targets[first]++
	}
	if len(targets) != 2 {
		t.Errorf("20 conversations all went to %v", targets)
	}
}
