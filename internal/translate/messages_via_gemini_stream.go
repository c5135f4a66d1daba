package translate

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/gemini"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/meter"
	"github.com/tollgate/tollgate/internal/sse"
)

// GeminiToMessagesStream turns a Gemini stream (streamGenerateContent with
// alt=sse: each event a whole GenerateContentResponse holding the parts
// generated since the last) into Anthropic Messages events. Thoughts and
// text arrive in pieces and stream as deltas; a function call arrives
// whole and becomes a tool_use block at once. A thought signature ends
// the thinking block it belongs to, or, on a call or text, becomes an
// empty thinking block just before it (GeminiToMessages does the same).
// Blocks are dense and one is open at a time. It is created per request
// and is not safe for concurrent use.
type GeminiToMessagesStream struct {
	p *Plan
	f sse.Fields
	anthropicEvents

	finish  string
	blocked bool
	tools   bool
	usage   meter.Usage
	gotUse  bool
}

// NewGeminiToMessagesStream starts a translated stream for p.
func NewGeminiToMessagesStream(p *Plan) *GeminiToMessagesStream {
	return &GeminiToMessagesStream{p: p}
}

// Usage is the usage the upstream reported so far.
func (s *GeminiToMessagesStream) Usage() meter.Usage { return s.usage }

// StartError reports whether ev, the stream's first data event, is an
// error, with the status and Anthropic body to answer instead.
func (s *GeminiToMessagesStream) StartError(ev []byte) (int, []byte, bool) {
	s.f.Parse(ev)
	if !isErrorChunk(s.f.Data) {
		return 0, nil, false
	}
	status, body, _ := GeminiErrorToAnthropic(0, s.f.Data)
	return status, body, true
}

// Feed takes one upstream event and returns the client bytes it makes
// (valid until the next call).
func (s *GeminiToMessagesStream) Feed(ev []byte) []byte {
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
		_, body, _ := GeminiErrorToAnthropic(0, data)
		s.fail(body)
		return s.out
	}
	chunk := gjson.Parse(unsafeString(data))
	if !chunk.IsObject() {
		return nil
	}
	s.begin()
	c := chunk.Get("candidates.0")
	if !c.Exists() && chunk.Get("promptFeedback.blockReason").String() != "" {
		s.blocked = true
	}
	for _, part := range c.Get("content.parts").Array() {
		s.part(part)
	}
	if fr := c.Get("finishReason"); fr.Type == gjson.String && fr.Str != "" {
		s.finish = strings.Clone(fr.Str)
	}
	if u := chunk.Get("usageMetadata"); u.IsObject() {
		gemini.SetUsage(&s.usage, u.Raw) // running totals: the last wins
		s.gotUse = true
	}
	return s.out
}

func (s *GeminiToMessagesStream) part(part gjson.Result) {
	sig := ""
	if g := part.Get("thoughtSignature"); g.Type == gjson.String && g.Str != "" {
		sig = s.p.signer.sealGemini(g.Str)
	}
	text := part.Get("text")
	hasText := text.Type == gjson.String && text.Str != ""
	switch {
	case part.Get("thought").Bool():
		if s.open != blockThinking {
			s.closeOpen("", s.p.signer)
			s.startBlock(blockThinking, `{"type":"thinking","thinking":"","signature":""}`)
			s.thinking.Reset()
		}
		if hasText {
			s.thinking.WriteString(text.Str)
			s.delta(`{"type":"thinking_delta","thinking":`, quotedRaw(text))
		}
		if sig != "" {
			s.closeOpen(sig, s.p.signer)
		}
	case part.Get("functionCall").IsObject() && part.Get("functionCall").Get("name").String() == "":
		// A call without a name cannot be run or answered: left out.
	case part.Get("functionCall").IsObject():
		s.closeOpen("", s.p.signer)
		s.signatureBlock(sig)
		fc := part.Get("functionCall")
		args := fc.Get("args").Raw
		if args == "" || args == "null" {
			args = "{}"
		}
		b := make([]byte, 0, 96)
		b = append(b, `{"type":"tool_use","id":`...)
		b = jsonx.AppendQuote(b, geminiCallID(fc.Get("id").String()))
		b = append(b, `,"name":`...)
		b = jsonx.AppendQuote(b, s.p.clientToolName(fc.Get("name").String()))
		b = append(b, `,"input":{}}`...)
		s.openIdx = s.next
		s.startRaw(b)
		s.delta(`{"type":"input_json_delta","partial_json":`, string(jsonx.AppendQuote(nil, args)))
		s.stopBlock(s.openIdx)
		s.tools = true
	case hasText:
		if sig != "" || s.open == blockThinking {
			s.closeOpen("", s.p.signer)
			s.signatureBlock(sig)
		}
		if s.open != blockText {
			s.startBlock(blockText, `{"type":"text","text":""}`)
		}
		s.delta(`{"type":"text_delta","text":`, quotedRaw(text))
	case sig != "":
		s.closeOpen("", s.p.signer)
		s.signatureBlock(sig)
	}
}

// signatureBlock emits an empty thinking block carrying a sealed Gemini
// signature ("" emits nothing).
func (s *GeminiToMessagesStream) signatureBlock(sig string) {
	if sig == "" {
		return
	}
	s.startBlock(blockThinking, `{"type":"thinking","thinking":"","signature":""}`)
	s.thinking.Reset()
	s.closeOpen(sig, s.p.signer)
}

// Close ends the stream when the upstream's body ends or fails: cleanly
// after a finish reason (or a blocked prompt), else with an error event.
func (s *GeminiToMessagesStream) Close(eof bool, msg string) ([]byte, bool) {
	s.out = s.out[:0]
	switch {
	case s.state >= stateDone:
		return nil, s.state == stateDone
	case eof && (s.finish != "" || s.blocked):
		s.finalize()
		return s.out, true
	}
	s.fail(anthropic.MarshalError(anthropic.ErrAPI, msg, ""))
	return s.out, false
}

func (s *GeminiToMessagesStream) begin() { s.anthropicEvents.begin(s.p) }

func (s *GeminiToMessagesStream) finalize() {
	s.closeOpen("", s.p.signer)
	s.end(s.p, geminiStopReason(s.finish, s.tools && !s.p.JSONTool, s.blocked), s.usage, s.gotUse)
}
