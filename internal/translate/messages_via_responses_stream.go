package translate

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/meter"
)

// ResponsesToMessagesStream turns a Responses upstream's events into
// Messages events for an Anthropic client.
type ResponsesToMessagesStream struct {
	w  ChatToMessagesStream // the writer; its Feed is not used
	in rsReader
}

// NewResponsesToMessagesStream starts a translated stream for p.
func NewResponsesToMessagesStream(p *Plan) *ResponsesToMessagesStream {
	return &ResponsesToMessagesStream{w: ChatToMessagesStream{p: p}}
}

// Usage is the usage the upstream reported.
func (s *ResponsesToMessagesStream) Usage() meter.Usage { return s.in.usage }

// StartError reports whether ev, the upstream's first event, is an error;
// if so it returns the status and Anthropic error body to answer with.
func (s *ResponsesToMessagesStream) StartError(ev []byte) (int, []byte, bool) {
	s.in.f.Parse(ev)
	status, body, ok := ResponsesErrorEvent(s.in.f.Data)
	if !ok {
		return 0, nil, false
	}
	status, body = OpenAIErrorToAnthropic(status, body)
	return status, body, true
}

var paragraph = gjson.Parse(`"\n\n"`)

// Feed takes one complete upstream event and returns the client's events.
func (s *ResponsesToMessagesStream) Feed(ev []byte) []byte {
	w := &s.w
	w.out = w.out[:0]
	if w.state >= stateDone {
		return nil
	}
	name, d, ok := s.in.read(ev)
	if !ok {
		return nil
	}
	if _, body, failed := ResponsesErrorEvent(s.in.f.Data); failed {
		_, body = OpenAIErrorToAnthropic(0, body)
		w.fail(body)
		return w.out
	}
	w.begin()
	switch name {
	case "response.output_item.added":
		if it := d.Get("item"); isCall(it) && it.Get("name").Str != "" {
			s.startCall(it)
		}
	case "response.output_text.delta", "response.refusal.delta":
		if t := d.Get("delta"); t.Str != "" {
			w.refused = w.refused || name == "response.refusal.delta"
			w.text(quotedRaw(t))
		}
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		if t := d.Get("delta"); t.Str != "" {
			if s.in.summaryBreak(d) && w.open == blockThinking {
				w.reasoning(paragraph)
			}
			w.reasoning(t)
		}
	case "response.function_call_arguments.delta":
		if t := d.Get("delta"); w.live != nil && t.Str != "" && s.in.started {
			w.live.args = append(w.live.args, t.Str...)
			w.delta(`{"type":"input_json_delta","partial_json":`, quotedRaw(t))
		}
	case "response.output_item.done":
		s.itemDone(d.Get("item"))
	case "response.completed", "response.incomplete":
		w.usage, w.gotUse = s.in.usage, true
		w.finish = openai.FinishStop
		switch responsesStop(d.Get("response"), false) {
		case anthropic.StopMaxTokens:
			w.finish = openai.FinishLength
		case anthropic.StopRefusal:
			w.finish = openai.FinishContentFilter
		}
		w.finalize()
	}
	return w.out
}

// startCall opens a tool_use block for a call.
func (s *ResponsesToMessagesStream) startCall(it gjson.Result) {
	w := &s.w
	if w.open != blockNone {
		w.stopOpen()
	}
	t := &toolSlot{key: len(w.tools), id: cmpOr(strings.Clone(it.Get("call_id").Str), "toolu_"+randomHex(12)), name: strings.Clone(it.Get("name").Str)}
	w.tools = append(w.tools, t)
	w.startTool(t)
	s.in.started = true
}

// itemDone ends the item's block: a thinking block gets the sealed item as
// its signature; a call's arguments sent only whole (no deltas) go now.
func (s *ResponsesToMessagesStream) itemDone(it gjson.Result) {
	w := &s.w
	switch it.Get("type").Str {
	case "reasoning":
		seal := s.w.p.sealItem([]byte(it.Raw))
		if w.open == blockThinking {
			w.sig = seal
			w.stopOpen()
		} else if it.Get("encrypted_content").Str != "" {
			// Reasoning with no text to show: the item travels as redacted thinking.
			w.closeTools()
			w.startRaw(append(append([]byte(`{"type":"redacted_thinking","data":`), jsonx.AppendQuote(nil, seal)...), '}'))
			w.stopBlock(w.next - 1)
		}
	case "function_call", "custom_tool_call":
		if !s.in.started { // named only now, or not at all
			if it.Get("name").Str == "" {
				w.fail(anthropic.MarshalError(anthropic.ErrAPI, errNamelessCall, ""))
				return
			}
			s.startCall(it)
		}
		t := w.live
		if t == nil {
			return
		}
		if !s.in.argsSeen || it.Get("type").Str == "custom_tool_call" {
			if args := callArguments(it); args != "" {
				w.delta(`{"type":"input_json_delta","partial_json":`, string(jsonx.AppendQuote(nil, args)))
			}
		}
		w.stopBlock(w.openIdx)
		t.state, w.live = toolClosed, nil
	case "message":
		if w.open != blockNone {
			w.stopOpen()
		}
	}
}

// Close ends the stream when the upstream's body ends or fails before its
// terminal event: an error event, never a made-up end.
func (s *ResponsesToMessagesStream) Close(eof bool, msg string) ([]byte, bool) {
	return s.w.Close(eof, msg)
}
