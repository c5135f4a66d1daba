package dialect

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/tollgate/tollgate/internal/affinity"
	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/meter"
	"github.com/tollgate/tollgate/internal/promptcache"
	"github.com/tollgate/tollgate/internal/scrub"
	"github.com/tollgate/tollgate/internal/sse"
)

// Anthropic is the Messages API: POST /v1/messages, named-event SSE.
var Messages = &Dialect{
	Name: "anthropic",
	Endpoints: []Endpoint{
		{Path: "/v1/messages", Op: Generate, RequireMaxOutput: true},
		{Path: "/v1/messages/count_tokens", Op: CountTokens},
	},
	Claims: func(r *http.Request) bool {
		return r.Header.Get("Anthropic-Version") != "" || strings.HasPrefix(r.URL.Path, "/v1/messages")
	},
	RequiredHeader: "Anthropic-Version",
	Fields:         Fields{Conversation: "messages", MaxOutput: []string{"max_tokens"}, Keep: []string{"metadata", "tools", "system"}},
	ForwardHeaders: []string{"Anthropic-Version", "Anthropic-Beta"},
	BetaHeader:     "Anthropic-Beta",
	Prepare:        prepareAnthropic,
	Affinity:       anthropicAffinity,
	CacheHints: func(body []byte, h CacheHints) ([]byte, int, error) {
		if !h.Breakpoints {
			return nil, -1, nil
		}
		return promptcache.PlaceRaw(body, h.Options)
	},
	RequestIDHeader: "Request-Id",
	Error:           anthropicError,
	RateLimit: RateLimitHeaders{
		Requests: [3]string{"Anthropic-Ratelimit-Requests-Limit", "Anthropic-Ratelimit-Requests-Remaining", "Anthropic-Ratelimit-Requests-Reset"},
		Tokens:   [3]string{"Anthropic-Ratelimit-Tokens-Limit", "Anthropic-Ratelimit-Tokens-Remaining", "Anthropic-Ratelimit-Tokens-Reset"},
		Reset:    func(at, _ time.Time) string { return CeilSecond(at).Format(time.RFC3339) },
		Prefix:   "Anthropic-Ratelimit-",
	},
	ModelList: func(ids []string, created time.Time) any {
		data := make([]any, 0, len(ids))
		for _, id := range ids {
			data = append(data, anthropicModel(id, created))
		}
		page := map[string]any{"data": data, "has_more": false, "first_id": nil, "last_id": nil}
		if len(ids) > 0 {
			page["first_id"], page["last_id"] = ids[0], ids[len(ids)-1]
		}
		return page
	},
	Model: func(id string, created time.Time) any { return anthropicModel(id, created) },
	Usage: func(u *meter.Usage, body []byte) {
		if v := gjson.GetBytes(body, "usage"); v.IsObject() {
			anthropic.MergeUsage(u, v.Raw)
		}
	},
	NewTap:      func(bool) Tap { return &anthropicTap{} },
	Generated:   []string{"delta.text", "delta.thinking", "delta.partial_json"},
	CountPrompt: countMessagesPrompt,
	Unpriced:    messagesUnpriced,
	Session:     messagesSession,
	TokenCount:  func(n int) []byte { return fmt.Appendf(nil, `{"input_tokens":%d}`, n) },
	// A count_tokens body is a Messages request without max_tokens.
	CountRequest: func(body []byte) ([]byte, error) {
		if gjson.GetBytes(body, "max_tokens").Exists() {
			return body, nil
		}
		return sjson.SetBytes(body, "max_tokens", 1)
	},
	Ping: []byte("event: ping\ndata: {\"type\": \"ping\"}\n\n"),
}

// anthropicAffinity: metadata.user_id (Claude Code's names its session),
// else the conversation's start.
func anthropicAffinity(s *Scanned) (affinity.Key, bool) {
	if id := gjson.GetBytes(s.Kept(0), "user_id"); id.Type == gjson.String && id.Str != "" {
		return affinity.Of("user", []byte(id.Str)), false
	}
	return promptKey(s, s.Kept(1), s.Kept(2)), false
}

