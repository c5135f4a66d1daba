package translate

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/meter"
	"github.com/tollgate/tollgate/internal/sse"
)

// MessagesToChatStream turns an Anthropic upstream's event stream into
// Chat Completions chunks (TRANSLATION.md §3.3): one id on every chunk, the
// role once, tool-call indexes dense per message whatever blocks come
// before, exactly one finish_reason chunk, a usage chunk only when the
// client asked, and [DONE] only after a normal end. It is created per
// request and is not safe for concurrent use.
type MessagesToChatStream struct {
	p *Plan
	f sse.Fields
	chatChunks

	blocks   []upstreamBlock
	toolIdx  []int // block index → OpenAI tool-call index
	nextTool int

	stop  string
	usage meter.Usage
}

// NewMessagesToChatStream starts a translated stream for p; created is the
// unix time shown on every chunk.
func NewMessagesToChatStream(p *Plan, created int64) *MessagesToChatStream {
	return &MessagesToChatStream{p: p, chatChunks: chatChunks{created: created}}
}

// Usage is the usage the upstream reported so far, in buckets.
func (s *MessagesToChatStream) Usage() meter.Usage { return s.usage }

// StartError reports whether ev, the upstream's first event, is an error
// event; if so it returns the status and OpenAI error body to answer with.
func (s *MessagesToChatStream) StartError(ev []byte) (int, []byte, bool) {
	return anthropicStartError(&s.f, ev)
}

// Feed takes one complete upstream SSE event and returns the client bytes
// it produces (valid until the next call).
func (s *MessagesToChatStream) Feed(ev []byte) []byte {
	s.out = s.out[:0]
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
	switch name {
	case "message_start":
		anthropic.MergeEventUsage(&s.usage, name, data)
		s.begin(gjson.Get(data, "message.id").Str)
	case "content_block_start":
		s.begin("")
		s.blockStart(gjson.Get(data, "index"), gjson.Get(data, "content_block"))
	case "content_block_delta":
		s.begin("")
		s.blockDelta(int(gjson.Get(data, "index").Int()), gjson.Get(data, "delta"))
	case "message_delta":
		if r := gjson.Get(data, "delta.stop_reason"); r.Type == gjson.String {
			s.stop = strings.Clone(r.Str) // the event's bytes are reused after Feed
		}
		anthropic.MergeEventUsage(&s.usage, name, data) // cumulative; only present fields overwrite
	case "message_stop":
		s.finalize()
	case "ping":
		if s.state == stateStreaming {
			s.out = append(s.out, ": ping\n\n"...) // a comment, not an empty chunk
		}
	case "error":
		_, body, _ := AnthropicErrorToOpenAI(0, s.f.Data)
		s.fail(body)
	}
	// content_block_stop and unknown events produce nothing.
	return s.out
}

// Close ends the stream when the upstream's body ends or fails before
// message_stop: an error chunk and no [DONE], never a made-up finish.
func (s *MessagesToChatStream) Close(eof bool, msg string) ([]byte, bool) {
	s.out = s.out[:0]
	if s.state >= stateDone {
		return nil, s.state == stateDone
	}
	s.fail(openai.MarshalError(openai.ErrServer, msg, "", "upstream_stream_interrupted"))
	return s.out, false
}

func (s *MessagesToChatStream) begin(msgID string) {
	if s.state == stateBefore {
		s.start(chatID(msgID))
	}
}

// start emits the first chunk, under the given chunk id.
func (s *MessagesToChatStream) start(id string) { s.chatChunks.start(s.p, id) }

func (s *MessagesToChatStream) blockStart(index, block gjson.Result) {
	i := int(index.Int())
	if !index.Exists() || i < 0 || i >= maxContentBlocks {
		return
	}
	for len(s.blocks) <= i {
		s.blocks = append(s.blocks, ublockIgnored)
		s.toolIdx = append(s.toolIdx, -1)
	}
	switch block.Get("type").Str {
	case "text":
		s.blocks[i] = ublockText
		if t := block.Get("text"); t.Type == gjson.String && t.Raw != `""` {
			s.chunkRaw(`{"content":`, quotedRaw(t), `}`)
		}
	case "thinking":
		s.blocks[i] = ublockThinking
		if t := block.Get("thinking"); t.Type == gjson.String && t.Raw != `""` {
			s.chunkRaw(`{"reasoning_content":`, quotedRaw(t), `}`)
		}
	case "redacted_thinking":
		if s.p.Caps.ExposeThinkingBlocks {
			s.chunkRaw(`{"thinking_blocks":[{"type":"redacted_thinking","data":`, quotedRaw(block.Get("data")), `}]}`)
		}
	case "tool_use":
		name := block.Get("name").Str
		if s.p.JSONTool && name == jsonToolName {
			s.blocks[i] = ublockJSON
			return
		}
		if name == "" {
			return // malformed: a call without a name cannot be made; ignored
		}
		id := block.Get("id").Str
		if id == "" {
			id = "call_" + base62(24)
		}
		s.blocks[i] = ublockTool
		k := s.nextTool
		s.nextTool++
		s.toolIdx[i] = k
		args := `""`
		// Synthetic upstreams may put the whole input in the start event.
		if in := block.Get("input"); in.IsObject() && len(in.Map()) > 0 {
			args = string(jsonx.AppendQuote(nil, in.Raw))
		}
		b := []byte(`{"tool_calls":[{"index":`)
		b = strconv.AppendInt(b, int64(k), 10)
		b = append(b, `,"id":`...)
		b = jsonx.AppendQuote(b, id)
		b = append(b, `,"type":"function","function":{"name":`...)
		b = jsonx.AppendQuote(b, s.p.clientToolName(name))
		b = append(b, `,"arguments":`...)
		b = append(b, args...)
		b = append(b, `}}]}`...)
		s.chunk(string(b))
	}
}

func (s *MessagesToChatStream) blockDelta(i int, d gjson.Result) {
	if i < 0 || i >= len(s.blocks) {
		return // a delta for a block never started
	}
	switch d.Get("type").Str {
	case "text_delta":
		if s.blocks[i] == ublockText {
			if t := d.Get("text"); t.Raw != `""` && t.Type == gjson.String {
				s.chunkRaw(`{"content":`, quotedRaw(t), `}`)
			}
		}
	case "thinking_delta":
		if t := d.Get("thinking"); t.Raw != `""` && t.Type == gjson.String {
			s.chunkRaw(`{"reasoning_content":`, quotedRaw(t), `}`)
		}
	case "signature_delta":
		if s.p.Caps.ExposeThinkingBlocks {
			s.chunkRaw(`{"thinking_blocks":[{"type":"thinking","signature":`, quotedRaw(d.Get("signature")), `}]}`)
		}
	case "input_json_delta":
		pj := d.Get("partial_json")
		if pj.Type != gjson.String || pj.Raw == `""` {
			return
		}
		switch s.blocks[i] {
		case ublockTool:
			pre := `{"tool_calls":[{"index":` + strconv.Itoa(s.toolIdx[i]) + `,"function":{"arguments":`
			s.chunkRaw(pre, quotedRaw(pj), `}}]}`)
		case ublockJSON:
			s.chunkRaw(`{"content":`, quotedRaw(pj), `}`)
		}
	}
	// citations_delta and unknown deltas are dropped.
}

func (s *MessagesToChatStream) finalize() {
	s.begin("")
	s.end(s.p, finishReason(s.stop, s.p.JSONTool), s.usage)
}
