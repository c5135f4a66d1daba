package gateway_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/auth"
	"github.com/tollgate/tollgate/internal/cli"
	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// tenantGateway serves a gateway configured by yaml(url), url being a
// fake OpenAI upstream's, with a database holding two virtual keys.
func tenantGateway(t *testing.T, yaml func(url string) string) (gw *httptest.Server, oai *upstreamtest.Server, keyA, keyB string) {
	t.Helper()
	db, _ := ledgerDB(t)
	oai = upstreamtest.Static(upstreamtest.Reply{Body: upstreamtest.File("openai_completion.json")})
	t.Cleanup(oai.Close)
	gw = serveYAML(t, yaml(oai.URL+"/v1"), cli.Options{Store: db})
	var secrets [2]string
	for i := range secrets {
		secret, hash, prefix := auth.NewSecret()
		if err := db.CreateKey(context.Background(), store.Key{ID: auth.NewKeyID(), Name: "tenant " + strconv.Itoa(i),
			Hash: hash, Prefix: prefix, CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		secrets[i] = secret
	}
	return gw, oai, secrets[0], secrets[1]
}

// postAs sends body to path with key, and returns the answer's
// tollgate-target.
func postAs(t *testing.T, gw *httptest.Server, key, path, body string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", gw.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Anthropic-Version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b := readAll(t, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: status %d: %s", path, resp.StatusCode, b)
	}
	return resp.Header.Get("Tollgate-Target")
}

// The prompt_cache_key sent upstream is scoped by the key's tenant: two
// keys sending the same prompt, or naming the same prompt_cache_key, send
// different ones, which stay the same from one request of a key to the
// next; a client's own key never reaches the upstream as it is.
func TestPromptCacheKeyPerTenant(t *testing.T) {
	gw, oai, keyA, keyB := tenantGateway(t, func(url string) string {
		return `
providers:
  - { name: oai, type: openai, base_url: "` + url + `", api_key: k }
models:
  - { name: gpt-auto, targets: [ { provider: oai, model: g } ], prompt_cache: { mode: auto } }
  - { name: gpt-client, targets: [ { provider: oai, model: g } ] }
  - { name: gpt-off, targets: [ { provider: oai, model: g } ], prompt_cache: { mode: off } }
`
	})
	chat := func(model, extra string) string {
		return `{"model":"` + model + `"` + extra + `,"messages":[{"role":"system","content":"the same system prompt"},{"role":"user","content":"the same question"}]}`
	}
	messages := `{"model":"gpt-auto","max_tokens":5,"system":"the same system prompt","messages":[{"role":"user","content":"the same question"}]}`
	cases := []struct {
		name, path, body string
	}{
		{"derived, pass-through", "/v1/chat/completions", chat("gpt-auto", "")},
		{"derived from user, pass-through", "/v1/chat/completions", chat("gpt-auto", `,"user":"alice"`)},
		{"derived, translated", "/v1/messages", messages},
		{"derived from user_id, translated", "/v1/messages", strings.Replace(messages, `"system"`, `"metadata":{"user_id":"alice"},"system"`, 1)},
		{"the client's, mode auto", "/v1/chat/completions", chat("gpt-auto", `,"prompt_cache_key":"shared"`)},
		{"the client's, mode client", "/v1/chat/completions", chat("gpt-client", `,"prompt_cache_key":"shared"`)},
		{"the client's, mode off", "/v1/chat/completions", chat("gpt-off", `,"prompt_cache_key":"shared"`)},
		{"the client's, translated", "/v1/responses", `{"model":"gpt-client","prompt_cache_key":"shared","input":"the same question"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sent := func(key string) string {
				postAs(t, gw, key, c.path, c.body)
				k := gjson.GetBytes(oai.Last().Body, "prompt_cache_key")
				if k.Type != gjson.String || !strings.HasPrefix(k.Str, "tollgate-") {
					t.Fatalf("sent prompt_cache_key %s: %s", k.Raw, oai.Last().Body)
				}
				return k.Str
			}
			a1, b, a2 := sent(keyA), sent(keyB), sent(keyA)
			if a1 == b {
				t.Errorf("both keys sent prompt_cache_key %q", a1)
			}
			if a1 != a2 {
				t.Errorf("one key sent %q, then %q", a1, a2)
			}
		})
	}
}

// Sticky routing ranks targets and pool keys by the conversation within
// its tenant: a key's conversations keep their target and pool key, and
// two keys sending the same prompts are placed independently of each
// other, not on the same target and key every time.
func TestStickyRoutingPerTenant(t *testing.T) {
	gw, oai, keyA, keyB := tenantGateway(t, func(url string) string {
		return `
providers:
  - { name: p0, type: openai, base_url: "` + url + `", api_keys: [k0, k1, k2] }
  - { name: p1, type: openai, base_url: "` + url + `", api_keys: [k3, k4, k5] }
  - { name: p2, type: openai, base_url: "` + url + `", api_keys: [k6, k7, k8] }
models:
  - { name: gpt, targets: [ { provider: p0, model: g }, { provider: p1, model: g }, { provider: p2, model: g } ] }
`
	})
	// where is the target and pool key that served the request.
	where := func(key, body string) string {
		target := postAs(t, gw, key, "/v1/chat/completions", body)
		return target + " " + oai.Last().Header.Get("Authorization")
	}
	const prompts = 24
	same := 0
	for i := range prompts {
		body := `{"model":"gpt","messages":[{"role":"user","content":"conversation ` + strconv.Itoa(i) + `"}]}`
		a, b := where(keyA, body), where(keyB, body)
		if again := where(keyA, body); again != a {
			t.Fatalf("conversation %d: on %s, then on %s", i, a, again)
		}
		if a == b {
			same++
		}
	}
	// Independent choices among 9 target and key pairs agree on about 1
	// conversation in 9.
	if same > prompts/2 {
		t.Errorf("two keys' conversations shared their target and pool key %d times in %d", same, prompts)
	}
}
