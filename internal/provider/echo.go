package provider

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/clock"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/sse"
)

// echoType is the built-in echo provider.
var echoType = &Type{
	Name:   config.TypeEcho,
	Config: config.ProviderType{ModelOptional: true},
	New:    func(p config.Provider) (Provider, error) { return NewEcho(p.Name), nil },
}

// Echo is the built-in provider: it answers with the text of the last user
// message, in the Anthropic, Chat Completions or Gemini dialect, whichever it
// was asked in (clients of other dialects are translated to Chat
// Completions), streamed word by word when the request asks for a stream,
// with usage estimated from the text (about four bytes a token). It needs
// no network and is safe for concurrent use.
type Echo struct{ name string }

var (
	_ Provider = (*Echo)(nil)
	_ Polyglot = (*Echo)(nil)
)

// NewEcho returns an echo provider with the given name.
func NewEcho(name string) *Echo { return &Echo{name: name} }

// Name implements Provider.
func (e *Echo) Name() string { return e.name }

// Dialect implements Provider.
func (e *Echo) Dialect() *dialect.Dialect { return dialect.Chat }

// Speaks implements Polyglot: echo answers Anthropic and Gemini requests
// natively too.
func (e *Echo) Speaks(d *dialect.Dialect) bool {
	return d == dialect.Chat || d == dialect.Messages || d == dialect.Gemini
}

// Serves implements Server: the echo makes answers, not vectors, images
// or audio.
func (e *Echo) Serves(op dialect.Op) bool { return op != dialect.Embed && !op.PassThroughOnly() }

// Do implements Provider.
func (e *Echo) Do(ctx context.Context, r *Request) (*http.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	body := r.Body.Bytes()
	model := gjson.GetBytes(body, "model").String()
	text := lastUserText(body)
	in := estimateTokens(body)
	out := estimateTokens([]byte(text))
	switch {
	case r.Dialect == dialect.Gemini && r.Op == dialect.CountTokens:
		return echoGeminiCount(in), nil
	case r.Dialect == dialect.Gemini:
		return echoGemini(r, body, in), nil
	case r.Op == dialect.CountTokens:
		resp := jsonResponse(fmt.Appendf(nil, `{"input_tokens":%d}`, in))
		resp.Header.Set("Tollgate-Token-Count", "estimate") // counted from the text's length, as translated counts are
		return resp, nil
	case r.Dialect == dialect.Messages && r.Stream:
		return streamResponse(anthropicEvents(model, text, in, out)), nil
	case r.Dialect == dialect.Messages:
		msg := map[string]any{
			"id": "msg_" + randomID(), "type": "message", "role": "assistant", "model": model,
			"content":       []any{map[string]any{"type": "text", "text": text}},
			"stop_reason":   "end_turn",
			"stop_sequence": nil,
			"usage": map[string]any{
				"input_tokens": in, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": out,
			},
		}
		b, _ := jsonx.Marshal(msg)
		return jsonResponse(b), nil
	case r.Stream:
		withUsage := gjson.GetBytes(body, "stream_options.include_usage").Bool()
		return streamResponse(openAIChunks(model, text, in, out, withUsage)), nil
	default:
		b, _ := jsonx.Marshal(map[string]any{
			"id": "chatcmpl-" + randomID(), "object": "chat.completion", "created": clock.Now().Unix(), "model": model,
			"choices": []any{map[string]any{
				"index":         0,
				"message":       map[string]any{"role": "assistant", "content": text, "refusal": nil},
				"logprobs":      nil,
				"finish_reason": "stop",
			}},
			"usage": map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out},
		})
		return jsonResponse(b), nil
	}
}

func anthropicEvents(model, text string, in, out int64) [][]byte {
	id := "msg_" + randomID()
	start, _ := jsonx.Marshal(map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": in, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 1},
	}})
	events := [][]byte{
		sse.AppendEvent(nil, "message_start", start),
		sse.AppendEvent(nil, "content_block_start", []byte(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)),
		sse.AppendEvent(nil, "ping", []byte(`{"type":"ping"}`)),
	}
	for _, w := range words(text) {
		d, _ := jsonx.Marshal(map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": w}})
		events = append(events, sse.AppendEvent(nil, "content_block_delta", d))
	}
	return append(events,
		sse.AppendEvent(nil, "content_block_stop", []byte(`{"type":"content_block_stop","index":0}`)),
		sse.AppendEvent(nil, "message_delta", fmt.Appendf(nil, `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":%d}}`, out)),
		sse.AppendEvent(nil, "message_stop", []byte(`{"type":"message_stop"}`)),
	)
}

func openAIChunks(model, text string, in, out int64, withUsage bool) [][]byte {
	id, created := "chatcmpl-"+randomID(), clock.Now().Unix()
	chunk := func(delta map[string]any, finish any) []byte {
		c := map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}},
		}
		if withUsage {
			c["usage"] = nil
		}
		b, _ := jsonx.Marshal(c)
		return sse.AppendEvent(nil, "", b)
	}
	events := [][]byte{chunk(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil)}
	for _, w := range words(text) {
		events = append(events, chunk(map[string]any{"content": w}, nil))
	}
	events = append(events, chunk(map[string]any{}, "stop"))
	if withUsage {
		b, _ := jsonx.Marshal(map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": model, "choices": []any{},
			"usage": map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out},
		})
		events = append(events, sse.AppendEvent(nil, "", b))
	}
	return append(events, []byte("data: [DONE]\n\n"))
}

// lastUserText is the text of the last user message of either dialect: a
// string content, or the text blocks/parts of an array content.
func lastUserText(body []byte) string {
	msgs := gjson.GetBytes(body, "messages").Array()
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Get("role").String() != "user" {
			continue
		}
		c := msgs[i].Get("content")
		if c.Type == gjson.String {
			return c.String()
		}
		var parts []string
		for _, p := range c.Array() {
			if p.Get("type").String() == "text" {
				parts = append(parts, p.Get("text").String())
			}
		}
		if len(parts) > 0 {
			return strings.Join(parts, "\n")
		}
		return "(the last user message has no text)"
	}
	return "(no user message)"
}

// words splits text into stream deltas that concatenate back to text.
func words(text string) []string {
	var out []string
	for len(text) > 0 {
		i := strings.IndexByte(text, ' ')
		if i < 0 {
			out = append(out, text)
			break
		}
		out = append(out, text[:i+1])
		text = text[i+1:]
	}
	return out
}

func estimateTokens(b []byte) int64 { return int64(len(b)+3)/4 + 1 }

func randomID() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func jsonResponse(b []byte) *http.Response {
	return &http.Response{
		StatusCode:    http.StatusOK,
		Header:        http.Header{"Content-Type": {"application/json"}, "Content-Length": {strconv.Itoa(len(b))}},
		Body:          io.NopCloser(strings.NewReader(string(b))),
		ContentLength: int64(len(b)),
	}
}

func streamResponse(events [][]byte) *http.Response {
	return &http.Response{
		StatusCode:    http.StatusOK,
		Header:        http.Header{"Content-Type": {"text/event-stream"}, "Cache-Control": {"no-cache"}},
		Body:          &eventReader{events: events},
		ContentLength: -1,
	}
}

// eventReader yields at most one event per Read, so a stream relayed from it
// reaches the client event by event, as from a real upstream.
type eventReader struct {
	events [][]byte
	off    int
}

func (r *eventReader) Read(p []byte) (int, error) {
	if len(r.events) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.events[0][r.off:])
	if r.off += n; r.off == len(r.events[0]) {
		r.events, r.off = r.events[1:], 0
	}
	return n, nil
}

func (r *eventReader) Close() error { return nil }
