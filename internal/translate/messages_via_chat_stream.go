package translate

import (
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/meter"
	"github.com/tollgate/tollgate/internal/sse"
)

// ChatToMessagesStream turns an OpenAI-compatible upstream's chunk stream
// into Anthropic Messages events (TRANSLATION.md §3.2). The events it is fed
// are only valid during Feed (the relay reuses its buffer), so any string
// kept in the state is cloned. Blocks are emitted
// strictly in index order, at most one open at a time: interleaved parallel
// tool calls are buffered and replayed, so every client sees a sequential
// stream. It is created per request and is not safe for concurrent use.
type ChatToMessagesStream struct {
	p *Plan
	f sse.Fields
	anthropicEvents

	sig string // upstream-provided signature for the open thinking block

	tools        []*toolSlot
	live         *toolSlot
	toolsEmitted bool

	finish  string
	refused bool
	usage   meter.Usage
	gotUse  bool
}

// NewChatToMessagesStream starts a translated stream for p.
func NewChatToMessagesStream(p *Plan) *ChatToMessagesStream {
	return &ChatToMessagesStream{p: p}
}

// Usage is the usage the upstream reported so far, in buckets.
func (s *ChatToMessagesStream) Usage() meter.Usage { return s.usage }

// StartError reports whether ev, the upstream's first data event, is an
// error; if so it returns the status and Anthropic error body to answer
// with instead of a stream.
func (s *ChatToMessagesStream) StartError(ev []byte) (int, []byte, bool) {
	s.f.Parse(ev)
	if !isErrorChunk(s.f.Data) {
		return 0, nil, false
	}
	status, body := OpenAIErrorToAnthropic(0, s.f.Data)
	return status, body, true
}

// Feed takes one complete upstream SSE event and returns the client bytes
// it produces (valid until the next call).
func (s *ChatToMessagesStream) Feed(ev []byte) []byte {
	s.out = s.out[:0]
	if s.state >= stateDone {
		return nil
	}
	s.f.Parse(ev)
	data := s.f.Data
	if data == nil {
		return nil // comments and keep-alives
	}
	if string(data) == "[DONE]" {
		s.finalize()
		return s.out
	}
	if isErrorChunk(data) {
		_, body := OpenAIErrorToAnthropic(0, data)
		s.fail(body)
		return s.out
	}
	chunk := gjson.Parse(unsafeString(data))
	if !chunk.IsObject() {
		return nil // not a chunk: ignored, as SDKs do with unknown data
	}
	s.begin()
	if c := chunk.Get("choices.0"); c.Exists() {
		delta := c.Get("delta")
		// All payload first, then finish_reason, then usage: a chunk may
		// carry the last arguments fragment together with finish_reason.
		if r := delta.Get("reasoning_content"); r.Type == gjson.String && r.Raw != `""` {
			s.reasoning(r)
		} else if r := delta.Get("reasoning"); r.Type == gjson.String && r.Raw != `""` {
			s.reasoning(r)
		}
		for _, tb := range delta.Get("thinking_blocks").Array() {
			if sig := tb.Get("signature").String(); sig != "" {
				s.sig = strings.Clone(sig) // gjson strings alias the event, which the relay reuses
			}
		}
		if t := delta.Get("content"); t.Type == gjson.String && t.Raw != `""` {
			s.text(quotedRaw(t))
		}
		if t := delta.Get("refusal"); t.Type == gjson.String && t.Raw != `""` {
			s.refused = true
			s.text(quotedRaw(t))
		}
		if tcs := delta.Get("tool_calls"); tcs.IsArray() {
			s.toolCalls(tcs)
		}
		if fr := c.Get("finish_reason"); fr.Type == gjson.String && s.finish == "" {
			s.finish = strings.Clone(fr.Str) // the first finish wins; some upstreams repeat it
		}
	}
	if u := chunk.Get("usage"); u.IsObject() {
		openai.SetUsage(&s.usage, u.Raw) // running totals: the last one wins
		s.gotUse = true
	}
	return s.out
}

// Close ends the stream when the upstream's body ends (cause is io.EOF)
// or fails. A stream that reached finish_reason ends normally even without
// [DONE]; otherwise the client gets an error event, never a made-up end.
func (s *ChatToMessagesStream) Close(eof bool, msg string) ([]byte, bool) {
	s.out = s.out[:0]
	switch {
	case s.state >= stateDone:
		return nil, s.state == stateDone
	case eof && s.finish != "":
		s.finalize()
		return s.out, true
	}
	s.fail(anthropic.MarshalError(anthropic.ErrAPI, msg, ""))
	return s.out, false
}

func (s *ChatToMessagesStream) begin() { s.anthropicEvents.begin(s.p) }

func (s *ChatToMessagesStream) reasoning(r gjson.Result) {
	if s.open == blockText {
		s.stopOpen()
	}
	if s.open != blockThinking {
		s.closeTools()
		s.startBlock(blockThinking, `{"type":"thinking","thinking":"","signature":""}`)
		s.thinking.Reset()
	}
	s.thinking.WriteString(r.String())
	s.delta(`{"type":"thinking_delta","thinking":`, quotedRaw(r))
}

