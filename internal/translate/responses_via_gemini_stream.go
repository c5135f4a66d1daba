package translate

import (
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/meter"
	"github.com/tollgate/tollgate/internal/sse"
)

// geminiIncomplete is the Responses incomplete reason of a Gemini finish
// (or of a blocked prompt); "" for a complete answer.
func geminiIncomplete(finish string, blocked bool) string {
	return messagesIncomplete(geminiStopReason(finish, false, blocked))
}

// geminiParts writes a Gemini answer's (or event's) parts as output
// items: thoughts as reasoning, text as a message, each function call as
// a function_call item. A thought signature is sealed into the
// encrypted_content of the reasoning item it ends, or of one opened for
// it just before the call or text that carried it.
func geminiParts(w *rsOut, p *Plan, c gjson.Result) {
	for _, part := range c.Get("content.parts").Array() {
		sig := ""
		if g := part.Get("thoughtSignature"); g.Type == gjson.String && g.Str != "" {
			sig = p.signer.sealGemini(g.Str)
		}
		text := part.Get("text")
		fc := part.Get("functionCall")
		carry := func() {
			if sig != "" {
				w.openReasoning()
				w.seal(sig)
			}
		}
		switch {
		case part.Get("thought").Bool():
			w.reasoning(text.Str, quotedRaw(text))
			if sig != "" {
				w.seal(sig)
			}
		case fc.IsObject() && fc.Get("name").String() == "":
			// A call without a name cannot be run or answered: left out.
		case fc.IsObject():
			carry()
			args := fc.Get("args").Raw
			if args == "" || args == "null" {
				args = "{}"
			}
			a := jsontext.Value(args).Clone()
			a.Compact()
			w.call(geminiCallIDWith(fc.Get("id").String(), "call_"), p.responsesTool(p.clientToolName(fc.Get("name").String())))
			w.arguments(string(a), quote(string(a)))
		case text.Type == gjson.String && text.Str != "":
			carry()
			w.outputText(text.Str, quotedRaw(text))
		case sig != "":
			carry()
		}
	}
}

// GeminiAnswerToResponses translates a whole Gemini answer into the
// response a Responses client asked for, and when it asked for a stream,
// into the events of one.
func GeminiAnswerToResponses(body []byte, p *Plan, created int64) (out, stream []byte, u meter.Usage, err error) {
	r := gjson.ParseBytes(body)
	if !r.IsObject() {
		return nil, nil, u, &UpstreamError{Message: "upstream answer is not a valid Gemini response"}
	}
	u.SetGemini(r.Get("usageMetadata").Raw)
	w := newRSOut(p, created)
	w.quiet = !p.Stream
	c := r.Get("candidates.0")
	geminiParts(w, p, c)
	blocked := !c.Exists() && r.Get("promptFeedback.blockReason").String() != ""
	w.finish(geminiIncomplete(c.Get("finishReason").String(), blocked), u, r.Get("usageMetadata").IsObject())
	if p.Stream {
		return nil, w.out, u, nil
	}
	return w.response.AppendJSON(nil), nil, u, nil
}

// GeminiToResponsesStream turns a Gemini stream into Responses events.
// It is made per request and is not safe for concurrent use.
type GeminiToResponsesStream struct {
	p       *Plan
	w       *rsOut
	f       sse.Fields
	state   streamState
	finish  string
	blocked bool
	usage   meter.Usage
	gotUse  bool
}

// NewGeminiToResponsesStream starts a translated stream for p.
func NewGeminiToResponsesStream(p *Plan, created int64) *GeminiToResponsesStream {
	return &GeminiToResponsesStream{p: p, w: newRSOut(p, created)}
}

// Usage is the usage the upstream reported so far.
func (s *GeminiToResponsesStream) Usage() meter.Usage { return s.usage }

// StartError reports whether the first event is an error, with the
// status and OpenAI error body to answer instead.
func (s *GeminiToResponsesStream) StartError(ev []byte) (int, []byte, bool) {
	s.f.Parse(ev)
	if !isErrorChunk(s.f.Data) {
		return 0, nil, false
	}
	status, body := geminiErrorToOpenAI(0, s.f.Data)
	return status, body, true
}

// Feed takes one upstream event and returns the client's events.
func (s *GeminiToResponsesStream) Feed(ev []byte) []byte {
	w := s.w
	w.out = w.out[:0]
	if s.state >= stateDone {
		return nil
	}
	s.f.Parse(ev)
	data := s.f.Data
	if data == nil {
		return nil
	}
	if isErrorChunk(data) {
		e := gjson.GetBytes(data, "error")
		s.state = stateFailed
		w.fail(geminiFailureCode(e.Get("status").String()), cmpOr(e.Get("message").String(), "upstream error"))
		return w.out
	}
	chunk := gjson.Parse(unsafeString(data))
	if !chunk.IsObject() {
		return nil
	}
	s.state = stateStreaming
	w.begin()
	c := chunk.Get("candidates.0")
	if !c.Exists() && chunk.Get("promptFeedback.blockReason").String() != "" {
		s.blocked = true
	}
	geminiParts(w, s.p, c)
	if fr := c.Get("finishReason"); fr.Type == gjson.String && fr.Str != "" {
		s.finish = strings.Clone(fr.Str)
	}
	if u := chunk.Get("usageMetadata"); u.IsObject() {
		s.usage.SetGemini(u.Raw)
		s.gotUse = true
	}
	return w.out
}

// Close ends the stream: completed (or incomplete) after a finish reason
// or a blocked prompt, else failed.
func (s *GeminiToResponsesStream) Close(eof bool, msg string) ([]byte, bool) {
	w := s.w
	w.out = w.out[:0]
	switch {
	case s.state >= stateDone:
		return nil, s.state == stateDone
	case eof && (s.finish != "" || s.blocked):
		s.state = stateDone
		w.finish(geminiIncomplete(s.finish, s.blocked), s.usage, s.gotUse)
		return w.out, true
	}
	s.state = stateFailed
	w.fail("server_error", msg)
	return w.out, false
}

// geminiFailureCode is the response.failed code of a Google error status.
func geminiFailureCode(status string) string {
	switch status {
	case "RESOURCE_EXHAUSTED":
		return "rate_limit_exceeded"
	case "UNAVAILABLE":
		return "server_is_overloaded"
	}
	return "server_error"
}
