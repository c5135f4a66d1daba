package translate

import (
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/api/gemini"
	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/meter"
)

// geminiFinishReason is the Chat finish_reason of a Gemini answer.
func geminiFinishReason(finish string, toolsEmitted, blocked bool) string {
	return finishReason(geminiStopReason(finish, toolsEmitted, blocked), false)
}

// geminiToolCall is a Gemini function call as a Chat tool call: its id
// carries the part's signature; its arguments are compact JSON.
func (p *Plan) geminiToolCall(fc gjson.Result, sig string) openai.ToolCall {
	args := fc.Get("args").Raw
	if args == "" || args == "null" {
		args = "{}"
	}
	a := jsontext.Value(args).Clone()
	a.Compact()
	return openai.ToolCall{ID: p.callIDWithSignature(geminiCallIDWith(fc.Get("id").String(), "call_"), sig), Type: "function",
		Function: openai.FunctionCall{Name: p.clientToolName(fc.Get("name").String()), Arguments: string(a)}}
}

// GeminiAnswerToChat translates a whole Gemini answer into a chat
// completion, and when the client asked for a stream, into its chunks.
func GeminiAnswerToChat(body []byte, p *Plan, created int64) (out, stream []byte, u meter.Usage, err error) {
	r := gjson.ParseBytes(body)
	if !r.IsObject() {
		return nil, nil, u, &UpstreamError{Message: "upstream answer is not a valid Gemini response"}
	}
	gemini.SetUsage(&u, r.Get("usageMetadata").Raw)
	m := openai.ChatMessage{Role: "assistant"}
	var text, reasoning strings.Builder
	c := r.Get("candidates.0")
	for _, part := range c.Get("content.parts").Array() {
		switch {
		case part.Get("thought").Bool():
			reasoning.WriteString(part.Get("text").String())
		case part.Get("functionCall").IsObject() && part.Get("functionCall").Get("name").String() == "":
			// A call without a name cannot be run or answered: left out.
		case part.Get("functionCall").IsObject():
			m.ToolCalls = append(m.ToolCalls, p.geminiToolCall(part.Get("functionCall"), part.Get("thoughtSignature").String()))
		default:
			text.WriteString(part.Get("text").String())
		}
	}
	if text.Len() > 0 {
		m.Content = textContent(text.String())
	} else {
		m.Content = openai.MessageContent{Null: true}
	}
	m.ReasoningContent = reasoning.String()
	blocked := !c.Exists() && r.Get("promptFeedback.blockReason").String() != ""
	finish := geminiFinishReason(c.Get("finishReason").String(), len(m.ToolCalls) > 0, blocked)
	usage := encodeOpenAIUsage(u)
	completion := &openai.Completion{ID: chatID(r.Get("responseId").String()), Object: "chat.completion", Created: created, Model: p.AnswerModel,
		Choices: []openai.Choice{{Index: 0, Message: m, Logprobs: jsontext.Value("null"), FinishReason: &finish}}, Usage: usage}
	if p.Stream {
		return nil, ChatStream(completion, p), u, nil
	}
	out, err = encodeCompletion(completion)
	return out, nil, u, err
}

// GeminiErrorToOpenAI translates a Gemini error answer (status 0: a
// stream's error event) into the OpenAI envelope, through the Anthropic
// error it reads as.
func GeminiErrorToOpenAI(status int, body []byte) (int, []byte, bool) {
	st, ab, _ := GeminiErrorToAnthropic(status, body)
	return AnthropicErrorToOpenAI(st, ab)
}