// text emits a text delta; quoted is the upstream's JSON string as it was,
// spliced without unescaping and re-encoding.
func (s *ChatToMessagesStream) text(quoted string) {
	if s.open == blockThinking {
		s.stopOpen()
	}
	if s.open != blockText {
		s.closeTools()
		s.startBlock(blockText, `{"type":"text","text":""}`)
	}
	s.delta(`{"type":"text_delta","text":`, quoted)
}

func (s *ChatToMessagesStream) toolCalls(tcs gjson.Result) {
	frags := tcs.Array()
	slices.SortStableFunc(frags, func(a, b gjson.Result) int { return int(a.Get("index").Int() - b.Get("index").Int()) })
	for _, tc := range frags {
		key := int(tc.Get("index").Int())
		id := tc.Get("id").String()
		t := s.tool(key)
		if !tc.Get("index").Exists() && t != nil && id != "" && id != t.id {
			// Upstreams that omit index but send distinct ids: a new call.
			key = s.maxKey() + 1
			t = nil
		}
		if t == nil {
			if len(s.tools) >= maxToolCalls {
				continue
			}
			if s.open != blockNone {
				s.stopOpen()
			}
			t = &toolSlot{key: key, id: strings.Clone(id)}
			s.tools = append(s.tools, t)
		}
		if name := tc.Get("function.name").String(); name != "" && len(t.args) == 0 && name != t.name {
			// A few upstreams split the name itself. Clone: concatenating
			// onto "" would return name, still aliasing the event.
			t.name = strings.Clone(t.name + name)
		}
		if t.id == "" {
			t.id = strings.Clone(id)
		}
		args := tc.Get("function.arguments")
		if args.Type != gjson.String || args.Str == "" {
			continue
		}
		s.toolArgs(t, args)
	}
}

func (s *ChatToMessagesStream) toolArgs(t *toolSlot, args gjson.Result) {
	frag := args.String()
	switch t.state {
	case toolClosed:
		return // a fragment after the call's JSON was complete: a protocol violation, dropped
	case toolNew, toolPending:
		// Buffered until no other tool is live, then replayed in key order.
		t.args = append(t.args, frag...)
		t.state = toolPending
		if s.promote() {
			s.replayPending()
		}
	case toolLive:
		t.args = append(t.args, frag...)
		s.delta(`{"type":"input_json_delta","partial_json":`, quotedRaw(args))
	}
}

// promote closes the live tool if its arguments are complete JSON, making
// room for the next one. It reports whether no tool is live any more.
func (s *ChatToMessagesStream) promote() bool {
	if s.live == nil {
		return true
	}
	if !jsontext.Value(s.live.args).IsValid() {
		return false // still streaming: keep the others buffered
	}
	s.stopBlock(s.openIdx)
	s.live.state = toolClosed
	s.live = nil
	return true
}

// replayPending starts the lowest pending tool, sending what it buffered.
func (s *ChatToMessagesStream) replayPending() {
	for _, t := range s.tools {
		if t.state == toolPending {
			s.startTool(t)
			s.delta(`{"type":"input_json_delta","partial_json":`, string(jsonx.AppendQuote(nil, string(t.args))))
			return
		}
	}
}

func (s *ChatToMessagesStream) startTool(t *toolSlot) {
	name := s.p.clientToolName(t.name)
	b := make([]byte, 0, 96)
	b = append(b, `{"type":"tool_use","id":`...)
	b = jsonx.AppendQuote(b, sanitizeID(t.id))
	b = append(b, `,"name":`...)
	b = jsonx.AppendQuote(b, name)
	b = append(b, `,"input":{}}`...)
	s.openIdx = s.next
	s.startRaw(b)
	t.state = toolLive
	s.live = t
	s.toolsEmitted = true
}

// closeTools stops the live tool and flushes every pending one, each as
// start, one delta with its buffered arguments, stop.
func (s *ChatToMessagesStream) closeTools() {
	if s.live != nil {
		s.stopBlock(s.openIdx)
		s.live.state = toolClosed
		s.live = nil
	}
	for _, t := range s.tools {
		if t.state == toolNew || t.state == toolPending {
			s.startTool(t)
			if len(t.args) > 0 {
				s.delta(`{"type":"input_json_delta","partial_json":`, string(jsonx.AppendQuote(nil, string(t.args))))
			}
			s.stopBlock(s.openIdx)
			t.state = toolClosed
			s.live = nil
		}
	}
}

func (s *ChatToMessagesStream) tool(key int) *toolSlot {
	for _, t := range s.tools {
		if t.key == key {
			return t
		}
	}
	return nil
}

func (s *ChatToMessagesStream) maxKey() int {
	m := -1
	for _, t := range s.tools {
		m = max(m, t.key)
	}
	return m
}

// stopOpen closes the open text or thinking block; a thinking block gets
// its signature first (the upstream's, or a synthetic one).
func (s *ChatToMessagesStream) stopOpen() {
	s.closeOpen(s.sig, s.p.signer)
	s.sig = ""
}

func (s *ChatToMessagesStream) finalize() {
	s.begin()
	if s.open != blockNone {
		s.stopOpen()
	}
	s.closeTools()
	s.end(s.p, stopReason(s.finish, s.toolsEmitted && !s.p.JSONTool, s.refused), s.usage, s.gotUse)
}
