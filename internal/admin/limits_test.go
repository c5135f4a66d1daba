package admin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/admin"
	"github.com/tollgate/tollgate/internal/limit"
	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/store/storetest"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// send makes a data-plane request and returns its status, headers and body.
func (e *env) send(path, key, body string) (int, http.Header, map[string]any) {
	e.t.Helper()
	req, _ := http.NewRequest("POST", e.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	if strings.HasPrefix(path, "/v1/messages") {
		req.Header.Set("Anthropic-Version", "2023-06-01")
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	json.Unmarshal(raw, &m) // streams are not JSON; callers that need the body send JSON requests
	return resp.StatusCode, resp.Header, m
}

func (e *env) key(body string) admin.KeyView {
	e.t.Helper()
	var k admin.KeyView
	if status, resp := e.call("POST", "/admin/keys", master, body, &k); status != http.StatusCreated {
		e.t.Fatalf("create key %s: %d %v", body, status, resp)
	}
	return k
}

func errField(m map[string]any, f string) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e[f].(string)
	return s
}

const chat = `{"model":%q,"max_tokens":16,"messages":[{"role":"user","content":"hello"}]}`

func TestLimitsEndToEnd(t *testing.T) {
	for name, db := range storetest.Open(t) {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, db)

			// Requests per minute, Anthropic: the quota headers count down,
			// then 429 rate_limit_error with retry-after.
			k := e.key(`{"name":"rpm","limits":{"rpm":3}}`)
			if k.Limits.RPM != 3 {
				t.Fatalf("created limits: %+v", k.Limits)
			}
			for i := 2; i >= 0; i-- {
				status, h, body := e.send("/v1/messages", k.Key, fmt.Sprintf(message, "echo"))
				if status != 200 || h.Get("Anthropic-Ratelimit-Requests-Limit") != "3" ||
					h.Get("Anthropic-Ratelimit-Requests-Remaining") != strconv.Itoa(i) || h.Get("Anthropic-Ratelimit-Requests-Reset") == "" {
					t.Fatalf("request with %d left: %d %v %v", i, status, h, body)
				}
			}
			status, h, body := e.send("/v1/messages", k.Key, fmt.Sprintf(message, "echo"))
			ra, _ := strconv.Atoi(h.Get("Retry-After"))
			if status != 429 || errType(body) != "rate_limit_error" || ra < 1 || ra > 61 || h.Get("Anthropic-Ratelimit-Requests-Remaining") != "0" {
				t.Fatalf("over the limit: %d %v %v", status, h, body)
			}

			// OpenAI: x-ratelimit-* and the OpenAI envelope, on a stream too.
			k = e.key(`{"name":"tpm","limits":{"rpm":1000,"tpm":100000}}`)
			status, h, _ = e.send("/v1/chat/completions", k.Key, `{"model":"echo","stream":true,"max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`)
			if status != 200 || h.Get("X-Ratelimit-Limit-Tokens") != "100000" || h.Get("X-Ratelimit-Remaining-Requests") != "999" ||
				!strings.HasSuffix(h.Get("X-Ratelimit-Reset-Tokens"), "s") {
				t.Fatalf("OpenAI stream: %d %v", status, h)
			}
			k = e.key(`{"name":"rpm1","limits":{"rpm":1}}`)
			e.send("/v1/chat/completions", k.Key, fmt.Sprintf(chat, "echo"))
			status, h, body = e.send("/v1/chat/completions", k.Key, fmt.Sprintf(chat, "echo"))
			if status != 429 || errField(body, "type") != "rate_limit_error" || errField(body, "code") != "rate_limit_exceeded" ||
				h.Get("X-Ratelimit-Remaining-Requests") != "0" || h.Get("Retry-After-Ms") == "" {
				t.Fatalf("OpenAI over the limit: %d %v %v", status, h, body)
			}

			// Per model, by alias: the key's use of echo is limited, other models not.
			k = e.key(`{"name":"per-model","model_limits":{"e":{"rpm":1}}}`)
			if k.ModelLimits["e"].RPM != 1 {
				t.Fatalf("model limits: %+v", k.ModelLimits)
			}
			e.send("/v1/messages", k.Key, fmt.Sprintf(message, "echo"))
			if status, _, body := e.send("/v1/messages", k.Key, fmt.Sprintf(message, "e")); status != 429 || !strings.Contains(errField(body, "message"), `model "echo"`) {
				t.Fatalf("per-model limit: %d %v", status, body)
			}
			if status, _, _ := e.send("/v1/messages", k.Key, fmt.Sprintf(message, "other")); status != 200 {
				t.Fatalf("another model: %d", status)
			}
			// The console's limits page shows the per-model window in use,
			// under the model's name, as admission counted it.
			if page := e.consolePage("/console/limits"); !strings.Contains(page, "echo: rpm 1 of 1") {
				t.Fatalf("the console's limits page:\n%s", page)
			}
			// PATCH replaces limits; null removes them.
			if status, resp := e.call("PATCH", "/admin/keys/"+k.ID, master, `{"model_limits":null}`, nil); status != 200 {
				t.Fatalf("patch: %d %v", status, resp)
			}
			if status, _, _ := e.send("/v1/messages", k.Key, fmt.Sprintf(message, "echo")); status != 200 {
				t.Fatalf("after removing the limit: %d", status)
			}

			// A budget: a request whose worst case does not fit is refused
			// up front; spend never passes the budget; 429 insufficient_quota.
			// echo costs 3 / 15 USD per million input / output tokens.
			k = e.key(`{"name":"budget","limits":{"budget_usd":"0.001","budget_period":"monthly"}}`)
			status, _, body = e.send("/v1/chat/completions", k.Key, `{"model":"echo","max_tokens":100,"messages":[{"role":"user","content":"hi"}]}`)
			if status != 429 || errField(body, "type") != "insufficient_quota" || errField(body, "code") != "insufficient_quota" ||
				!strings.Contains(errField(body, "message"), "budget") {
				t.Fatalf("worst case over the budget: %d %v", status, body)
			}
			served := 0
			for i := 0; i < 20; i++ {
				status, h, body = e.send("/v1/messages", k.Key, fmt.Sprintf(message, "echo"))
				if status != 200 {
					break
				}
				served++
				if h.Get("Tollgate-Budget-Limit-Usd") != "0.001" || h.Get("Tollgate-Budget-Reset") == "" {
					t.Fatalf("budget headers: %v", h)
				}
			}
			if served == 0 || status != 429 || errType(body) != "rate_limit_error" || !strings.Contains(errField(body, "message"), "budget") {
				t.Fatalf("after %d served: %d %v", served, status, body)
			}
			spent := spend(t, db, k.ID)
			if spent <= 0 || spent > 1_000_000 {
				t.Fatalf("spent %d nano-USD of a 1000000 budget", spent)
			}

			// A restarted gateway reloads the spend from the ledger.
			e2 := newEnv(t, db)
			if status, _, body := e2.send("/v1/messages", k.Key, fmt.Sprintf(message, "echo")); status != 429 {
				t.Fatalf("after a restart: %d %v", status, body)
			}

			// A budget on an unpriced model cannot be counted: refused.
			k = e.key(`{"name":"unpriced","limits":{"budget_usd":5}}`)
			if status, _, body := e.send("/v1/messages", k.Key, fmt.Sprintf(message, "unpriced")); status != 403 || !strings.Contains(errField(body, "message"), "no price") {
				t.Fatalf("budget on an unpriced model: %d %v", status, body)
			}
			if status, resp := e.call("POST", "/admin/keys", master, `{"name":"x","model_limits":{"unpriced":{"budget_usd":5}}}`, nil); status != 400 {
				t.Fatalf("budget on an unpriced model at creation: %d %v", status, resp)
			}
		})
	}
}

