package upstreamtest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/jsonx"
)

// obj is a JSON object under construction.
type obj = map[string]any

func text(s string) obj { return obj{"type": "text", "text": s} }

// cc returns a copy of block b with a cache_control (ttl "" for none).
func cc(b obj, ttl string) obj {
	out := obj{}
	for k, v := range b {
		out[k] = v
	}
	c := obj{"type": "ephemeral"}
	if ttl != "" {
		c["ttl"] = ttl
	}
	out["cache_control"] = c
	return out
}

func user(blocks ...obj) obj      { return obj{"role": "user", "content": blocks} }
func assistant(blocks ...obj) obj { return obj{"role": "assistant", "content": blocks} }

// body is a Messages request with system blocks and messages.
func body(system []obj, msgs ...obj) obj {
	b := obj{"model": "claude-test", "max_tokens": 1024, "messages": msgs}
	if system != nil {
		b["system"] = system
	}
	return b
}

func enc(t testing.TB, v any) []byte {
	t.Helper()
	if b, ok := v.([]byte); ok {
		return b
	}
	b, err := jsonx.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// tok is the fake's estimate of blocks.
func tok(t testing.TB, blocks ...obj) int {
	n := 0
	for _, b := range blocks {
		n += canonTokens(enc(t, b))
	}
	return n
}

// fmtUsage formats a usage for comparison.
func fmtUsage(u anthropic.Usage) string {
	cc := anthropic.CacheCreation{}
	if u.CacheCreation != nil {
		cc = *u.CacheCreation
	}
	return fmt.Sprintf("read %d, write %d (5m %d, 1h %d), input %d, output %d",
		u.CacheReadInputTokens, u.CacheCreationInputTokens, cc.Ephemeral5m, cc.Ephemeral1h, u.InputTokens, u.OutputTokens)
}

// usage is an expected usage: read, 5m write, 1h write, input.
func usage(read, w5, w1, in int) anthropic.Usage {
	return anthropic.Usage{
		InputTokens: int64(in), CacheReadInputTokens: int64(read), CacheCreationInputTokens: int64(w5 + w1),
		CacheCreation: &anthropic.CacheCreation{Ephemeral5m: int64(w5), Ephemeral1h: int64(w1)},
	}
}

type answer struct {
	status int
	raw    []byte
	header http.Header
	msg    struct {
		ID         string            `json:"id"`
		Type       string            `json:"type"`
		Role       string            `json:"role"`
		Model      string            `json:"model"`
		Content    []anthropic.Block `json:"content"`
		StopReason string            `json:"stop_reason"`
		Usage      anthropic.Usage   `json:"usage"`
		Error      struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
}

// send posts a request to the fake; header holds name/value pairs.
func send(t testing.TB, c *CachingAnthropic, method, path string, b []byte, header ...string) answer {
	t.Helper()
	req, err := http.NewRequest(method, c.URL()+path, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Anthropic-Version", "2023-06-01")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	a := answer{status: resp.StatusCode, raw: raw, header: resp.Header}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		if err := jsonx.Unmarshal(raw, &a.msg); err != nil {
			t.Fatalf("answer %s: %v", raw, err)
		}
	}
	return a
}

// clock is a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestCachingAnthropicBilling(t *testing.T) {
	sys := text(ToolOutput(1, 1500)) // above the 1024 minimum on its own
	u1, a1 := text(ToolOutput(2, 300)), text("I will look at the ledger.")
	u2, a2 := text(ToolOutput(3, 300)), text("The window is off by one.")
	u3 := text(ToolOutput(4, 300))
	small := text("Be brief.")
	rest := tok(t, u1, a1, u2)

	// steps for the look-back cases: a user message of many small blocks.
	steps := make([]obj, 40)
	for i := range steps {
		steps[i] = text(fmt.Sprintf("step %d of the plan", i))
	}
	// lookback is a request with the system, then steps[:n] with a
	// breakpoint on the last one.
	lookback := func(n int) obj {
		blocks := append([]obj(nil), steps[:n]...)
		blocks[n-1] = cc(blocks[n-1], "")
		return body([]obj{sys}, user(blocks...))
	}
	// upTo is the tokens of the system and steps[:n].
	upTo := func(n int) int { return tok(t, sys) + tok(t, steps[:n]...) }

	tool := func(name string) obj {
		return obj{"name": name, "description": "Does " + name + ".", "input_schema": obj{"type": "object", "properties": obj{"path": obj{"type": "string"}}}}
	}

	type step struct {
		wait   time.Duration // clock advance before the request
		key    string        // x-api-key; "k1" when empty
		bearer bool          // send the key as Authorization: Bearer instead
		body   any           // obj or raw []byte
		want   anthropic.Usage
		bps    int
	}
	tests := []struct {
		name  string
		opts  CacheOptions
		steps []step
	}{
		{
			name: "no breakpoint caches nothing",
			steps: []step{
				{body: body([]obj{sys}, user(u1)), want: usage(0, 0, 0, tok(t, sys, u1))},
				{body: body([]obj{sys}, user(u1)), want: usage(0, 0, 0, tok(t, sys, u1))},
			},
		},
		{
			name: "system breakpoint written, then read",
			steps: []step{
				{body: body([]obj{cc(sys, "")}, user(u1)), want: usage(0, tok(t, sys), 0, tok(t, u1)), bps: 1},
				{body: body([]obj{cc(sys, "")}, user(u1)), want: usage(tok(t, sys), 0, 0, tok(t, u1)), bps: 1},
			},
		},
		{
			name: "system as a string is one text block",
			steps: []step{
				{body: body([]obj{cc(sys, "")}, user(u1)), want: usage(0, tok(t, sys), 0, tok(t, u1)), bps: 1},
				{body: obj{"model": "claude-test", "max_tokens": 5, "system": sys["text"], "cache_control": obj{"type": "ephemeral"}, "messages": []obj{{"role": "user", "content": u1["text"]}}},
					want: usage(tok(t, sys), tok(t, u1), 0, 0), bps: 1},
			},
		},
		{
			name: "the same blocks written by another encoder hit",
			steps: []step{
				{body: body([]obj{cc(sys, "")}, user(u1)), want: usage(0, tok(t, sys), 0, tok(t, u1)), bps: 1},
				{body: []byte(`{ "messages": [ {"content": [{"text": ` + string(enc(t, u1["text"])) + `, "type": "text"}], "role": "user"} ],
					"system": [ { "cache_control": { "type": "ephemeral", "ttl": "5m" }, "type": "text", "text": ` + string(enc(t, sys["text"])) + ` } ],
					"max_tokens": 10, "model": "claude-test" }`),
					want: usage(tok(t, sys), 0, 0, tok(t, u1)), bps: 1},
			},
		},
		{
			name: "the same block in another place is another prefix",
			steps: []step{
				{body: body([]obj{cc(sys, "")}, user(u1)), want: usage(0, tok(t, sys), 0, tok(t, u1)), bps: 1},
				{body: body(nil, user(cc(sys, "")), assistant(u1)), want: usage(0, tok(t, sys), 0, tok(t, u1)), bps: 1},
				{body: body(nil, user(cc(sys, "")), assistant(u1)), want: usage(tok(t, sys), 0, 0, tok(t, u1)), bps: 1},
			},
		},
		{
			name: "rolling pair",
			steps: []step{
				// turn n writes up to its last user block.
				{body: body([]obj{cc(sys, "")}, user(u1), assistant(a1), user(cc(u2, ""))), want: usage(0, tok(t, sys)+rest, 0, 0), bps: 2},
				// turn n+1 reads it through its second-to-last breakpoint
				// and writes its new last one.
				{body: body([]obj{cc(sys, "")}, user(u1), assistant(a1), user(cc(u2, "")), assistant(a2), user(cc(u3, ""))),
					want: usage(tok(t, sys)+rest, tok(t, a2, u3), 0, 0), bps: 3},
			},
		},
		{
			name: "tools, system and a message-level breakpoint",
			steps: []step{
				{body: obj{"model": "claude-test", "max_tokens": 10, "tools": []obj{tool("read_file"), cc(tool("grep"), "1h")}, "system": []obj{sys},
					"messages": []obj{{"role": "user", "content": []obj{u1, u2}, "cache_control": obj{"type": "ephemeral"}}}},
					// The tools alone are below the minimum: the 1h breakpoint
					// is not written, the 5m one covers everything.
					want: usage(0, tok(t, tool("read_file"), tool("grep"), sys, u1, u2), 0, 0), bps: 2},
			},
		},
		{
			name: "a 1h breakpoint before a 5m one splits the write",
			steps: []step{
				{body: body([]obj{cc(sys, "1h")}, user(u1), assistant(a1), user(cc(u2, "5m"))), want: usage(0, rest, tok(t, sys), 0), bps: 2},
				// After 30 minutes the 5m entry is gone, the 1h one is found
				// by looking back from the last breakpoint.
				{wait: 30 * time.Minute, body: body([]obj{sys}, user(u1), assistant(a1), user(cc(u2, "5m"))), want: usage(tok(t, sys), rest, 0, 0), bps: 1},
			},
		},
		{
			name: "automatic caching marks the last block",
			steps: []step{
				{body: obj{"model": "claude-test", "max_tokens": 10, "cache_control": obj{"type": "ephemeral"}, "system": []obj{sys}, "messages": []obj{user(u1)}},
					want: usage(0, tok(t, sys, u1), 0, 0), bps: 1},
				{body: obj{"model": "claude-test", "max_tokens": 10, "cache_control": obj{"type": "ephemeral"}, "system": []obj{sys}, "messages": []obj{user(u1), assistant(a1), user(u2)}},
					want: usage(tok(t, sys, u1), tok(t, a1, u2), 0, 0), bps: 1},
			},
		},
		{
			name: "look-back finds an entry 20 blocks before the breakpoint",
			steps: []step{
				{body: lookback(10), want: usage(0, upTo(10), 0, 0), bps: 1},
				{body: lookback(30), want: usage(upTo(10), upTo(30)-upTo(10), 0, 0), bps: 1},
			},
		},
		{
			name: "look-back misses an entry 21 blocks before the breakpoint",
			steps: []step{
				{body: lookback(10), want: usage(0, upTo(10), 0, 0), bps: 1},
				{body: lookback(31), want: usage(0, upTo(31), 0, 0), bps: 1},
			},
		},
		{
			name: "below the minimum nothing is written",
			steps: []step{
				{body: body([]obj{cc(small, "")}, user(u1)), want: usage(0, 0, 0, tok(t, small, u1)), bps: 1},
				{body: body([]obj{cc(small, "")}, user(u1)), want: usage(0, 0, 0, tok(t, small, u1)), bps: 1},
			},
		},
		{
			name: "a higher minimum",
			opts: CacheOptions{MinTokens: 2000},
			steps: []step{
				{body: body([]obj{cc(sys, "")}, user(cc(u1, ""), u2)), want: usage(0, 0, 0, tok(t, sys, u1, u2)), bps: 2},
				{body: body([]obj{cc(sys, "")}, user(u1, cc(u2, ""))), want: usage(0, tok(t, sys, u1, u2), 0, 0), bps: 2},
			},
		},
		{
			name: "entries expire, and a read refreshes them",
			steps: []step{
				{body: body([]obj{cc(sys, "")}, user(u1)), want: usage(0, tok(t, sys), 0, tok(t, u1)), bps: 1},
				{wait: 4 * time.Minute, body: body([]obj{cc(sys, "")}, user(u1)), want: usage(tok(t, sys), 0, 0, tok(t, u1)), bps: 1},
				// 8 minutes after the write, but 4 after the read.
				{wait: 4 * time.Minute, body: body([]obj{cc(sys, "")}, user(u1)), want: usage(tok(t, sys), 0, 0, tok(t, u1)), bps: 1},
				{wait: 5 * time.Minute, body: body([]obj{cc(sys, "")}, user(u1)), want: usage(0, tok(t, sys), 0, tok(t, u1)), bps: 1},
				{wait: 59 * time.Second, body: body([]obj{cc(sys, "")}, user(u1)), want: usage(tok(t, sys), 0, 0, tok(t, u1)), bps: 1},
			},
		},
		{
			name: "1h entries outlive 5 minutes",
			steps: []step{
				{body: body([]obj{cc(sys, "1h")}, user(u1)), want: usage(0, 0, tok(t, sys), tok(t, u1)), bps: 1},
				{wait: 59 * time.Minute, body: body([]obj{cc(sys, "1h")}, user(u1)), want: usage(tok(t, sys), 0, 0, tok(t, u1)), bps: 1},
				{wait: 61 * time.Minute, body: body([]obj{cc(sys, "1h")}, user(u1)), want: usage(0, 0, tok(t, sys), tok(t, u1)), bps: 1},
			},
		},
		{
			name: "another credential misses",
			opts: CacheOptions{Keys: []string{"k1", "k2"}},
			steps: []step{
				{key: "k1", body: body([]obj{cc(sys, "")}, user(u1)), want: usage(0, tok(t, sys), 0, tok(t, u1)), bps: 1},
				{key: "k2", body: body([]obj{cc(sys, "")}, user(u1)), want: usage(0, tok(t, sys), 0, tok(t, u1)), bps: 1},
				{key: "k1", body: body([]obj{cc(sys, "")}, user(u1)), want: usage(tok(t, sys), 0, 0, tok(t, u1)), bps: 1},
				{key: "k1", bearer: true, body: body([]obj{cc(sys, "")}, user(u1)), want: usage(0, tok(t, sys), 0, tok(t, u1)), bps: 1},
			},
		},
		{
			name: "another model misses",
			steps: []step{
				{body: body([]obj{cc(sys, "")}, user(u1)), want: usage(0, tok(t, sys), 0, tok(t, u1)), bps: 1},
				{body: obj{"model": "claude-other", "max_tokens": 10, "system": []obj{cc(sys, "")}, "messages": []obj{user(u1)}}, want: usage(0, tok(t, sys), 0, tok(t, u1)), bps: 1},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := &clock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
			tt.opts.Now = clk.Now
			c := NewCachingAnthropic(tt.opts)
			defer c.Close()
			for i, s := range tt.steps {
				clk.add(s.wait)
				key := s.key
				if key == "" {
					key = "k1"
				}
				hdr := []string{"X-Api-Key", key}
				if s.bearer {
					hdr = []string{"Authorization", "Bearer " + key}
				}
				b := enc(t, s.body)
				a := send(t, c, "POST", "/v1/messages", b, hdr...)
				if a.status != 200 {
					t.Fatalf("step %d: status %d: %s", i, a.status, a.raw)
				}
				got := a.msg.Usage
				want := s.want
				want.OutputTokens = int64(tok(t, text("ok")))
				if got.CacheCreation == nil || fmtUsage(got) != fmtUsage(want) {
					t.Errorf("step %d: usage = %s\n\twant %s", i, fmtUsage(got), fmtUsage(want))
				}
				// The whole prompt is billed once: read + write + input.
				total, err := PromptTokens(b)
				if err != nil {
					t.Fatal(err)
				}
				if billed := got.InputTokens + got.CacheCreationInputTokens + got.CacheReadInputTokens; billed != int64(total) {
					t.Errorf("step %d: billed %d tokens, PromptTokens = %d", i, billed, total)
				}
				calls := c.Calls()
				call := calls[len(calls)-1]
				wantCred := key
				if s.bearer {
					wantCred = "Bearer " + key
				}
				if call.Breakpoints != s.bps || call.PromptTokens != total || call.Status != 200 || call.Credential != wantCred ||
					fmtUsage(call.Usage) != fmtUsage(got) || !bytes.Equal(call.Body, b) || call.Method != "POST" || call.Path != "/v1/messages" {
					t.Errorf("step %d: call has %d breakpoints, %d tokens, status %d, credential %q, usage %s; want %d breakpoints, %d tokens, usage %s",
						i, call.Breakpoints, call.PromptTokens, call.Status, call.Credential, fmtUsage(call.Usage), s.bps, total, fmtUsage(got))
				}
			}
		})
	}
}

