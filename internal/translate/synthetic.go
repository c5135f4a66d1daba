package translate

import (
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/sse"
)

// MessagesStream renders a whole Messages response as the event stream a
// streaming client expects, for upstreams that answered a stream request
// with one JSON object (TRANSLATION.md §3.5). Tool input travels in one
// input_json_delta, never only in content_block_start, which clients ignore.
func MessagesStream(r *anthropic.Response) []byte {
	start := *r
	start.Content = []anthropic.Block{}
	start.StopReason, start.StopSequence = nil, nil
	var out []byte
	msg, _ := jsonx.Marshal(messageStart{Type: "message_start", Message: start})
	out = sse.AppendEvent(out, "message_start", msg)
	for i, b := range r.Content {
		var open anthropic.Block
		var deltas []string
		switch b.Type {
		case "text":
			open = anthropic.Block{Type: "text"}
			deltas = append(deltas, `{"type":"text_delta","text":`+quote(b.Text)+`}`)
		case "thinking":
			open = anthropic.Block{Type: "thinking"}
			deltas = append(deltas, `{"type":"thinking_delta","thinking":`+quote(b.Thinking)+`}`,
				`{"type":"signature_delta","signature":`+quote(b.Signature)+`}`)
		case "tool_use":
			open = anthropic.Block{Type: "tool_use", ID: b.ID, Name: b.Name, Input: jsontext.Value("{}")}
			deltas = append(deltas, `{"type":"input_json_delta","partial_json":`+quote(string(b.Input))+`}`)
		default:
			open = b // redacted thinking and others start whole
		}
		blockJSON, _ := jsonx.Marshal(open)
		if b.Type == "text" {
			blockJSON = []byte(`{"type":"text","text":""}`)
		} else if b.Type == "thinking" {
			blockJSON = []byte(`{"type":"thinking","thinking":"","signature":""}`)
		}
		idx := strconv.Itoa(i)
		out = sse.AppendEvent(out, "content_block_start", []byte(`{"type":"content_block_start","index":`+idx+`,"content_block":`+string(blockJSON)+`}`))
		for _, d := range deltas {
			out = sse.AppendEvent(out, "content_block_delta", []byte(`{"type":"content_block_delta","index":`+idx+`,"delta":`+d+`}`))
		}
		out = sse.AppendEvent(out, "content_block_stop", []byte(`{"type":"content_block_stop","index":`+idx+`}`))
	}
	stop := anthropic.StopEndTurn
	if r.StopReason != nil {
		stop = *r.StopReason
	}
	var usage anthropic.Usage
	jsonx.Unmarshal(r.Usage, &usage)
	md, _ := jsonx.Marshal(messageDelta{Type: "message_delta", Delta: stopDelta{StopReason: stop}, Usage: usage})
	out = sse.AppendEvent(out, "message_delta", md)
	return sse.AppendEvent(out, "message_stop", []byte(`{"type":"message_stop"}`))
}

// ChatStream renders a whole completion as Chat Completions chunks: the
// role first, content, reasoning and each tool call (id and name in its
// first fragment, arguments in a second), then finish_reason in a chunk of
// its own, the usage chunk when the client asked, and [DONE].
func ChatStream(c *openai.Completion, p *Plan) []byte {
	s := &MessagesToChatStream{p: p, chatChunks: chatChunks{created: c.Created}}
	s.start(c.ID)
	out := s.out
	if len(c.Choices) > 0 {
		m := c.Choices[0].Message
		if m.ReasoningContent != "" {
			s.out = out
			s.chunkRaw(`{"reasoning_content":`, quote(m.ReasoningContent), `}`)
			out = s.out
		}
		if text := messageText(m.Content); text != "" {
			s.out = out
			s.chunkRaw(`{"content":`, quote(text), `}`)
			out = s.out
		}
		for k, tc := range m.ToolCalls {
			s.out = out
			pre := `{"tool_calls":[{"index":` + strconv.Itoa(k) + `,"id":` + quote(tc.ID) + `,"type":"function","function":{"name":` + quote(tc.Function.Name) + `,"arguments":`
			s.chunkRaw(pre, `""`, `}}]}`)
			s.chunkRaw(`{"tool_calls":[{"index":`+strconv.Itoa(k)+`,"function":{"arguments":`, quote(tc.Function.Arguments), `}}]}`)
			out = s.out
		}
	}
	finish := openai.FinishStop
	if len(c.Choices) > 0 && c.Choices[0].FinishReason != nil {
		finish = *c.Choices[0].FinishReason
	}
	b := append(out, "data: "...)
	b = append(b, s.prefix...)
	b = append(b, `{},"logprobs":null,"finish_reason":`...)
	b = append(b, quote(finish)...)
	b = append(b, `}]`...)
	if p.IncludeUsage {
		b = append(b, `,"usage":null`...)
	}
	b = append(b, "}\n\n"...)
	if p.IncludeUsage && len(c.Usage) > 0 {
		u := append([]byte(nil), s.prefix[:len(s.prefix)-len(`{"index":0,"delta":`)]...)
		u = append(u, `],"usage":`...)
		u = append(u, c.Usage...)
		u = append(u, '}')
		b = sse.AppendEvent(b, "", u)
	}
	return append(b, "data: [DONE]\n\n"...)
}

func quote(s string) string { return string(jsonx.AppendQuote(nil, s)) }
