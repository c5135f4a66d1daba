package translate

import (
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/meter"
)

// ResponsesAnswerToMessages translates a whole Responses answer into a
// Messages answer (or, for a stream request, its events). Reasoning items
// become thinking blocks whose signature seals the item (redacted thinking
// when the item has no summary), so the next turn gives it back.
func ResponsesAnswerToMessages(body []byte, p *Plan, _ int64) (out, stream []byte, u meter.Usage, err error) {
	r, u, err := responseBody(body)
	if err != nil {
		return nil, nil, u, err
	}
	msg := anthropic.Response{ID: "msg_" + base62(24), Type: "message", Role: "assistant", Model: p.AnswerModel, Content: []anthropic.Block{}}
	tools := false
	for _, it := range r.Get("output").Array() {
		switch it.Get("type").Str {
		case "reasoning":
			text := summaryText(it)
			if text == "" {
				msg.Content = append(msg.Content, anthropic.Block{Type: "redacted_thinking", Data: p.sealItem([]byte(it.Raw))})
			} else {
				msg.Content = append(msg.Content, anthropic.Block{Type: "thinking", Thinking: text, Signature: p.sealItem([]byte(it.Raw))})
			}
		case "message":
			for _, c := range it.Get("content").Array() {
				text := c.Get("text").Str
				if c.Get("type").Str == "refusal" {
					text = c.Get("refusal").Str
				}
				if text != "" {
					msg.Content = append(msg.Content, anthropic.Block{Type: "text", Text: text})
				}
			}
		case "function_call", "custom_tool_call":
			if it.Get("name").Str == "" {
				return nil, nil, u, &UpstreamError{Message: errNamelessCall}
			}
			input, ok := parseArguments(callArguments(it))
			if !ok {
				input = jsontext.Value("{}")
			}
			tools = true
			msg.Content = append(msg.Content, anthropic.Block{Type: "tool_use", ID: sanitizeID(it.Get("call_id").Str),
				Name: p.clientToolName(it.Get("name").Str), Input: input})
		}
		// Hosted tools' items ran upstream: not the client's to run.
	}
	stop := responsesStop(r, tools)
	msg.StopReason = &stop
	msg.Usage = mustJSON(anthropicUsage(u))
	if p.Stream {
		return nil, MessagesStream(&msg), u, nil
	}
	out, err = encodeMessagesResponse(&msg)
	return out, nil, u, err
}