func anthropicModel(id string, created time.Time) map[string]any {
	return map[string]any{"type": "model", "id": id, "display_name": id, "created_at": created.UTC().Format(time.RFC3339)}
}

// anthropicErrorTypes maps a kind to the Messages API's error type.
var anthropicErrorTypes = [...]string{
	InvalidRequest: anthropic.ErrInvalidRequest, Authentication: anthropic.ErrAuthentication,
	Permission: anthropic.ErrPermission, NotFound: anthropic.ErrNotFound, MethodNotAllowed: anthropic.ErrInvalidRequest,
	TooLarge: anthropic.ErrRequestTooLarge, Upstream: anthropic.ErrAPI, Timeout: anthropic.ErrTimeout,
	NotImplemented: anthropic.ErrInvalidRequest, Internal: anthropic.ErrAPI, Unavailable: anthropic.ErrAPI,
	RateLimit: anthropic.ErrRateLimit, Budget: anthropic.ErrRateLimit,
}

func anthropicError(e Error) []byte {
	return anthropic.MarshalError(anthropicErrorTypes[e.Kind], e.Message, e.RequestID)
}

// prepareAnthropic removes the thinking blocks whose signature tollgate
// made from a request bound for a real Anthropic upstream (see
// stripSyntheticThinking).
func prepareAnthropic(body []byte, _ Scanned, spliced func() []byte) (Prepared, error) {
	if !bytes.Contains(body, syntheticMarker) {
		return Prepared{}, nil
	}
	if b, removed := stripSyntheticThinking(spliced()); removed {
		return Prepared{Body: b, Dropped: "synthetic_thinking"}, nil
	}
	return Prepared{}, nil
}

// anthropicTap taps a Messages stream. Usage arrives in message_start
// (input and cache counts) and message_delta (cumulative output, and any
// counts that changed), so fields are merged, never summed.
type anthropicTap struct {
	f    sse.Fields
	u    meter.Usage
	done bool
}

func (t *anthropicTap) Feed(ev []byte) []byte {
	t.f.Parse(ev)
	switch name := unsafeString(t.f.Name); name {
	case "message_start", "message_delta":
		anthropic.MergeEventUsage(&t.u, name, unsafeString(t.f.Data))
	case "message_stop":
		t.done = true
	case "error":
		t.done = true
		return scrubbedEvent(ev, "error", t.f.Data)
	}
	return ev
}

// scrubbedEvent is an upstream's error event as a client may see it: ev
// itself, or, when its data names the operator's account (an ARN, a
// project, part of a key), the event again with those replaced.
func scrubbedEvent(ev []byte, name string, data []byte) []byte {
	clean := scrub.Bytes(data)
	if bytes.Equal(clean, data) {
		return ev
	}
	return sse.AppendEvent(nil, name, clean)
}

func (t *anthropicTap) StartError(ev []byte) (int, []byte, bool) {
	t.f.Parse(ev)
	if string(t.f.Name) != "error" {
		return 0, nil, false
	}
	typ := gjson.Get(unsafeString(t.f.Data), "error.type").String()
	return anthropic.StatusForErrorType(typ), bytes.Clone(t.f.Data), true
}

func (t *anthropicTap) Close(eof bool, msg string) ([]byte, bool) {
	if t.done {
		return nil, true
	}
	return sse.AppendEvent(nil, "error", anthropic.MarshalError(anthropic.ErrAPI, msg, "")), false
}

func (t *anthropicTap) Usage() meter.Usage { return t.u }

// CeilSecond rounds t up to a whole second, in UTC: a reset time read
// from a header that carries seconds only must not come before the reset.
func CeilSecond(t time.Time) time.Time {
	return t.UTC().Add(time.Second - 1).Truncate(time.Second)
}
