package dialect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/affinity"
)

func keyOf(t *testing.T, d *Dialect, body string) affinity.Key {
	t.Helper()
	s, err := Scan([]byte(body), &d.Fields)
	if err != nil {
		t.Fatal(err)
	}
	k, _ := d.Affinity(&s)
	return k
}

func TestAffinity(t *testing.T) {
	type turns struct {
		d          *Dialect
		first      string // a conversation's first request
		later      string // a later request of the same conversation
		other      string // another conversation
		sameSource string // another conversation with the same explicit key: same key
	}
	for name, c := range map[string]turns{
		"chat by its start": {Chat,
			`{"model":"m","tools":[{"type":"function","function":{"name":"f"}}],"messages":[{"role":"system","content":"s"},{"role":"user","content":"task"}]}`,
			`{"model":"m","tools":[{"type":"function","function":{"name":"f"}}],"messages":[{"role":"system","content":"s"},{"role":"user","content":"task"},{"role":"assistant","content":"a"},{"role":"user","content":"more"}],"stream":true}`,
			`{"model":"m","tools":[{"type":"function","function":{"name":"f"}}],"messages":[{"role":"system","content":"s"},{"role":"user","content":"another task"}]}`, ""},
		"chat by prompt_cache_key": {Chat,
			`{"model":"m","prompt_cache_key":"k1","user":"u","messages":[{"role":"user","content":"a"}]}`,
			`{"model":"m","prompt_cache_key":"k1","user":"u","messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]}`,
			`{"model":"m","prompt_cache_key":"k2","user":"u","messages":[{"role":"user","content":"a"}]}`,
			`{"model":"m","prompt_cache_key":"k1","messages":[{"role":"user","content":"other"}]}`},
		"chat by user": {Chat,
			`{"model":"m","user":"u1","messages":[{"role":"user","content":"a"}]}`,
			`{"model":"m","user":"u1","messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}]}`,
			`{"model":"m","user":"u2","messages":[{"role":"user","content":"a"}]}`,
			`{"model":"m","user":"u1","messages":[{"role":"user","content":"x"}]}`},
		"messages by metadata.user_id": {Messages,
			`{"model":"m","max_tokens":1,"metadata":{"user_id":"user_x_session_1"},"messages":[{"role":"user","content":"a"}]}`,
			`{"model":"m","max_tokens":1,"metadata":{"user_id":"user_x_session_1"},"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"}]}`,
			`{"model":"m","max_tokens":1,"metadata":{"user_id":"user_x_session_2"},"messages":[{"role":"user","content":"a"}]}`,
			`{"model":"m","max_tokens":1,"metadata":{"user_id":"user_x_session_1"},"system":"s","messages":[{"role":"user","content":"z"}]}`},
		"messages by its start": {Messages,
			`{"model":"m","max_tokens":1,"system":"s","messages":[{"role":"user","content":"a"}]}`,
			`{"model":"m","max_tokens":9,"system":"s","messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]}`,
			`{"model":"m","max_tokens":1,"system":"s2","messages":[{"role":"user","content":"a"}]}`, ""},
		"responses by its start": {Responses,
			`{"model":"m","instructions":"i","input":"hello"}`,
			`{"model":"m","instructions":"i","input":[{"type":"message","role":"user","content":"hello"},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"}]}`,
			`{"model":"m","instructions":"j","input":"hello"}`, ""},
		"responses by prompt_cache_key": {Responses,
			`{"model":"m","prompt_cache_key":"thread-1","input":"a"}`,
			`{"model":"m","prompt_cache_key":"thread-1","input":[{"role":"user","content":"a"},{"role":"user","content":"b"}]}`,
			`{"model":"m","prompt_cache_key":"thread-2","input":"a"}`,
			`{"model":"m","prompt_cache_key":"thread-1","input":"zzz"}`},
	} {
		t.Run(name, func(t *testing.T) {
			first, later, other := keyOf(t, c.d, c.first), keyOf(t, c.d, c.later), keyOf(t, c.d, c.other)
			if first == 0 || first != later {
				t.Errorf("a conversation's requests have keys %x and %x", first, later)
			}
			if first == other {
				t.Errorf("two conversations share key %x", first)
			}
			if c.sameSource != "" && keyOf(t, c.d, c.sameSource) != first {
				t.Error("the explicit key does not decide")
			}
		})
	}
	if keyOf(t, Responses, `{"model":"m","input":"a"}`) == keyOf(t, Responses, `{"model":"n","input":"a"}`) {
		t.Error("the model is not part of the key")
	}
}

