package translate

import (
	"context"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/promptcache"
)

func TestCacheHints(t *testing.T) {
	long := strings.Repeat("context ", 700) // about 1,400 tokens
	chat := `{"model":"m","messages":[{"role":"system","content":"` + long + `"},{"role":"user","content":"hi"}]%s}`
	resp := `{"model":"m","instructions":"` + long + `","input":"hi"%s}`
	msgs := `{"model":"m","max_tokens":5,"system":"` + long + `","messages":[{"role":"user","content":"hi"}]%s}`
	gem := `{"systemInstruction":{"parts":[{"text":"` + long + `"}]},"contents":[{"role":"user","parts":[{"text":"hi"}]}]%s}`
	auto := Cache{Breakpoints: true, Options: promptcache.Options{}, Key: "tollgate-k", AddKey: true}
	client := Cache{Key: "tollgate-k"} // mode client or off: the tenant's key, nothing added
	cases := []struct {
		name    string
		f       func(context.Context, []byte, Target) ([]byte, *Plan, error)
		body    string
		extra   string
		cache   Cache
		caps    Caps
		path    string // where the hint shows in the upstream body
		want    string
		placed  int
		reports bool // the plan reports placing breakpoints
	}{
		{"chat to messages", ChatBodyToMessages, chat, "", auto, Caps{}, "system.0.cache_control.type", "ephemeral", 2, true},
		{"chat to messages, mode off", ChatBodyToMessages, chat, "", Cache{}, Caps{}, "system.0.cache_control", "", 0, false},
		{"chat to messages, a model minimum above the prompt", ChatBodyToMessages, chat, "", Cache{Breakpoints: true, Options: promptcache.Options{MinTokens: 4096}}, Caps{}, "system.0.cache_control", "", 0, true},
		{"responses to messages, 1h", ResponsesBodyToMessages, resp, "", Cache{Breakpoints: true, Options: promptcache.Options{TTL: promptcache.TTL1h}}, Caps{}, "system.0.cache_control.ttl", "1h", 2, true},
		{"chat to responses: the gateway's key", ChatBodyToResponses, chat, "", auto, Caps{}, "prompt_cache_key", "tollgate-k", 0, false},
		{"chat to responses: the client's key scoped", ChatBodyToResponses, chat, `,"prompt_cache_key":"mine"`, auto, Caps{}, "prompt_cache_key", "tollgate-k", 0, false},
		{"chat to responses: the client's key scoped, mode client", ChatBodyToResponses, chat, `,"prompt_cache_key":"mine"`, client, Caps{}, "prompt_cache_key", "tollgate-k", 0, false},
		{"chat to responses: no key added, mode client", ChatBodyToResponses, chat, "", client, Caps{}, "prompt_cache_key", "", 0, false},
		{"responses to chat: the client's key scoped", ResponsesBodyToChat, resp, `,"prompt_cache_key":"mine"`, auto, Caps{}, "prompt_cache_key", "tollgate-k", 0, false},
		{"messages to responses: the user's key scoped", MessagesBodyToResponses, msgs, `,"metadata":{"user_id":"u1"}`, client, Caps{}, "prompt_cache_key", "tollgate-k", 0, false},
		{"messages to chat: the gateway's key", MessagesBodyToChat, msgs, "", auto, Caps{}, "prompt_cache_key", "tollgate-k", 0, false},
		{"messages to responses: the gateway's key", MessagesBodyToResponses, msgs, "", auto, Caps{}, "prompt_cache_key", "tollgate-k", 0, false},
		{"an upstream that refuses the key", MessagesBodyToChat, msgs, "", auto, Caps{NoPromptCacheKey: true}, "prompt_cache_key", "", 0, false},
		{"gemini to messages", GeminiBodyToMessages, gem, "", auto, Caps{}, "system.0.cache_control.type", "ephemeral", 2, true},
		{"gemini to messages, mode off", GeminiBodyToMessages, gem, "", Cache{}, Caps{}, "system.0.cache_control", "", 0, false},
		{"gemini to chat: the gateway's key", GeminiBodyToChat, gem, "", auto, Caps{}, "prompt_cache_key", "tollgate-k", 0, false},
		{"gemini to responses: the gateway's key", GeminiBodyToResponses, gem, "", auto, Caps{}, "prompt_cache_key", "tollgate-k", 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := []byte(strings.Replace(c.body, "%s", c.extra, 1))
			out, p, err := c.f(t.Context(), body, Target{Model: "up", Caps: c.caps, Cache: c.cache})
			if err != nil {
				t.Fatal(err)
			}
			if got := gjson.GetBytes(out, c.path).Str; got != c.want {
				t.Errorf("%s = %q, want %q\n%s", c.path, got, c.want, out[:min(len(out), 400)])
			}
			if p.PlacedBreakpoints != c.reports || p.CacheBreakpoints != c.placed {
				t.Errorf("plan: placed %v, %d breakpoints; want %v, %d", p.PlacedBreakpoints, p.CacheBreakpoints, c.reports, c.placed)
			}
			if strings.Contains(strings.Join(p.Dropped(), ","), "prompt_cache_key") {
				t.Errorf("prompt_cache_key reported dropped: %v", p.Dropped())
			}
		})
	}
}
