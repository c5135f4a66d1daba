package translate

import (
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/meter"
)

// ResponsesAnswerToChat translates a whole Responses answer into a chat
// completion (or, for a stream request, its chunks).
func ResponsesAnswerToChat(body []byte, p *Plan, created int64) (out, stream []byte, u meter.Usage, err error) {
	r, u, err := responseBody(body)
	if err != nil {
		return nil, nil, u, err
	}
	var text, reasoning strings.Builder
	m := openai.ChatMessage{Role: "assistant"}
	refused := false
	for _, it := range r.Get("output").Array() {
		switch it.Get("type").Str {
		case "reasoning":
			if reasoning.Len() > 0 {
				reasoning.WriteString("\n\n")
			}
			reasoning.WriteString(summaryText(it))
		case "message":
			for _, c := range it.Get("content").Array() {
				if c.Get("type").Str == "refusal" {
					refused = true
					text.WriteString(c.Get("refusal").Str)
					continue
				}
				text.WriteString(c.Get("text").Str)
			}
		case "function_call", "custom_tool_call":
			if it.Get("name").Str == "" {
				return nil, nil, u, &UpstreamError{Message: errNamelessCall}
			}
			args := callArguments(it)
			m.ToolCalls = append(m.ToolCalls, openai.ToolCall{ID: it.Get("call_id").Str, Type: "function",
				Function: openai.FunctionCall{Name: p.clientToolName(it.Get("name").Str), Arguments: args}})
		}
	}
	m.Content = openai.MessageContent{Null: true}
	if text.Len() > 0 {
		m.Content = textContent(text.String())
	}
	m.ReasoningContent = reasoning.String()
	stop := responsesStop(r, len(m.ToolCalls) > 0)
	if refused {
		stop = anthropic.StopRefusal
	}
	finish := finishReason(stop, false)
	usage := encodeOpenAIUsage(u)
	c := &openai.Completion{ID: chatID(r.Get("id").Str), Object: "chat.completion", Created: created, Model: p.AnswerModel,
		Choices: []openai.Choice{{Message: m, Logprobs: jsontext.Value("null"), FinishReason: &finish}}, Usage: usage}
	if p.Stream {
		return nil, ChatStream(c, p), u, nil
	}
	out, err = encodeCompletion(c)
	return out, nil, u, err
}
