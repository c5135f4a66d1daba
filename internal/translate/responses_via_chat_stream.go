package translate

import (
	"bytes"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/meter"
	"github.com/tollgate/tollgate/internal/sse"
)

// ChatToResponsesStream turns an OpenAI-compatible upstream's chunk stream
// into Responses events for a Responses client. Items are streamed one at
// a time, as the Responses grammar has them: reasoning, then text, then
// each tool call; tool calls that arrive interleaved are buffered and
// replayed in order. The events it is fed are only valid during Feed. It
// is made per request and is not safe for concurrent use.
type ChatToResponsesStream struct {
	p      *Plan
	w      *rsOut
	f      sse.Fields
	state  streamState
	tools  []*toolSlot
	live   *toolSlot
	finish string
	usage  meter.Usage
	gotUse bool
}

// NewChatToResponsesStream starts a translated stream for p; created dates it.
func NewChatToResponsesStream(p *Plan, created int64) *ChatToResponsesStream {
	return &ChatToResponsesStream{p: p, w: newRSOut(p, created)}
}

// Usage is the usage the upstream reported so far.
func (s *ChatToResponsesStream) Usage() meter.Usage { return s.usage }

// StartError reports whether ev, the upstream's first data event, is an
// error chunk; if so it returns the status and the error to answer with.
func (s *ChatToResponsesStream) StartError(ev []byte) (int, []byte, bool) {
	s.f.Parse(ev)
	if !isErrorChunk(s.f.Data) {
		return 0, nil, false
	}
	status, body, _ := OpenAIErrorToOpenAI(0, s.f.Data)
	return status, bytes.Clone(body), true
}

// Feed takes one complete upstream event and returns the client's events.
func (s *ChatToResponsesStream) Feed(ev []byte) []byte {
	w := s.w
	w.out = w.out[:0]
	if s.state >= stateDone {
		return nil
	}
	s.f.Parse(ev)
	data := s.f.Data
	switch {
	case data == nil:
		return nil
	case string(data) == "[DONE]":
		s.end()
		return w.out
	case isErrorChunk(data):
		e := gjson.GetBytes(data, "error")
		s.state = stateFailed
		w.fail(cmpOr(e.Get("code").String(), "server_error"), e.Get("message").Str)
		return w.out
	}
	chunk := gjson.Parse(unsafeString(data))
	if !chunk.IsObject() {
		return nil
	}
	if s.state == stateBefore {
		s.state = stateStreaming
		w.begin()
	}
	if c := chunk.Get("choices.0"); c.Exists() {
		delta := c.Get("delta")
		for _, k := range [...]string{"reasoning_content", "reasoning"} {
			if r := delta.Get(k); r.Type == gjson.String && r.Str != "" {
				s.closeTools()
				w.reasoning(r.Str, quotedRaw(r))
				break
			}
		}
		for _, k := range [...]string{"content", "refusal"} {
			if t := delta.Get(k); t.Type == gjson.String && t.Str != "" {
				s.closeTools()
				w.outputText(t.Str, quotedRaw(t))
			}
		}
		if tcs := delta.Get("tool_calls"); tcs.IsArray() {
			s.toolCalls(tcs)
		}
		if fr := c.Get("finish_reason"); fr.Type == gjson.String && s.finish == "" {
			s.finish = strings.Clone(fr.Str)
		}
	}
	if u := chunk.Get("usage"); u.IsObject() {
		openai.SetUsage(&s.usage, u.Raw)
		s.gotUse = true
		if s.finish != "" {
			s.end() // the usage chunk comes last: [DONE] may never follow
		}
	}
	return w.out
}

func (s *ChatToResponsesStream) toolCalls(tcs gjson.Result) {
	frags := tcs.Array()
	slices.SortStableFunc(frags, func(a, b gjson.Result) int { return int(a.Get("index").Int() - b.Get("index").Int()) })
	for _, tc := range frags {
		key := int(tc.Get("index").Int())
		var t *toolSlot
		for _, x := range s.tools {
			if x.key == key {
				t = x
			}
		}
		if t == nil {
			if len(s.tools) >= maxToolCalls {
				continue
			}
			t = &toolSlot{key: key}
			s.tools = append(s.tools, t)
		}
		if id := tc.Get("id").Str; id != "" && t.id == "" {
			t.id = strings.Clone(id)
		}
		if name := tc.Get("function.name").Str; name != "" && (t.state == toolNew || t.state == toolPending) && (len(t.args) == 0 || t.name == "") {
			t.name = strings.Clone(t.name + name)
		}
		args := tc.Get("function.arguments")
		frag := args.Str
		switch {
		case t == s.live:
			t.args = append(t.args, frag...)
			if frag != "" {
				s.w.arguments(frag, quotedRaw(args))
			}
		case s.live == nil && t.state == toolNew && t.name != "":
			s.startTool(t)
			t.args = append(t.args, frag...)
			if frag != "" {
				s.w.arguments(frag, quotedRaw(args))
			}
		default: // another call is streaming: buffered, replayed in order
			t.args = append(t.args, frag...)
			t.state = toolPending
			if s.live != nil && jsontext.Value(s.live.args).IsValid() {
				s.closeTools()
			}
		}
	}
}

func (s *ChatToResponsesStream) startTool(t *toolSlot) {
	if t.id == "" {
		t.id = "call_" + randomHex(12)
	}
	s.w.call(t.id, s.p.responsesTool(t.name))
	t.state = toolLive
	s.live = t
}

// closeTools ends the live call and sends each buffered one whole. A call
// that never got a name cannot be made: the stream fails rather than
// hand the client a call it cannot run or silently drop one.
func (s *ChatToResponsesStream) closeTools() {
	if s.live != nil {
		s.w.closeOpen()
		s.live.state = toolClosed
		s.live = nil
	}
	for _, t := range s.tools {
		if t.state == toolNew || t.state == toolPending {
			if t.name == "" {
				s.state = stateFailed
				s.w.fail("server_error", "the upstream sent a tool call without a function name")
				return
			}
			s.startTool(t)
			if len(t.args) > 0 {
				s.w.arguments(string(t.args), quote(string(t.args)))
			}
			s.w.closeOpen()
			t.state = toolClosed
			s.live = nil
		}
	}
}

func (s *ChatToResponsesStream) end() {
	if s.state >= stateDone {
		return
	}
	if s.closeTools(); s.state == stateFailed {
		return
	}
	s.state = stateDone
	s.w.finish(incompleteReason(s.finish), s.usage, s.gotUse)
}

// Close ends the stream when the upstream's body ends or fails. A stream
// that reached its finish reason ends normally even without [DONE];
// otherwise the client gets response.failed, never a made-up completion.
func (s *ChatToResponsesStream) Close(eof bool, msg string) ([]byte, bool) {
	w := s.w
	w.out = w.out[:0]
	switch {
	case s.state >= stateDone:
		return nil, s.state == stateDone
	case eof && s.finish != "":
		s.end()
		return w.out, true
	}
	s.state = stateFailed
	w.fail("server_error", msg)
	return w.out, false
}