func TestCachingAnthropicErrors(t *testing.T) {
	sys := text(ToolOutput(1, 1500))
	u1 := text("hello")
	tools := func(n int) []obj {
		var out []obj
		for i := range n {
			out = append(out, cc(obj{"name": fmt.Sprintf("t%d", i), "input_schema": obj{"type": "object"}}, ""))
		}
		return out
	}
	tests := []struct {
		name    string
		method  string
		path    string
		header  []string
		body    any
		status  int
		errType string
		errMsg  string // a part of the message
	}{
		{name: "5 breakpoints", body: obj{"model": "m", "max_tokens": 5, "tools": tools(2), "system": []obj{cc(sys, "")}, "messages": []obj{user(cc(u1, "")), assistant(text("a")), user(cc(text("b"), ""))}},
			status: 400, errType: anthropic.ErrInvalidRequest, errMsg: "A maximum of 4 blocks with cache_control may be provided. Found 5."},
		{name: "automatic caching takes a fifth slot", body: obj{"model": "m", "max_tokens": 5, "cache_control": obj{"type": "ephemeral"}, "tools": tools(4), "messages": []obj{user(u1)}},
			status: 400, errType: anthropic.ErrInvalidRequest, errMsg: "Found 5."},
		{name: "4 breakpoints are fine", body: obj{"model": "m", "max_tokens": 5, "tools": tools(2), "system": []obj{cc(sys, "")}, "messages": []obj{user(cc(u1, ""))}}, status: 200},
		{name: "cache_control of another type", body: body([]obj{{"type": "text", "text": "x", "cache_control": obj{"type": "persistent"}}}, user(u1)),
			status: 400, errType: anthropic.ErrInvalidRequest, errMsg: "system.0.cache_control.type"},
		{name: "cache_control not an object", body: body(nil, obj{"role": "user", "content": []obj{{"type": "text", "text": "x", "cache_control": "ephemeral"}}}),
			status: 400, errType: anthropic.ErrInvalidRequest, errMsg: "messages.0.content.0.cache_control"},
		{name: "unknown ttl", body: body([]obj{cc(sys, "10m")}, user(u1)), status: 400, errType: anthropic.ErrInvalidRequest, errMsg: "ttl"},
		{name: "unknown cache_control member", body: body([]obj{{"type": "text", "text": "x", "cache_control": obj{"type": "ephemeral", "scope": "org"}}}, user(u1)),
			status: 400, errType: anthropic.ErrInvalidRequest, errMsg: "scope"},
		{name: "breakpoint on an empty text block", body: body(nil, user(text("a"), cc(text(""), ""))),
			status: 400, errType: anthropic.ErrInvalidRequest, errMsg: "empty text"},
		{name: "1h after 5m", body: body([]obj{cc(sys, "")}, user(cc(u1, "1h"))),
			status: 400, errType: anthropic.ErrInvalidRequest, errMsg: "ttl='1h'"},
		{name: "null cache_control is none", body: body([]obj{{"type": "text", "text": "x", "cache_control": nil}}, user(u1)), status: 200},
		{name: "no model", body: obj{"max_tokens": 5, "messages": []obj{user(u1)}}, status: 400, errType: anthropic.ErrInvalidRequest, errMsg: "model"},
		{name: "no messages", body: obj{"model": "m", "max_tokens": 5, "messages": []obj{}}, status: 400, errType: anthropic.ErrInvalidRequest, errMsg: "messages"},
		{name: "not JSON", body: []byte(`{"model":`), status: 400, errType: anthropic.ErrInvalidRequest},
		{name: "unknown key", header: []string{"X-Api-Key", "nope"}, body: body(nil, user(u1)), status: 401, errType: anthropic.ErrAuthentication},
		{name: "bearer key", header: []string{"Authorization", "Bearer good"}, body: body(nil, user(u1)), status: 200},
		{name: "other path", path: "/v1/models", method: "GET", status: 404, errType: anthropic.ErrNotFound},
		{name: "GET messages", method: "GET", status: 404, errType: anthropic.ErrNotFound},
	}
	c := NewCachingAnthropic(CacheOptions{Keys: []string{"good"}})
	defer c.Close()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method, path, header := tt.method, tt.path, tt.header
			if method == "" {
				method = "POST"
			}
			if path == "" {
				path = "/v1/messages"
			}
			if header == nil {
				header = []string{"X-Api-Key", "good"}
			}
			var b []byte
			if tt.body != nil {
				b = enc(t, tt.body)
			}
			a := send(t, c, method, path, b, header...)
			if a.status != tt.status {
				t.Fatalf("status = %d, want %d: %s", a.status, tt.status, a.raw)
			}
			if tt.status == 200 {
				return
			}
			if !strings.HasPrefix(string(a.raw), `{"type":"error","error":{"type":"`+tt.errType+`"`) || !strings.Contains(a.msg.Error.Message, tt.errMsg) {
				t.Errorf("answer = %s, want a %s error saying %q", a.raw, tt.errType, tt.errMsg)
			}
			calls := c.Calls()
			if last := calls[len(calls)-1]; last.Status != tt.status || last.Error != a.msg.Error.Message || last.Path != path {
				t.Errorf("call: status %d, error %q, path %q", last.Status, last.Error, last.Path)
			}
		})
	}
}

