package gateway_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// A stream's events reach the client whole and in order whatever their
// sizes: the relay waits on a small buffer, moves to a pooled one when a
// read fills it, grows past that for a large event, and goes back to the
// small one between events; the upstream client parks its read buffer
// while it waits.
func TestStreamEventsOfEverySizeRelayed(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sizes []int // content bytes of each event
		gap   time.Duration
	}{
		{"small events", []int{1, 20, 100, 300}, 0},
		{"events around the wait buffer", []int{400, 511, 512, 513, 700, 10}, 0},
		{"events past the pooled buffer", []int{10, 4000, 5000, 10, 40000, 10, 100000, 3}, 0},
		{"small events with pauses", []int{5, 50, 300, 20}, time.Millisecond},
		{"large events with pauses", []int{600, 9000, 5, 70000, 5}, time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var evs [][]byte
			var want []string
			for i, n := range tc.sizes {
				text := fmt.Sprintf("<%d:%s>", i, strings.Repeat(string(rune('a'+i%26)), n))
				want = append(want, text)
				evs = append(evs, fmt.Appendf(nil, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":null}]}\n\n", text))
			}
			evs = append(evs,
				[]byte(`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}`+"\n\n"),
				[]byte("data: [DONE]\n\n"))
			e := newEnv(t, nil, upstreamtest.Static(upstreamtest.Reply{Events: evs, Gap: tc.gap}), "")
			for range 2 { // the second on a pooled upstream connection
				resp := e.do("POST", "/v1/chat/completions", `{"model":"gpt-x","stream":true,"messages":[{"role":"user","content":"hi"}]}`, openAIAuth...)
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK {
					t.Fatalf("status %d, %v: %.200s", resp.StatusCode, err, body)
				}
				got := string(body)
				for _, text := range want {
					i := strings.Index(got, fmt.Sprintf("%q", text))
					if i < 0 {
						t.Fatalf("event with %.20q… missing or out of order", text)
					}
					got = got[i+len(text):]
				}
				if !strings.HasSuffix(got, "data: [DONE]\n\n") {
					t.Errorf("stream ends %q, want data: [DONE]", got[max(0, len(got)-40):])
				}
			}
		})
	}
}
