package gateway_test

import (
	"net/http"
	"testing"

	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// Only the upstream response headers that describe the answer, identify
// it or say when to retry reach the client: not the provider account's
// organization or project, CORS grants or cookies.
func TestUpstreamResponseHeadersAllowlisted(t *testing.T) {
	relayed := http.Header{
		"Request-Id": {"req_up"}, "X-Request-Id": {"req_up_oai"}, "Retry-After": {"3"}, "X-Should-Retry": {"true"},
		"Openai-Processing-Ms": {"12"}, "Anthropic-Ratelimit-Requests-Remaining": {"99"}, "X-Ratelimit-Remaining-Tokens": {"5"},
	}
	held := http.Header{
		"Openai-Organization": {"org-secret"}, "Openai-Project": {"proj_secret"}, "Anthropic-Organization-Id": {"0f1e-secret"},
		"Access-Control-Allow-Origin": {"*"}, "Access-Control-Allow-Credentials": {"true"}, "Set-Cookie": {"__cf_bm=x"},
		"Strict-Transport-Security": {"max-age=1"}, "Server": {"cloudflare"}, "Cf-Ray": {"8a-SJC"}, "Via": {"1.1 google"},
	}
	header := http.Header{}
	for _, h := range []http.Header{relayed, held} {
		for k, v := range h {
			header[k] = v
		}
	}
	for _, tc := range []struct{ name, path, body, file string }{
		{"anthropic", "/v1/messages", `{"model":"claude-x","max_tokens":10,"messages":[{"role":"user","content":"x"}]}`, "anthropic_message.json"},
		{"openai", "/v1/chat/completions", `{"model":"gpt-x","messages":[{"role":"user","content":"x"}]}`, "openai_completion.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := upstreamtest.Static(upstreamtest.Reply{Body: upstreamtest.File(tc.file), Header: header})
			var e *env
			if tc.name == "anthropic" {
				e = newEnv(t, up, nil, "")
			} else {
				e = newEnv(t, nil, up, "")
			}
			resp := e.do("POST", tc.path, tc.body, "Authorization: Bearer "+masterKey, "anthropic-version: 2023-06-01")
			readAll(t, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			for k, v := range relayed {
				if got := resp.Header.Get(k); got != v[0] {
					t.Errorf("%s = %q, want %q relayed", k, got, v[0])
				}
			}
			for k := range held {
				if got := resp.Header.Get(k); got != "" {
					t.Errorf("%s = %q relayed from the upstream", k, got)
				}
			}
		})
	}
}

// anthropic_betas on a provider and on a model: a beta reaches the
// upstream only when both allow it; the rest are dropped and named in
// tollgate-dropped-betas. Without an allowlist every beta is forwarded.
func TestAnthropicBetasAllowlist(t *testing.T) {
	up := upstreamtest.Static(upstreamtest.Reply{Body: upstreamtest.File("anthropic_message.json")})
	t.Cleanup(up.Close)
	e := newEnvYAML(t, `
providers:
  - { name: ant, type: anthropic, base_url: "`+up.URL+`", api_key: "`+upstreamKey+`", anthropic_betas: [files-api-2025-04-14, context-1m-2025-08-07, Interleaved-Thinking-2025-05-14] }
  - { name: open, type: anthropic, base_url: "`+up.URL+`", api_key: "`+upstreamKey+`" }
models:
  - { name: limited, targets: [ { provider: ant, model: u } ], anthropic_betas: [files-api-2025-04-14, interleaved-thinking-2025-05-14] }
  - { name: none, targets: [ { provider: open, model: u } ], anthropic_betas: [] }
  - { name: any, targets: [ { provider: open, model: u } ] }
`)
	for _, tc := range []struct {
		model, sent, forwarded, dropped string
	}{
		{"limited", "files-api-2025-04-14, context-1m-2025-08-07,interleaved-thinking-2025-05-14,mcp-client-2025-04-04",
			"files-api-2025-04-14,interleaved-thinking-2025-05-14", "context-1m-2025-08-07,mcp-client-2025-04-04"},
		{"limited", "files-api-2025-04-14", "files-api-2025-04-14", ""},
		{"limited", "", "", ""},
		{"none", "files-api-2025-04-14", "", "files-api-2025-04-14"},
		{"any", "files-api-2025-04-14,anything-at-all", "files-api-2025-04-14,anything-at-all", ""},
	} {
		headers := append([]string{}, anthropicAuth...)
		if tc.sent != "" {
			headers = append(headers, "anthropic-beta: "+tc.sent)
		}
		resp := e.do("POST", "/v1/messages", `{"model":"`+tc.model+`","max_tokens":10,"messages":[{"role":"user","content":"x"}]}`, headers...)
		readAll(t, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s %q: status %d", tc.model, tc.sent, resp.StatusCode)
		}
		if got := up.Last().Header.Get("Anthropic-Beta"); got != tc.forwarded {
			t.Errorf("%s %q: upstream got anthropic-beta %q, want %q", tc.model, tc.sent, got, tc.forwarded)
		}
		if got := resp.Header.Get("Tollgate-Dropped-Betas"); got != tc.dropped {
			t.Errorf("%s %q: tollgate-dropped-betas %q, want %q", tc.model, tc.sent, got, tc.dropped)
		}
	}
}
