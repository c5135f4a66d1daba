package translate

import (
	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/meter"
)

// ResponsesToChatStream turns a Responses upstream's events into Chat
// Completions chunks for an OpenAI client.
type ResponsesToChatStream struct {
	w     MessagesToChatStream // the writer; its Feed is not used
	in    rsReader
	calls int // tool calls so far: the next one's index
}

// NewResponsesToChatStream starts a translated stream for p.
func NewResponsesToChatStream(p *Plan, created int64) *ResponsesToChatStream {
	return &ResponsesToChatStream{w: MessagesToChatStream{p: p, chatChunks: chatChunks{created: created}}}
}

// Usage is the usage the upstream reported.
func (s *ResponsesToChatStream) Usage() meter.Usage { return s.in.usage }

// StartError reports whether ev, the upstream's first event, is an error;
// if so it returns the status and OpenAI error body to answer with.
func (s *ResponsesToChatStream) StartError(ev []byte) (int, []byte, bool) {
	s.in.f.Parse(ev)
	return ResponsesErrorEvent(s.in.f.Data)
}

// Feed takes one complete upstream event and returns the client's chunks.
func (s *ResponsesToChatStream) Feed(ev []byte) []byte {
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
		w.fail(body)
		return w.out
	}
	w.begin(d.Get("response.id").Str) // response.created comes first
	switch name {
	case "response.output_item.added":
		if it := d.Get("item"); isCall(it) && it.Get("name").Str != "" {
			s.startCall(it)
		}
	case "response.output_text.delta":
		if t := d.Get("delta"); t.Str != "" {
			w.chunkRaw(`{"content":`, quotedRaw(t), `}`)
		}
	case "response.refusal.delta":
		if t := d.Get("delta"); t.Str != "" {
			w.chunkRaw(`{"refusal":`, quotedRaw(t), `}`)
		}
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		if t := d.Get("delta"); t.Str != "" {
			if s.in.summaryBreak(d) {
				w.chunk(`{"reasoning_content":"\n\n"}`)
			}
			w.chunkRaw(`{"reasoning_content":`, quotedRaw(t), `}`)
		}
	case "response.function_call_arguments.delta":
		if t := d.Get("delta"); t.Str != "" && s.in.started {
			s.arguments(quotedRaw(t))
		}
	case "response.output_item.done":
		it := d.Get("item")
		if !isCall(it) {
			break
		}
		if !s.in.started { // named only now, or not at all
			if it.Get("name").Str == "" {
				w.fail(openai.MarshalError(openai.ErrServer, errNamelessCall, "", "upstream_invalid_response"))
				return w.out
			}
			s.startCall(it)
		}
		if !s.in.argsSeen || it.Get("type").Str == "custom_tool_call" {
			if args := callArguments(it); args != "" {
				s.arguments(string(jsonx.AppendQuote(nil, args)))
			}
		}
	case "response.completed", "response.incomplete":
		w.usage = s.in.usage
		w.stop = responsesStop(d.Get("response"), s.in.tools)
		w.finalize()
	}
	return w.out
}

// startCall sends a tool call's first fragment: its index, id and name.
func (s *ResponsesToChatStream) startCall(it gjson.Result) {
	b := []byte(`{"tool_calls":[{"index":`)
	b = appendInt(b, s.calls)
	b = append(b, `,"id":`...)
	b = jsonx.AppendQuote(b, cmpOr(it.Get("call_id").Str, "call_"+randomHex(12)))
	b = append(b, `,"type":"function","function":{"name":`...)
	b = jsonx.AppendQuote(b, s.w.p.clientToolName(it.Get("name").Str))
	s.w.chunk(string(append(b, `,"arguments":""}}]}`...)))
	s.calls++
	s.in.tools, s.in.started = true, true
}

// arguments sends a fragment of the current tool call's arguments.
func (s *ResponsesToChatStream) arguments(quoted string) {
	pre := `{"tool_calls":[{"index":` + string(appendInt(nil, s.calls-1)) + `,"function":{"arguments":`
	s.w.chunkRaw(pre, quoted, `}}]}`)
}

// Close ends the stream when the upstream's body ends or fails before its
// terminal event: an error chunk and no [DONE].
func (s *ResponsesToChatStream) Close(eof bool, msg string) ([]byte, bool) {
	return s.w.Close(eof, msg)
}
