package dialect

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/affinity"
	"github.com/tollgate/tollgate/internal/api/gemini"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/meter"
	"github.com/tollgate/tollgate/internal/sse"
)

// Gemini is the Gemini API's generateContent, spoken by clients and
// upstreams alike. It is URL-addressed: the model and the operation are
// in the path (models/{model}:generateContent, :streamGenerateContent,
// :countTokens, under /v1beta and /v1), and the key in x-goog-api-key or
// the key query parameter. Its errors are Google's status objects; usage
// is usageMetadata; a stream is server-sent events (alt=sse) or, without
// alt=sse, one JSON array whose elements arrive as they are made, each a
// whole answer holding the parts generated since the last.
var Gemini = &Dialect{
	Name:       "gemini",
	Addressed:  []string{"/v1beta/models", "/v1/models"},
	Address:    geminiAddress,
	KeyHeaders: []string{"X-Goog-Api-Key"},
	KeyQuery:   "key",
	// Its own key header or query parameter, its version's path, or one
	// of its methods after the model's last colon: the /v1 routes are
	// shared, and other protocols' model ids hold colons too (Ollama's
	// llama3:8b, Bedrock's).
	Claims: func(r *http.Request) bool {
		if r.Header["X-Goog-Api-Key"] != nil || hasQueryKey(r.URL.RawQuery, "key") {
			return true
		}
		p := r.URL.Path
		if strings.HasPrefix(p, "/v1beta/") {
			return true
		}
		if !strings.HasPrefix(p, "/v1/models/") {
			return false
		}
		switch p[strings.LastIndexByte(p, ':')+1:] {
		case "generateContent", "streamGenerateContent", "countTokens":
			return true
		}
		return false
	},
	Fields: Fields{Conversation: "contents", Keep: []string{"systemInstruction", "tools"}},
	// The conversation's start: its system instruction, tools and first
	// user turn.
	Affinity: func(s *Scanned) (affinity.Key, bool) { return promptKey(s, s.Kept(0), s.Kept(1)), false },
	// x-goog-api-client names the client library; the privileged user id
	// is a Google account's, for Google's upstreams only (a Gemini
	// client's request reaches others through a translator, which
	// forwards no protocol headers).
	ForwardHeaders:  []string{"X-Goog-Api-Client", "X-Gemini-Api-Privileged-User-Id"},
	RequestIDHeader: "X-Goog-Request-Id",
	Error:           googleError,
	ModelList: func(ids []string, created time.Time) any {
		page, _ := geminiModelPage(ids, "", "")
		return page
	},
	ModelListPage: geminiModelPage,
	Model:         func(id string, _ time.Time) any { return geminiModel(id) },
	Usage: func(u *meter.Usage, body []byte) {
		if v := gjson.GetBytes(body, "usageMetadata"); v.IsObject() {
			gemini.SetUsage(u, v.Raw)
		}
	},
	NewTap:       func(bool) Tap { return &geminiTap{} },
	Generated:    []string{"candidates.0.content.parts.0.text"},
	CountPrompt:  countGeminiPrompt,
	Unpriced:     geminiUnpriced,
	TokenCount:   func(n int) []byte { return fmt.Appendf(nil, `{"totalTokens":%d}`, n) },
	CountRequest: geminiCountRequest,
	ReadTokenCount: func(body []byte) (int, bool) {
		n := gjson.GetBytes(body, "totalTokens")
		return int(n.Int()), n.Type == gjson.Number && n.Int() >= 0
	},
}

// hasQueryKey reports whether a raw query has the parameter name (with a
// value or without), without decoding the rest of it.
func hasQueryKey(raw, name string) bool {
	for raw != "" {
		var p string
		p, raw, _ = strings.Cut(raw, "&")
		if k, _, _ := strings.Cut(p, "="); k == name {
			return true
		}
	}
	return false
}

