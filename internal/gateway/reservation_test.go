package gateway_test

import (
	"log/slog"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/cli"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// limitedEnv is a gateway whose models carry limits of their own (they
// apply to every key, the master key included).
func limitedEnv(t *testing.T) *env {
	t.Helper()
	up := upstreamtest.Static(upstreamtest.Reply{Body: upstreamtest.File("openai_completion.json")})
	t.Cleanup(up.Close)
	cfg, err := config.Parse([]byte(`
server: { max_body_bytes: 8388608 }
providers: [ { name: oai, type: openai, base_url: "`+up.URL+`/v1", api_key: k } ]
models:
  - name: tpm
    targets: [ { provider: oai, model: u } ]
    limits: { tpm: 100000 }
  - name: budget
    targets: [ { provider: oai, model: u } ]
    pricing: { input: "1", output: "2" }
    limits: { budget_usd: "100", budget_period: monthly }
  - name: counted
    targets: [ { provider: oai, model: u } ]
    pricing: { input: "1", output: "2" }
    limits: { rpm: 3, tpm: 10, budget_usd: "0.000001" }
`), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	built, err := cli.Build(cfg, cli.Options{MasterKey: masterKey, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	h, closeIdle := built.Handler, built.Close
	gw := httptest.NewServer(h)
	t.Cleanup(func() { gw.Close(); closeIdle() })
	return &env{t: t, gw: gw, logs: logs}
}

// What a request reserves cannot be gamed: a max_tokens near 2^63 is
// refused, not admitted by an overflow; n answers reserve n times the
// output; a prompt without white space reserves at least half its bytes.
func TestReservationsCannotBeGamed(t *testing.T) {
	e := limitedEnv(t)
	ask := func(extra, content string) (int, string, int64) {
		t.Helper()
		resp := e.do("POST", "/v1/chat/completions", `{"model":"tpm",`+extra+`"messages":[{"role":"user","content":"`+content+`"}]}`, openAIAuth...)
		body := readAll(t, resp.Body)
		remaining, _ := strconv.ParseInt(resp.Header.Get("X-Ratelimit-Remaining-Tokens"), 10, 64)
		return resp.StatusCode, gjson.GetBytes(body, "error.message").String(), remaining
	}
	for _, mt := range []string{"9223372036854775807", "9223372036854775000", "9223372036854775808", "4611686018427387904"} {
		if code, msg, _ := ask(`"max_tokens":`+mt+`,`, "hi"); code != 429 || !strings.Contains(msg, "request too large") {
			t.Errorf("max_tokens %s: %d %s", mt, code, msg)
		}
	}
	// The window is intact: an ordinary request fits, and sees the
	// whole limit but its own reservation.
	code, msg, rem := ask(`"max_tokens":1000,`, "hi")
	if code != 200 || rem < 100000-1100 || rem > 100000-1000 {
		t.Fatalf("after the refusals: %d %s, remaining %d", code, msg, rem)
	}
	// n = 30 answers of up to 1,000 tokens reserve 30,000. (The request
	// before settled at what it used: 127 fresh input and 10 output tokens
	// in openai_completion.json; cache reads do not count by default.)
	code, msg, rem2 := ask(`"max_tokens":1000,"n":30,`, "hi")
	if reserved := 100000 - 137 - rem2; code != 200 || reserved < 30000 || reserved > 30100 {
		t.Errorf("n=30: %d %s, reserved %d", code, msg, reserved)
	}
	// 2 MB of letters and digits: a tokenizer counts about 1.3M tokens;
	// the reservation is at least 1M, more than the limit.
	if code, msg, _ := ask(`"max_tokens":1,`, strings.Repeat("a1B2c3D4e5", 200_000)); code != 429 || !strings.Contains(msg, "request too large") {
		t.Errorf("2 MB without white space: %d %s", code, msg)
	}
}

// Under a USD budget, features the provider bills apart from tokens, at
// prices the gateway does not know, are refused up front.
func TestBudgetRefusesUnpricedFeatures(t *testing.T) {
	e := limitedEnv(t)
	for _, extra := range []string{
		`"tools":[{"type":"web_search_20250305","name":"web_search"}],`,
		`"web_search_options":{},`,
		`"service_tier":"priority",`,
	} {
		resp := e.do("POST", "/v1/chat/completions", `{"model":"budget",`+extra+`"messages":[{"role":"user","content":"hi"}]}`, openAIAuth...)
		body := readAll(t, resp.Body)
		if resp.StatusCode != 403 || gjson.GetBytes(body, "error.code").String() != "unpriced_feature" {
			t.Errorf("%s: %d %s", extra, resp.StatusCode, body)
		}
	}
	// Each client protocol names its own.
	for _, c := range []struct{ path, body, tool string }{
		{"/v1/messages", `{"model":"budget","max_tokens":10,"tools":[{"type":"web_fetch_20250910","name":"web_fetch"}],"messages":[{"role":"user","content":"hi"}]}`, "web_fetch_20250910"},
		{"/v1/responses", `{"model":"budget","tools":[{"type":"web_search"}],"input":"hi"}`, "web_search"},
	} {
		resp := e.do("POST", c.path, c.body, append(openAIAuth, anthropicAuth[1])...)
		body := readAll(t, resp.Body)
		if resp.StatusCode != 403 || !strings.Contains(gjson.GetBytes(body, "error.message").Str, "the server tool "+c.tool+" is billed") {
			t.Errorf("%s: %d %s", c.path, resp.StatusCode, body)
		}
	}
	resp := e.do("POST", "/v1/chat/completions", `{"model":"budget","service_tier":"flex","messages":[{"role":"user","content":"web_search priority"}]}`, openAIAuth...)
	if body := readAll(t, resp.Body); resp.StatusCode != 200 {
		t.Errorf("a priced request: %d %s", resp.StatusCode, body)
	}
}

// count_tokens answered by the gateway's own tokenizer: the request rate
// applies (tokens and budgets do not: counting is free), and bodies too
// large to count in a second or two are refused.
func TestCountTokensLimits(t *testing.T) {
	e := limitedEnv(t)
	count := func(content string) (int, []byte) {
		resp := e.do("POST", "/v1/messages/count_tokens", `{"model":"counted","messages":[{"role":"user","content":"`+content+`"}]}`, anthropicAuth...)
		return resp.StatusCode, readAll(t, resp.Body)
	}
	if code, body := count(strings.Repeat("word ", 1_000_000)); code != 413 || !strings.Contains(string(body), "count_tokens") {
		t.Errorf("5 MB: %d %s", code, body)
	}
	for i := range 2 {
		// Far more tokens than tpm 10, and a budget of a micro-dollar:
		// neither applies to counting.
		if code, body := count(strings.Repeat("word ", 1000)); code != 200 || gjson.GetBytes(body, "input_tokens").Int() < 1000 {
			t.Errorf("count %d: %d %s", i, code, body)
		}
	}
	if code, body := count("hi"); code != 429 || !strings.Contains(string(body), "requests per minute") {
		t.Errorf("fourth count in a minute, rpm 3 (the 413 counted): %d %s", code, body)
	}
}

// A refusal that a smaller output limit would avoid names the limit in
// the client's protocol, and says when the request set none and the
// model's most was reserved for it.
func TestRefusalSaysHowTheOutputWasReserved(t *testing.T) {
	e := limitedEnv(t)
	for _, tt := range []struct{ name, path, body, want string }{
		{"chat without a limit", "/v1/chat/completions", `{"model":"counted","messages":[{"role":"user","content":"hi"}]}`,
			"the request sets no max_completion_tokens, so the model's most, 8192 output tokens, was reserved: set max_completion_tokens to what the answer needs"},
		{"chat with one", "/v1/chat/completions", `{"model":"counted","max_tokens":500,"messages":[{"role":"user","content":"hi"}]}`,
			"(estimated input plus max_completion_tokens), more than the 10 tokens per minute model \"counted\" (across all keys) allows; lower max_completion_tokens"},
		{"responses without a limit", "/v1/responses", `{"model":"counted","input":"hi"}`,
			"the request sets no max_output_tokens, so the model's most, 8192 output tokens, was reserved"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := e.do("POST", tt.path, tt.body, openAIAuth...)
			body := readAll(t, resp.Body)
			if msg := gjson.GetBytes(body, "error.message").String(); resp.StatusCode != 429 || !strings.Contains(msg, tt.want) {
				t.Errorf("%d %s", resp.StatusCode, body)
			}
		})
	}
}