func TestCachingAnthropicDown(t *testing.T) {
	var down atomic.Bool
	c := NewCachingAnthropic(CacheOptions{Down: down.Load})
	defer c.Close()
	sys := text(ToolOutput(1, 1500))
	b := enc(t, body([]obj{cc(sys, "")}, user(text("hi"))))

	if a := send(t, c, "POST", "/v1/messages", b); a.status != 200 || a.msg.Usage.CacheCreationInputTokens == 0 {
		t.Fatalf("up: %d %s", a.status, a.raw)
	}
	down.Store(true)
	a := send(t, c, "POST", "/v1/messages", b)
	if a.status != 529 || a.msg.Error.Type != anthropic.ErrOverloaded || !strings.HasPrefix(string(a.raw), `{"type":"error","error":{"type":"overloaded_error"`) {
		t.Fatalf("down: %d %s", a.status, a.raw)
	}
	down.Store(false)
	// The cache outlives the outage.
	if a := send(t, c, "POST", "/v1/messages", b); a.status != 200 || a.msg.Usage.CacheReadInputTokens != int64(tok(t, sys)) {
		t.Fatalf("revived: %d %s", a.status, a.raw)
	}
	// An eviction loses it.
	if n := c.Entries(); n != 1 {
		t.Errorf("Entries = %d, want 1", n)
	}
	c.Evict()
	if a := send(t, c, "POST", "/v1/messages", b); a.status != 200 || a.msg.Usage.CacheReadInputTokens != 0 || a.msg.Usage.CacheCreationInputTokens != int64(tok(t, sys)) {
		t.Fatalf("after eviction: %d %s", a.status, a.raw)
	}
	var statuses []int
	for _, call := range c.Calls() {
		statuses = append(statuses, call.Status)
	}
	if fmt.Sprint(statuses) != "[200 529 200 200]" {
		t.Errorf("statuses = %v", statuses)
	}
}

