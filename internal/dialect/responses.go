package dialect

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/affinity"
	"github.com/tollgate/tollgate/internal/api/responses"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/meter"
	"github.com/tollgate/tollgate/internal/sse"
	"github.com/tollgate/tollgate/internal/translate"
)

// Responses is the OpenAI Responses API: POST /v1/responses, SSE events
// named as their data's type, ending with a terminal event (no [DONE]).
// Its errors, request ids, rate-limit headers and model list are those of
// the OpenAI API.
var Responses = &Dialect{
	Name: "openai-responses",
	Endpoints: []Endpoint{
		{Path: "/v1/responses", Op: Generate},
		{Path: "/v1/responses/input_tokens", Op: CountTokens},
		{Path: "/v1/responses/compact", Op: Compact},
	},
	Fields: Fields{Conversation: "input", ConversationString: true, MaxOutput: []string{"max_output_tokens"},
		Keep: []string{"prompt_cache_key", "user", "tools", "instructions"}},
	// prompt_cache_key, user, else the conversation's start (the gateway
	// puts a stored conversation's key after prompt_cache_key).
	Affinity: func(s *Scanned) (affinity.Key, bool) {
		return openAIAffinity(s, s.Kept(0), s.Kept(1), s.Kept(2), s.Kept(3))
	},
	CacheHints:      promptCacheKey,
	RequestIDHeader: Chat.RequestIDHeader,
	Error:           Chat.Error,
	RateLimit:       Chat.RateLimit,
	ModelList:       Chat.ModelList,
	Model:           Chat.Model,
	Usage: func(u *meter.Usage, body []byte) {
		if v := gjson.GetBytes(body, "usage"); v.IsObject() {
			responses.SetUsage(u, v.Raw)
		}
	},
	NewTap:      func(bool) Tap { return &responsesTap{} },
	Generated:   []string{"delta"},
	CountPrompt: countResponsesPrompt,
	Unpriced:    responsesUnpriced,
	Session:     responsesSession,
	TokenCount:  func(n int) []byte { return fmt.Appendf(nil, `{"object":"response.input_tokens","input_tokens":%d}`, n) },
}

// responsesTap taps a Responses stream. Usage arrives once, in the
// terminal event's response (completed, incomplete or failed). A stream
// that breaks off before its terminal event ends with response.failed,
// numbered after the last event relayed: never a made-up completion.
type responsesTap struct {
	f    sse.Fields
	u    meter.Usage
	done bool

	seq     int64 // the next sequence number
	started bool
	// Of response.created, for the response.failed that ends a cut stream.
	id, model string
	created   int64
}

func (t *responsesTap) Feed(ev []byte) []byte {
	t.f.Parse(ev)
	d := t.f.Data
	if d == nil {
		return ev
	}
	name := unsafeString(t.f.Name)
	if name == "" {
		name = gjson.Get(unsafeString(d), "type").Str
	}
	if !t.started {
		t.started = true
		r := gjson.GetMany(unsafeString(d), "sequence_number", "response.id", "response.model", "response.created_at")
		t.seq = r[0].Int()
		t.id, t.model, t.created = r[1].Str, r[2].Str, r[3].Int()
		t.id, t.model = strings.Clone(t.id), strings.Clone(t.model) // d is reused after Feed
	}
	t.seq++
	switch name {
	case "response.completed", "response.incomplete":
		responses.SetUsage(&t.u, gjson.Get(unsafeString(d), "response.usage").Raw)
		t.done = true
	case "response.failed":
		responses.SetUsage(&t.u, gjson.Get(unsafeString(d), "response.usage").Raw)
		t.done = true
		return scrubbedEvent(ev, string(t.f.Name), d)
	case "error":
		t.done = true
		return scrubbedEvent(ev, string(t.f.Name), d)
	}
	return ev
}

func (t *responsesTap) StartError(ev []byte) (int, []byte, bool) {
	t.f.Parse(ev)
	return translate.ResponsesErrorEvent(t.f.Data)
}

func (t *responsesTap) Close(eof bool, msg string) ([]byte, bool) {
	if t.done {
		return nil, true
	}
	return FailedEvent(nil, t.seq, t.id, t.model, t.created, "server_error", msg), false
}

func (t *responsesTap) Usage() meter.Usage { return t.u }

// FailedEvent appends a response.failed event numbered seq for the
// response id, made by model at created, failing with code and msg.
func FailedEvent(dst []byte, seq int64, id, model string, created int64, code, msg string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":"response.failed","sequence_number":`)
	b.WriteString(strconv.FormatInt(seq, 10))
	b.WriteString(`,"response":{"id":`)
	b.Write(jsonx.AppendQuote(nil, id))
	b.WriteString(`,"object":"response","created_at":`)
	b.WriteString(strconv.FormatInt(created, 10))
	b.WriteString(`,"status":"failed","error":{"code":`)
	b.Write(jsonx.AppendQuote(nil, code))
	b.WriteString(`,"message":`)
	b.Write(jsonx.AppendQuote(nil, msg))
	b.WriteString(`},"incomplete_details":null,"instructions":null,"model":`)
	b.Write(jsonx.AppendQuote(nil, model))
	b.WriteString(`,"output":[],"parallel_tool_calls":true,"tool_choice":"auto","tools":[],"temperature":1,"top_p":1,"usage":null,"metadata":{}}}`)
	return sse.AppendEvent(dst, "response.failed", b.Bytes())
}
