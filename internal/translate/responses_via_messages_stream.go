package translate

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/meter"
	"github.com/tollgate/tollgate/internal/sse"
)

// MessagesToResponsesStream turns an Anthropic upstream's event stream into
// Responses events for a Responses client: each content block one output
// item, a thinking block's signature sealed into its reasoning item when
// the block ends. It is made per request and is not safe for concurrent
// use.
type MessagesToResponsesStream struct {
	p     *Plan
	w     *rsOut
	f     sse.Fields
	state streamState
	kind  upstreamBlock // the open block's kind
	index int64         // and its index
	sig   []byte        // a thinking block's signature so far
	block []byte        // a redacted_thinking block's data
	stop  string
	usage meter.Usage
}

// NewMessagesToResponsesStream starts a translated stream for p.
func NewMessagesToResponsesStream(p *Plan, created int64) *MessagesToResponsesStream {
	return &MessagesToResponsesStream{p: p, w: newRSOut(p, created), index: -1}
}

// Usage is the usage the upstream reported so far.
func (s *MessagesToResponsesStream) Usage() meter.Usage { return s.usage }

// StartError reports whether ev, the upstream's first event, is an error
// event; if so it returns the status and OpenAI error body to answer with.
func (s *MessagesToResponsesStream) StartError(ev []byte) (int, []byte, bool) {
	return anthropicStartError(&s.f, ev)
}

// Feed takes one complete upstream event and returns the client's events
// (valid until the next call).
func (s *MessagesToResponsesStream) Feed(ev []byte) []byte {
	w := s.w
	w.out = w.out[:0]
	if s.state >= stateDone {
		return nil
	}
	s.f.Parse(ev)
	if s.f.Data == nil {
		return nil
	}
	data := unsafeString(s.f.Data)
	name := unsafeString(s.f.Name)
	if name == "" {
		name = gjson.Get(data, "type").Str
	}
	if s.state == stateBefore && name != "error" {
		s.state = stateStreaming
		w.begin()
	}
	switch name {
	case "message_start", "message_delta":
		anthropic.MergeEventUsage(&s.usage, name, data) // cumulative; only present fields overwrite
		if r := gjson.Get(data, "delta.stop_reason"); r.Type == gjson.String {
			s.stop = strings.Clone(r.Str) // the event's bytes are reused after Feed
		}
	case "content_block_start":
		s.blockStart(gjson.Get(data, "index"), gjson.Get(data, "content_block"))
	case "content_block_delta":
		// One pass over the event and one over its delta: these are most
		// of a stream.
		var index, delta gjson.Result
		gjson.Parse(data).ForEach(func(k, v gjson.Result) bool {
			switch k.Str {
			case "index":
				index = v
			case "delta":
				delta = v
			}
			return true
		})
		if index.Int() == s.index && delta.IsObject() {
			s.blockDelta(delta)
		}
	case "content_block_stop":
		if gjson.Get(data, "index").Int() == s.index {
			s.blockStop()
		}
	case "message_stop":
		s.blockStop()
		s.state = stateDone
		w.finish(messagesIncomplete(s.stop), s.usage, true)
	case "ping":
		if s.state == stateStreaming {
			w.out = append(w.out, ": ping\n\n"...) // a comment keeps idle clients waiting
		}
	case "error":
		e := gjson.Get(data, "error")
		s.state = stateFailed
		w.fail(failureCode(e.Get("type").Str), cmpOr(e.Get("message").Str, "upstream error"))
	}
	return w.out
}