// sseEvent is one parsed event of a stream.
type sseEvent struct {
	name string
	data map[string]any
	raw  string
}

func parseSSE(t *testing.T, b []byte) []sseEvent {
	t.Helper()
	var out []sseEvent
	for _, chunk := range strings.Split(strings.TrimSpace(string(b)), "\n\n") {
		var ev sseEvent
		for _, line := range strings.Split(chunk, "\n") {
			switch {
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.raw = strings.TrimPrefix(line, "data: ")
				if err := jsonx.Unmarshal([]byte(ev.raw), &ev.data); err != nil {
					t.Fatalf("event %q: %v", chunk, err)
				}
			default:
				t.Fatalf("unexpected line %q", line)
			}
		}
		if ev.name != ev.data["type"] {
			t.Errorf("event %q carries type %v", ev.name, ev.data["type"])
		}
		out = append(out, ev)
	}
	return out
}

func TestCachingAnthropicStreamUsage(t *testing.T) {
	sys := text(ToolOutput(1, 1500))
	u1, u2 := text(ToolOutput(2, 200)), text(ToolOutput(3, 200))
	turns := []obj{
		body([]obj{cc(sys, "1h")}, user(cc(u1, ""))),
		body([]obj{cc(sys, "1h")}, user(cc(u1, "")), assistant(text("a")), user(cc(u2, ""))),
		body([]obj{cc(sys, "1h")}, user(cc(u1, "")), assistant(text("a")), user(cc(u2, ""))),
	}
	plain := NewCachingAnthropic(CacheOptions{Answer: AgentAnswer})
	defer plain.Close()
	streamed := NewCachingAnthropic(CacheOptions{Answer: AgentAnswer})
	defer streamed.Close()
	for i, turn := range turns {
		want := send(t, plain, "POST", "/v1/messages", enc(t, turn))
		turn["stream"] = true
		got := send(t, streamed, "POST", "/v1/messages", enc(t, turn))
		if want.status != 200 || got.status != 200 {
			t.Fatalf("turn %d: status %d, %d", i, want.status, got.status)
		}
		if ct := got.header.Get("Content-Type"); ct != "text/event-stream" {
			t.Errorf("Content-Type = %q", ct)
		}
		events := parseSSE(t, got.raw)
		var names []string
		for _, ev := range events {
			if len(names) == 0 || names[len(names)-1] != ev.name {
				names = append(names, ev.name)
			}
		}
		wantNames := "[message_start ping content_block_start content_block_delta content_block_stop content_block_start content_block_delta content_block_stop message_delta message_stop]"
		if fmt.Sprint(names) != wantNames {
			t.Errorf("turn %d: events %v, want %s", i, names, wantNames)
		}

		var start struct {
			Message struct {
				Usage      anthropic.Usage `json:"usage"`
				StopReason *string         `json:"stop_reason"`
				Content    []any           `json:"content"`
			} `json:"message"`
		}
		var delta struct {
			Delta struct {
				StopReason string `json:"stop_reason"`
			} `json:"delta"`
			Usage anthropic.Usage `json:"usage"`
		}
		if err := jsonx.Unmarshal([]byte(events[0].raw), &start); err != nil {
			t.Fatal(err)
		}
		if err := jsonx.Unmarshal([]byte(events[len(events)-2].raw), &delta); err != nil {
			t.Fatal(err)
		}
		wu := want.msg.Usage
		su := start.Message.Usage
		inputSide := wu
		inputSide.OutputTokens = 1
		if fmtUsage(su) != fmtUsage(inputSide) || su.CacheCreation == nil || start.Message.StopReason != nil || len(start.Message.Content) != 0 {
			t.Errorf("turn %d: message_start usage %s, want %s", i, fmtUsage(su), fmtUsage(inputSide))
		}
		du := delta.Usage
		du.CacheCreation = wu.CacheCreation // message_delta does not repeat the split
		if fmtUsage(du) != fmtUsage(wu) {
			t.Errorf("turn %d: message_delta usage %s, want %s", i, fmtUsage(du), fmtUsage(wu))
		}
		if delta.Delta.StopReason != "tool_use" || want.msg.StopReason != "tool_use" {
			t.Errorf("turn %d: stop reasons %q, %q", i, delta.Delta.StopReason, want.msg.StopReason)
		}

		// The deltas rebuild the non-stream content.
		var text, input strings.Builder
		var toolStart map[string]any
		for _, ev := range events {
			switch ev.name {
			case "content_block_start":
				if cb := ev.data["content_block"].(map[string]any); cb["type"] == "tool_use" {
					toolStart = cb
				}
			case "content_block_delta":
				d := ev.data["delta"].(map[string]any)
				switch d["type"] {
				case "text_delta":
					text.WriteString(d["text"].(string))
				case "input_json_delta":
					input.WriteString(d["partial_json"].(string))
				}
			}
		}
		wc := want.msg.Content
		if len(wc) != 2 || text.String() != wc[0].Text || input.String() != string(wc[1].Input) ||
			toolStart["id"] != wc[1].ID || toolStart["name"] != "read_file" {
			t.Errorf("turn %d: streamed text %q, input %q, tool %v; want %+v", i, text.String(), input.String(), toolStart, wc)
		}
	}
	for i := range turns {
		p, s := plain.Calls()[i], streamed.Calls()[i]
		if fmtUsage(p.Usage) != fmtUsage(s.Usage) || p.Stream || !s.Stream {
			t.Errorf("turn %d: recorded %s (stream %v) and %s (stream %v)", i, fmtUsage(p.Usage), p.Stream, fmtUsage(s.Usage), s.Stream)
		}
	}
}