// The client's own prompt_cache_key is replaced by the gateway's (derived
// from it within the client's tenant) in every mode; the gateway's is
// added where the client sent none only when AddKey says so.
func TestPromptCacheKeyHint(t *testing.T) {
	add := CacheHints{Key: "tollgate-1", AddKey: true}
	cases := []struct {
		name, body string
		h          CacheHints
		want       string // prompt_cache_key sent; "-" for the body unchanged
	}{
		{"added", `{"model":"m","input":"a"}`, add, "tollgate-1"},
		{"not added", `{"model":"m","input":"a"}`, CacheHints{Key: "tollgate-1"}, "-"},
		{"the client's replaced", `{"model":"m","prompt_cache_key":"mine"}`, CacheHints{Key: "tollgate-1"}, "tollgate-1"},
		{"the client's replaced, auto", `{"model":"m","prompt_cache_key":"mine"}`, add, "tollgate-1"},
		{"an empty key left", `{"model":"m","prompt_cache_key":""}`, add, "-"},
		{"a key that is no string left", `{"model":"m","prompt_cache_key":7}`, add, "-"},
		{"no key to send", `{"model":"m","prompt_cache_key":"mine"}`, CacheHints{AddKey: true}, "-"},
	}
	for _, d := range []*Dialect{Chat, Responses} {
		for _, c := range cases {
			out, n, err := d.CacheHints([]byte(c.body), c.h)
			if err != nil || n != -1 {
				t.Fatalf("%s, %s: %d, %v", d, c.name, n, err)
			}
			if c.want == "-" {
				if out != nil {
					t.Errorf("%s, %s: sent %s, want the client's bytes", d, c.name, out)
				}
			} else if got := gjson.GetBytes(out, "prompt_cache_key").Str; got != c.want {
				t.Errorf("%s, %s: prompt_cache_key %q, want %q", d, c.name, got, c.want)
			}
		}
	}
	msgs := []byte(`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"}]}`)
	if out, n, err := Messages.CacheHints(msgs, CacheHints{Breakpoints: true}); err != nil || n != 0 || out != nil {
		t.Errorf("anthropic, a short prompt: %s, %d, %v", out, n, err)
	}
	if out, n, err := Messages.CacheHints(msgs, CacheHints{Key: "tollgate-1"}); err != nil || n != -1 || out != nil {
		t.Errorf("anthropic, no breakpoints asked for: %s, %d, %v", out, n, err)
	}
}

// BenchmarkAffinity keys a 100 KB agent request (its scan is the
// gateway's anyway): the model, tools, system messages and first user
// turn hashed.
func BenchmarkAffinity(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"model":"m","tools":[`)
	for i := range 8 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"type":"function","function":{"name":"tool_%d","description":"%s"}}`, i, strings.Repeat("Reads things. ", 30))
	}
	sb.WriteString(`],"messages":[{"role":"system","content":"` + strings.Repeat("You are a coding agent. ", 300) + `"},{"role":"user","content":"Fix the bug"}`)
	for i := 0; sb.Len() < 100<<10; i++ {
		fmt.Fprintf(&sb, `,{"role":"tool","tool_call_id":"call_%d","content":"%s"}`, i, strings.Repeat("package main // code ", 60))
	}
	sb.WriteString(`]}`)
	s, err := Scan([]byte(sb.String()), &Chat.Fields)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_, _ = Chat.Affinity(&s)
	}
}

// BenchmarkAffinityLongFirstTurn keys a request whose first user turn is
// 100 KB, the worst case: all of it is hashed.
func BenchmarkAffinityLongFirstTurn(b *testing.B) {
	body := `{"model":"m","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"` + strings.Repeat("Please review the service. ", 4000) + `"}]}`
	s, err := Scan([]byte(body), &Chat.Fields)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		_, _ = Chat.Affinity(&s)
	}
}

// FuzzValueEnd holds valueEnd to the JSON decoder: on valid JSON it finds
// where the first value ends, and never reads past its limit.
func FuzzValueEnd(f *testing.F) {
	for _, s := range []string{`{"a":"b\"}"}, 1`, `[1,[2,{"x":[]}]] `, `"str\\"`, `123,4`, `true]`, `{"role":"user","content":"` + strings.Repeat("x", 50) + `"}`} {
		f.Add([]byte(s), 10)
	}
	f.Fuzz(func(t *testing.T, b []byte, limit int) {
		if limit < 0 {
			limit = -limit
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		var v json.RawMessage
		if dec.Decode(&v) != nil || len(bytes.TrimLeft(b, " \t\r\n")) != len(b) {
			return
		}
		want := int(dec.InputOffset())
		if rest := b[want:]; len(rest) > 0 && !bytes.ContainsRune([]byte(" \t\r\n,]}"), rune(rest[0])) {
			return // not how values follow each other inside JSON ("00")
		}
		n, whole := valueEnd(b, limit)
		switch { // a scalar that ends at the limit may go either way: its end is the next byte
		case whole && n != want, want < limit && !whole:
			t.Fatalf("%q: end %d (%v), want %d", b, n, whole, want)
		case want > limit && (whole || n > limit):
			t.Fatalf("%q limit %d: end %d (%v), want a cut value", b, limit, n, whole)
		}
	})
}