func (s *MessagesToResponsesStream) blockStart(index, block gjson.Result) {
	s.blockStop() // blocks do not overlap; a missing stop closes the last one
	if !index.Exists() {
		return
	}
	w := s.w
	s.index, s.kind = index.Int(), ublockIgnored
	s.sig, s.block = s.sig[:0], s.block[:0]
	switch block.Get("type").Str {
	case "text":
		s.kind = ublockText
		w.closeOpen()
		t := block.Get("text")
		w.outputText(t.Str, quotedRaw(t))
	case "thinking":
		s.kind = ublockThinking
		w.closeOpen() // one reasoning item per block
		t := block.Get("thinking")
		w.reasoning(t.Str, quotedRaw(t))
		s.sig = append(s.sig, block.Get("signature").Str...)
	case "redacted_thinking":
		s.kind = ublockThinking
		w.closeOpen()
		w.openReasoning()
		s.block = append(s.block, block.Get("data").Str...)
	case "server_tool_use":
		if block.Get("name").Str == "web_search" {
			s.kind = ublockSearch
			w.closeOpen()
			s.block = append(s.block, block.Get("input.query").Str...) // complete when sent whole
		}
	case "tool_use":
		name := strings.Clone(block.Get("name").Str) // the event's bytes are reused after Feed
		if s.p.JSONTool && name == jsonToolName {
			s.kind = ublockJSON
			w.openMessage()
			return
		}
		if name == "" {
			return // a call without a name cannot be made
		}
		s.kind = ublockTool
		w.call(cmpOr(strings.Clone(block.Get("id").Str), "toolu_"+randomHex(12)), s.p.responsesTool(name))
		// Synthetic upstreams may put the whole input in the start event.
		if in := block.Get("input"); in.IsObject() && len(in.Map()) > 0 {
			w.arguments(in.Raw, quote(in.Raw))
		}
	}
}

func (s *MessagesToResponsesStream) blockDelta(d gjson.Result) {
	w := s.w
	var typ, value gjson.Result // the delta's type and its one payload member
	d.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "type":
			typ = v
		case "text", "thinking", "signature", "partial_json":
			value = v
		}
		return true
	})
	switch typ.Str {
	case "text_delta":
		if t := value; s.kind == ublockText && t.Type == gjson.String {
			w.outputText(t.Str, quotedRaw(t))
		}
	case "thinking_delta":
		if t := value; s.kind == ublockThinking && t.Type == gjson.String {
			w.reasoning(t.Str, quotedRaw(t))
		}
	case "signature_delta":
		if s.kind == ublockThinking {
			s.sig = append(s.sig, value.Str...)
		}
	case "input_json_delta":
		pj := value
		if pj.Type != gjson.String || pj.Str == "" {
			return
		}
		switch s.kind {
		case ublockSearch:
			s.block = append(s.block, pj.Str...) // the input's JSON, in pieces
		case ublockTool:
			w.arguments(pj.Str, quotedRaw(pj))
		case ublockJSON:
			w.outputText(pj.Str, quotedRaw(pj))
		}
	}
	// citations_delta and unknown deltas carry nothing the client reads.
}

// blockStop ends the open block's item; a thinking block's item gets the
// sealed block, signature and all.
func (s *MessagesToResponsesStream) blockStop() {
	if s.index < 0 {
		return
	}
	w := s.w
	switch s.kind {
	case ublockThinking:
		b := anthropic.Block{Type: "thinking", Thinking: string(w.text), Signature: string(s.sig)}
		if len(s.block) > 0 {
			b = anthropic.Block{Type: "redacted_thinking", Data: string(s.block)}
		}
		w.seal(s.p.sealBlock(b))
		w.closeOpen()
	case ublockText, ublockTool:
		w.closeOpen()
	case ublockSearch:
		query := string(s.block)
		if q := gjson.Get(query, "query"); q.Type == gjson.String {
			query = q.Str // the input came as JSON deltas
		}
		w.webSearch(query)
	}
	// The structured-output message stays open: message_stop ends it.
	s.index, s.kind = -1, ublockIgnored
}

// Close ends the stream when the upstream's body ends or fails before
// message_stop: response.failed, never a made-up completion.
func (s *MessagesToResponsesStream) Close(eof bool, msg string) ([]byte, bool) {
	w := s.w
	w.out = w.out[:0]
	if s.state >= stateDone {
		return nil, s.state == stateDone
	}
	s.state = stateFailed
	w.fail("server_error", msg)
	return w.out, false
}