func TestCachingAnthropicAnswer(t *testing.T) {
	c := NewCachingAnthropic(CacheOptions{})
	defer c.Close()
	a := send(t, c, "POST", "/v1/messages", enc(t, body(nil, user(text("hi")))))
	m := a.msg
	if a.status != 200 || !strings.HasPrefix(m.ID, "msg_") || m.Type != "message" || m.Role != "assistant" || m.Model != "claude-test" ||
		len(m.Content) != 1 || m.Content[0].Text != "ok" || m.StopReason != "end_turn" || m.Usage.OutputTokens != int64(tok(t, text("ok"))) {
		t.Errorf("answer = %s", a.raw)
	}
	for _, member := range []string{`"stop_sequence":null`, `"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0}`, `"cache_read_input_tokens":0`} {
		if !strings.Contains(string(a.raw), member) {
			t.Errorf("answer %s lacks %s", a.raw, member)
		}
	}
}

func TestReplayConversation(t *testing.T) {
	const turns, start, end = 30, 5000, 120000
	var chat []struct {
		Function struct {
			Name        string         `json:"name"`
			Description string         `json:"description"`
			Parameters  jsontext.Value `json:"parameters"`
		} `json:"function"`
	}
	if err := jsonx.Unmarshal(AgentTools(), &chat); err != nil || len(chat) != 8 {
		t.Fatalf("AgentTools: %d tools, %v", len(chat), err)
	}
	var tools []obj
	for i, tl := range chat {
		tool := obj{"name": tl.Function.Name, "description": tl.Function.Description, "input_schema": tl.Function.Parameters}
		if i == len(chat)-1 {
			tool = cc(tool, "")
		}
		tools = append(tools, tool)
	}
	if n := tok(t, tools...); n < 1000 || n > 1500 {
		t.Errorf("AgentTools = %d tokens, want 1000-1500", n)
	}
	if n := tok(t, text(AgentSystemPrompt())); n != 2500 {
		t.Errorf("AgentSystemPrompt = %d tokens", n)
	}
	if AgentSystemPrompt() != AgentSystemPrompt() || ToolOutput(3, 500) != ToolOutput(3, 500) || ToolOutput(3, 500) == ToolOutput(4, 500) {
		t.Error("not deterministic, or the same for two turns")
	}
	for _, n := range []int{1, 7, 100, 4000} {
		if got := tok(t, text(ToolOutput(n, n))) - tok(t, text("")); got < n-1 || got > n+1 {
			t.Errorf("ToolOutput(_, %d) = %d tokens", n, got)
		}
	}

	// An Anthropic client doing what a gateway would send for an AgentChat:
	// breakpoints on the tools, the system and the last two user messages.
	c := NewCachingAnthropic(CacheOptions{Answer: AgentAnswer})
	defer c.Close()
	msgs := []obj{user(text(replayTask + ToolOutput(0, ReplayGrowth(0, turns, start, end))))}
	prev := 0
	for turn := range turns {
		sent := make([]obj, len(msgs))
		copy(sent, msgs)
		marked := 0
		for i := len(sent) - 1; i >= 0 && marked < 2; i-- {
			if sent[i]["role"] == "user" {
				blocks := sent[i]["content"].([]obj)
				blocks = append(blocks[:len(blocks)-1:len(blocks)-1], cc(blocks[len(blocks)-1], ""))
				sent[i] = obj{"role": "user", "content": blocks}
				marked++
			}
		}
		b := obj{"model": "claude-test", "max_tokens": 1024, "tools": tools, "system": []obj{cc(text(AgentSystemPrompt()), "")}, "messages": sent}
		a := send(t, c, "POST", "/v1/messages", enc(t, b))
		if a.status != 200 {
			t.Fatalf("turn %d: %s", turn, a.raw)
		}
		u := a.msg.Usage
		total := int(u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens)
		ideal := start + (end-start)*turn/(turns-1)
		if d := total - ideal; d < -ideal/50 || d > ideal/50 {
			t.Errorf("turn %d: prompt %d tokens, want about %d", turn, total, ideal)
		}
		if turn > 0 && (int(u.CacheReadInputTokens) != prev || u.InputTokens != 0) {
			t.Errorf("turn %d: usage %+v, want a read of the previous prompt (%d)", turn, u, prev)
		}
		prev = total

		// The answer and the tool result, as a client appends them.
		var blocks []obj
		var id string
		for _, bl := range a.msg.Content {
			raw := enc(t, &bl)
			var o obj
			if err := jsonx.Unmarshal(raw, &o); err != nil {
				t.Fatal(err)
			}
			blocks = append(blocks, o)
			if bl.Type == "tool_use" {
				id = bl.ID
			}
		}
		msgs = append(msgs, assistant(blocks...), user(obj{"type": "tool_result", "tool_use_id": id, "content": ToolOutput(turn+1, ReplayGrowth(turn+1, turns, start, end))}))
	}
}

