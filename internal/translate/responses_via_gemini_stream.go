package translate

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/api/gemini"
	"github.com/tollgate/tollgate/internal/meter"
	"github.com/tollgate/tollgate/internal/sse"
)

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
		gemini.SetUsage(&s.usage, u.Raw)
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
