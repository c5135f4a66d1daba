package gateway

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/limiter"
)

func TestReserveInputTokens(t *testing.T) {
	image := strings.Repeat("iVBORw0KGgoAAAANSUhEUgAA", 50_000) // 1.2 MB of base64
	text := strings.Repeat("the quick brown fox jumps over the lazy dog ", 100)
	for _, tc := range []struct {
		name     string
		body     string
		min, max int64
	}{
		{"text", `{"messages":[{"role":"user","content":"` + text + `"}]}`, 1100, 1200},
		// A picture weighs a couple of thousand tokens, not 300,000.
		{"image", `{"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","data":"` + image + `"}}]}]}`, 6000, 7000},
		{"short base64-like words stay text", `{"a":"` + strings.Repeat("abcd ", 1000) + `"}`, 1250, 1260},
		{"data URL", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,` + image + `"}}]}]}`, 6000, 7000},
		// Letters and digits without white space are no picture: a tokenizer
		// counts 1,356,505 tokens in 2 MB of them; at least half the bytes.
		{"2 MB without white space", `{"messages":[{"role":"user","content":"` + alnum(2<<20) + `"}]}`, 1 << 20, 1<<20 + 100},
		{"long words outside a data member", `{"messages":[{"role":"user","content":"x ` + image + `"}]}`, 600_000, 600_100},
	} {
		if got := reserveInputTokens([]byte(tc.body)); got < tc.min || got > tc.max {
			t.Errorf("%s: %d tokens, want %d–%d", tc.name, got, tc.min, tc.max)
		}
	}
}

// alnum is n bytes of letters and digits, as a tokenizer sees random text.
func alnum(n int) string {
	const abc = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = abc[(i*7919+i/62)%len(abc)]
	}
	return string(b)
}

func TestQuotaHeaders(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	st := limiter.Status{
		Requests: &limiter.Quota{Limit: 60, Remaining: 59, Reset: now.Add(1500 * time.Millisecond)},
		Tokens:   &limiter.Quota{Limit: 1000, Remaining: 0},
		Budget:   &limiter.Quota{Limit: 25e9, Remaining: 12_500_000_001, Reserved: 300_000_000, Reset: now.Add(24 * time.Hour)},
	}
	h := http.Header{}
	quotaHeaders(h, dialect.Messages, st, now)
	want := map[string]string{
		"Anthropic-Ratelimit-Requests-Limit": "60", "Anthropic-Ratelimit-Requests-Remaining": "59",
		"Anthropic-Ratelimit-Requests-Reset": "2026-11-22T10:00:02Z", "Anthropic-Ratelimit-Tokens-Limit": "1000",
		"Anthropic-Ratelimit-Tokens-Remaining": "0", "Tollgate-Budget-Limit-Usd": "25",
		"Tollgate-Budget-Remaining-Usd": "12.500000001", "Tollgate-Budget-Reserved-Usd": "0.3", "Tollgate-Budget-Reset": "2026-11-23T10:00:00Z",
	}
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
	if len(h) != len(want) {
		t.Errorf("headers: %v", h)
	}
	h = http.Header{}
	quotaHeaders(h, dialect.Chat, st, now)
	if h.Get("X-Ratelimit-Reset-Requests") != "1.5s" || h.Get("X-Ratelimit-Remaining-Tokens") != "0" || h.Get("X-Ratelimit-Limit-Requests") != "60" {
		t.Errorf("OpenAI headers: %v", h)
	}
}