func TestAgentChat(t *testing.T) {
	a := NewAgentChat("gpt-test", 30, 5000, 120000)
	var req struct {
		Model    string           `json:"model"`
		Messages []obj            `json:"messages"`
		Tools    []jsontext.Value `json:"tools"`
		Stream   bool             `json:"stream"`
		Options  obj              `json:"stream_options"`
	}
	if err := jsonx.Unmarshal(a.Request(true), &req); err != nil {
		t.Fatal(err)
	}
	if req.Model != "gpt-test" || len(req.Messages) != 2 || req.Messages[0]["role"] != "system" || len(req.Tools) != 8 || !req.Stream || req.Options["include_usage"] != true {
		t.Errorf("request = %+v", req)
	}
	err := a.Reply([]byte(`{"role":"assistant","content":"Let me read it.","refusal":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a.go\"}"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Messages, req.Stream = nil, false
	if err := jsonx.Unmarshal(a.Request(false), &req); err != nil {
		t.Fatal(err)
	}
	if a.Turn != 1 || len(req.Messages) != 4 || req.Stream {
		t.Fatalf("after a reply: turn %d, %d messages", a.Turn, len(req.Messages))
	}
	asst, tool := req.Messages[2], req.Messages[3]
	if asst["role"] != "assistant" || asst["refusal"] != nil || tool["role"] != "tool" || tool["tool_call_id"] != "call_1" ||
		tool["content"] != ToolOutput(1, ReplayGrowth(1, 30, 5000, 120000)) {
		t.Errorf("messages = %v / %.80v", asst, tool)
	}
	if err := a.Reply([]byte(`{"role":"assistant","content":"Done."}`)); err != nil || len(a.Messages) != 6 {
		t.Errorf("a reply without tool calls: %v, %d messages", err, len(a.Messages))
	}
}