func spend(t *testing.T, db *store.Store, keyID string) int64 {
	t.Helper()
	total, _, err := db.Spend(context.Background(), keyID, nil, time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return total
}

func TestKeyLimitDefaultsAndModelLimitsFromConfig(t *testing.T) {
	db := storetest.Open(t)["sqlite"]
	e := newEnvWith(t, db, `
providers: [ { name: demo, type: echo } ]
limits: { key_defaults: { rpm: 2 } }
models:
  - { name: echo, targets: [ { provider: demo } ], limits: { max_parallel: 5, rpm: 3 } }
`)
	a, b := e.key(`{"name":"a"}`), e.key(`{"name":"b","limits":{"rpm":10}}`)
	// a: the default rpm 2 binds; b: its own rpm 10, but the model's 3 in all.
	for i, want := range []int{200, 200, 429} {
		if status, _, _ := e.send("/v1/messages", a.Key, fmt.Sprintf(message, "echo")); status != want {
			t.Fatalf("key a request %d: %d, want %d", i, status, want)
		}
	}
	if status, _, _ := e.send("/v1/messages", b.Key, fmt.Sprintf(message, "echo")); status != 200 {
		t.Fatalf("key b: %d", status)
	}
	status, _, body := e.send("/v1/messages", master, fmt.Sprintf(message, "echo"))
	if status != 429 || !strings.Contains(errField(body, "message"), "across all keys") {
		t.Fatalf("the model's limit, master key: %d %v", status, body)
	}
}

// A client that leaves mid-stream: the request still settles, freeing its
// place among parallel requests and charging what the stream used.
func TestLimitsSettleWhenTheClientLeavesMidStream(t *testing.T) {
	db := storetest.Open(t)["sqlite"]
	up := upstreamtest.New(func(r upstreamtest.Received) upstreamtest.Reply {
		if strings.Contains(string(r.Body), "second") {
			return upstreamtest.Reply{Body: []byte(`{"id":"msg_2","type":"message","role":"assistant","model":"x","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":5}}`)}
		}
		return upstreamtest.Reply{Hang: true, Events: [][]byte{
			[]byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"x\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":1000,\"output_tokens\":1}}}\n\n"),
			[]byte("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"),
		}}
	})
	defer up.Close()
	e := newEnvWith(t, db, `
providers: [ { name: ant, type: anthropic, base_url: "`+up.URL+`", api_key: x } ]
models: [ { name: m, targets: [ { provider: ant, model: x } ], pricing: { input: "3", output: "15" } } ]
`)
	srv := e.srv
	k := e.key(`{"name":"k","limits":{"max_parallel":1,"budget_usd":1}}`)

	req, _ := http.NewRequest("POST", srv.URL+"/v1/messages", strings.NewReader(`{"model":"m","max_tokens":16,"stream":true,"messages":[{"role":"user","content":"first"}]}`))
	req.Header.Set("X-Api-Key", k.Key)
	req.Header.Set("Anthropic-Version", "2023-06-01")
	resp, err := srv.Client().Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("stream: %v %v", resp, err)
	}
	buf := make([]byte, 64)
	resp.Body.Read(buf) // the stream has begun
	if status, _, _ := e.send("/v1/messages", k.Key, `{"model":"m","max_tokens":16,"messages":[{"role":"user","content":"second"}]}`); status != 429 {
		t.Fatalf("a second request while the stream runs: %d, want 429 (max_parallel 1)", status)
	}
	resp.Body.Close() // the client leaves

	deadline := time.Now().Add(5 * time.Second)
	for {
		status, h, body := e.send("/v1/messages", k.Key, `{"model":"m","max_tokens":16,"messages":[{"role":"user","content":"second"}]}`)
		if status == 200 {
			// The abandoned stream was charged what it used: 1000 input and
			// 1 output tokens, 3,015,000 nano-USD, and that is what was left
			// before this request; it reserved well under 0.001 USD.
			left, err := limit.ParseUSD(h.Get("Tollgate-Budget-Remaining-Usd"))
			if err != nil || left.Nano() != 1e9-3_015_000 {
				t.Fatalf("budget left: %q %v", h.Get("Tollgate-Budget-Remaining-Usd"), err)
			}
			held, err := limit.ParseUSD(h.Get("Tollgate-Budget-Reserved-Usd"))
			if err != nil || held.Nano() <= 0 || held.Nano() >= 1_000_000 {
				t.Fatalf("budget reserved: %q %v", h.Get("Tollgate-Budget-Reserved-Usd"), err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the abandoned stream's place was not freed: %d %v", status, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// consolePage signs in to the console with the master key and returns
// the page at path.
func (e *env) consolePage(path string) string {
	e.t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Transport: e.srv.Client().Transport}
	resp, err := c.PostForm(e.srv.URL+"/console/signin", url.Values{"key": {master}})
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = c.Get(e.srv.URL + path)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("%s: %d\n%s", path, resp.StatusCode, raw)
	}
	return string(raw)
}
