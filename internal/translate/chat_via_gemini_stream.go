package translate

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/api/gemini"
	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/meter"
	"github.com/tollgate/tollgate/internal/sse"
)

// GeminiToChatStream turns a Gemini stream into Chat Completions chunks:
// thoughts as reasoning_content, text as content, each function call as
// one whole tool call (Gemini sends them whole), a finish chunk, the
// usage chunk when the client asked for it, and [DONE].
type GeminiToChatStream struct {
	p *Plan
	f sse.Fields
	chatChunks

	calls   int
	finish  string
	blocked bool
	usage   meter.Usage
}

// NewGeminiToChatStream starts a translated stream for p.
func NewGeminiToChatStream(p *Plan, created int64) *GeminiToChatStream {
	return &GeminiToChatStream{p: p, chatChunks: chatChunks{created: created}}
}

// Usage is the usage the upstream reported so far.
func (s *GeminiToChatStream) Usage() meter.Usage { return s.usage }

// StartError reports whether the first event is an error, with the status
// and the OpenAI body to answer instead.
func (s *GeminiToChatStream) StartError(ev []byte) (int, []byte, bool) {
	s.f.Parse(ev)
	if !isErrorChunk(s.f.Data) {
		return 0, nil, false
	}
	status, body := geminiErrorToOpenAI(0, s.f.Data)
	return status, body, true
}

// Feed takes one upstream event and returns the chunks it makes.
func (s *GeminiToChatStream) Feed(ev []byte) []byte {
	s.out = s.out[:0]
	if s.state >= stateDone {
		return nil
	}
	s.f.Parse(ev)
	data := s.f.Data
	if data == nil {
		return nil
	}
	if isErrorChunk(data) {
		_, body := geminiErrorToOpenAI(0, data)
		s.fail(body)
		return s.out
	}
	chunk := gjson.Parse(unsafeString(data))
	if !chunk.IsObject() {
		return nil
	}
	s.begin(chunk.Get("responseId").String())
	c := chunk.Get("candidates.0")
	if !c.Exists() && chunk.Get("promptFeedback.blockReason").String() != "" {
		s.blocked = true
	}
	for _, part := range c.Get("content.parts").Array() {
		text := part.Get("text")
		switch {
		case part.Get("thought").Bool():
			if text.Type == gjson.String && text.Str != "" {
				s.chunkRaw(`{"reasoning_content":`, quotedRaw(text), `}`)
			}
		case part.Get("functionCall").IsObject() && part.Get("functionCall").Get("name").String() == "":
		case part.Get("functionCall").IsObject():
			tc := s.p.geminiToolCall(part.Get("functionCall"), part.Get("thoughtSignature").String())
			b := []byte(`{"tool_calls":[{"index":`)
			b = strconv.AppendInt(b, int64(s.calls), 10)
			b = append(b, `,"id":`...)
			b = jsonx.AppendQuote(b, tc.ID)
			b = append(b, `,"type":"function","function":{"name":`...)
			b = jsonx.AppendQuote(b, tc.Function.Name)
			b = append(b, `,"arguments":`...)
			b = jsonx.AppendQuote(b, tc.Function.Arguments)
			s.chunk(string(append(b, `}}]}`...)))
			s.calls++
		case text.Type == gjson.String && text.Str != "":
			s.chunkRaw(`{"content":`, quotedRaw(text), `}`)
		}
	}
	if fr := c.Get("finishReason"); fr.Type == gjson.String && fr.Str != "" {
		s.finish = strings.Clone(fr.Str)
	}
	if u := chunk.Get("usageMetadata"); u.IsObject() {
		gemini.SetUsage(&s.usage, u.Raw)
	}
	return s.out
}

// Close ends the stream: cleanly after a finish reason (or a blocked
// prompt), else with an error chunk.
func (s *GeminiToChatStream) Close(eof bool, msg string) ([]byte, bool) {
	s.out = s.out[:0]
	switch {
	case s.state >= stateDone:
		return nil, s.state == stateDone
	case eof && (s.finish != "" || s.blocked):
		s.finalize()
		return s.out, true
	}
	s.fail(openai.MarshalError(openai.ErrServer, msg, "", "upstream_stream_interrupted"))
	return s.out, false
}

func (s *GeminiToChatStream) begin(responseID string) {
	if s.state == stateBefore {
		s.start(s.p, chatID(responseID))
	}
}

func (s *GeminiToChatStream) finalize() {
	s.begin("")
	s.end(s.p, geminiFinishReason(s.finish, s.calls > 0, s.blocked), s.usage)
}
