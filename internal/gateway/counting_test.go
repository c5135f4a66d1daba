package gateway

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/tokens"
)

func promptBody(content string) []byte {
	return []byte(`{"model":"m","messages":[{"role":"user","content":"` + content + `"}]}`)
}

// leavingClient returns a context and the OpenAI dialect whose prompt
// counting ends the context as it begins: a client that leaves while its
// prompt is counted.
func leavingClient() (context.Context, *dialect.Dialect) {
	ctx, cancel := context.WithCancel(context.Background())
	d := *dialect.Chat
	d.CountPrompt = func(c *tokens.Counter, body []byte) {
		cancel()
		dialect.Chat.CountPrompt(c, body)
	}
	return ctx, &d
}

// TestCountTokensStopsWhenClientLeaves: a local count_tokens stops when its
// client leaves, before or while counting, and answers nothing.
func TestCountTokensStopsWhenClientLeaves(t *testing.T) {
	left, cancel := context.WithCancel(context.Background())
	cancel()
	leaving, d := leavingClient()
	body := promptBody(strings.Repeat("The quick brown fox jumps over the lazy dog. ", 3<<20/45))
	for _, tc := range []struct {
		name string
		ctx  context.Context
		d    *dialect.Dialect
	}{
		{"before", left, dialect.Chat},
		{"while counting", leaving, d},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := &exchange{dialect: tc.d, ctx: tc.ctx}
			w := httptest.NewRecorder()
			c := &call{w: w, r: httptest.NewRequestWithContext(tc.ctx, "POST", "/v1/chat/completions/count_tokens", nil), x: x, body: body}
			err := (&Gateway{}).countTokensEstimate(c)
			if !errors.Is(err, context.Canceled) || !x.clientGone {
				t.Fatalf("err %v, client gone %v; want the context's end", err, x.clientGone)
			}
			if x.status != 0 || w.Body.Len() != 0 {
				t.Errorf("answered %d: %s", x.status, w.Body)
			}
		})
	}
}

// TestPromptEstimateBounded: the prompt estimate of a stream whose client
// left stops counting when its own context ends, and then estimates the
// rest of the prompt at no less than a token per four bytes (one letter
// repeated is a token per eight bytes when counted); a context ended
// before counting gets the reservation's estimate.
func TestPromptEstimateBounded(t *testing.T) {
	prompt := strings.Repeat("a", 1<<20)
	body := promptBody(prompt)
	left, cancel := context.WithCancel(context.Background())
	cancel()
	if got, want := promptTokens(left, dialect.Chat, body), reserveInputTokens(body); got != want {
		t.Errorf("ended before: %d tokens, want the reservation's %d", got, want)
	}
	counted := promptTokens(context.Background(), dialect.Chat, body)
	if counted > int64(len(prompt))/7 {
		t.Fatalf("counted %d tokens, want a token per eight bytes", counted)
	}
	ctx, d := leavingClient()
	if cut := promptTokens(ctx, d, body); cut < int64(len(prompt))/4 {
		t.Errorf("ended while counting: %d tokens, want at least %d", cut, len(prompt)/4)
	}
}