// googleCodes are the HTTP codes Google's envelope carries per kind; the
// status name is the one gemini.Status gives each.
var googleCodes = [...]int{
	InvalidRequest: http.StatusBadRequest, Authentication: http.StatusUnauthorized, Permission: http.StatusForbidden,
	NotFound: http.StatusNotFound, MethodNotAllowed: http.StatusMethodNotAllowed, TooLarge: http.StatusRequestEntityTooLarge,
	Upstream: http.StatusBadGateway, Timeout: http.StatusGatewayTimeout, NotImplemented: http.StatusNotImplemented,
	Internal: http.StatusInternalServerError, Unavailable: http.StatusServiceUnavailable, RateLimit: http.StatusTooManyRequests,
	Budget: http.StatusTooManyRequests,
}

// googleError renders Google's error envelope; a known retry time is a
// google.rpc.RetryInfo detail, which Google's SDKs read to wait.
func googleError(e Error) []byte {
	code, status := gemini.Status(googleCodes[e.Kind])
	b := fmt.Appendf(nil, `{"error":{"code":%d,"message":`, code)
	b = jsonx.AppendQuote(b, e.Message)
	b = append(b, `,"status":`...)
	b = jsonx.AppendQuote(b, status)
	if e.RetryAfter > 0 {
		b = append(b, `,"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"`...)
		b = strconv.AppendInt(b, int64((e.RetryAfter+time.Second-1)/time.Second), 10)
		b = append(b, `s"}]`...)
	}
	return append(b, "}}"...)
}

// geminiTap taps a Gemini stream of server-sent events. Every event is a
// whole answer; usageMetadata holds running totals (the last wins, kept
// raw and read when asked for: Google repeats it on every event), and
// the stream is done once a candidate has a finishReason, or an error
// object ends it.
type geminiTap struct {
	f     sse.Fields
	u     meter.Usage
	raw   []byte // the last usageMetadata, unread when fresh
	fresh bool
	done  bool
}

// The tails of the keys the tap looks for, cheap filters before parsing:
// a byte search starting at a capital skips ahead far faster than one
// starting at a quote, which JSON is full of.
var (
	usageMetadataKey = []byte(`Metadata"`)
	finishReasonKey  = []byte(`Reason"`)
)

func (t *geminiTap) Feed(ev []byte) []byte {
	t.f.Parse(ev)
	d := t.f.Data
	if d == nil {
		return ev
	}
	if bytes.Contains(d, usageMetadataKey) {
		// Read from the end, where Google puts it; from the start when
		// the end cannot be followed.
		if u, found, ok := topMember(d, "usageMetadata"); !ok {
			if r := gjson.Get(unsafeString(d), "usageMetadata"); r.IsObject() {
				t.raw, t.fresh = append(t.raw[:0], r.Raw...), true
			}
		} else if found && u[0] == '{' {
			t.raw, t.fresh = append(t.raw[:0], u...), true
		}
	}
	// A finishReason member may be a function call's argument too: only
	// a candidate's ends the stream.
	if !t.done && bytes.Contains(d, finishReasonKey) {
		gjson.Get(unsafeString(d), "candidates").ForEach(func(_, c gjson.Result) bool {
			t.done = c.Get("finishReason").Str != ""
			return !t.done
		})
	}
	if bytes.Contains(d, errorKey) && gjson.Get(unsafeString(d), "error").IsObject() {
		t.done = true // an error object ends the stream
		return scrubbedEvent(ev, string(t.f.Name), d)
	}
	return ev
}

func (t *geminiTap) StartError(ev []byte) (int, []byte, bool) {
	d, e, ok := errorEvent(&t.f, ev)
	if !ok {
		return 0, nil, false
	}
	status := int(e.Get("code").Int())
	if status < 400 || status > 599 {
		status = http.StatusInternalServerError
	}
	return status, bytes.Clone(d), true
}

func (t *geminiTap) Close(eof bool, msg string) ([]byte, bool) {
	if t.done {
		return nil, true
	}
	return sse.AppendEvent(nil, "", googleError(Error{Kind: Upstream, Message: msg})), false
}

func (t *geminiTap) Usage() meter.Usage {
	if t.fresh {
		gemini.SetUsage(&t.u, unsafeString(t.raw))
		t.fresh = false
	}
	return t.u
}
