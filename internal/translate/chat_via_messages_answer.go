package translate

import (
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/meter"
)

// MessagesResponseToChat translates an Anthropic upstream's Messages
// response into a completion for an OpenAI client (§2.2).
func MessagesResponseToChat(r *anthropic.Response, p *Plan, created int64) (*openai.Completion, meter.Usage) {
	var u meter.Usage
	anthropic.MergeUsage(&u, string(r.Usage))
	var text, reasoning strings.Builder
	m := openai.ChatMessage{Role: "assistant"}
	for _, b := range r.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text) // every text block, in order
		case "thinking":
			reasoning.WriteString(b.Thinking)
			if p.Caps.ExposeThinkingBlocks {
				m.ThinkingBlocks = append(m.ThinkingBlocks, openai.ThinkingBlock{Type: "thinking", Thinking: b.Thinking, Signature: b.Signature})
			}
		case "redacted_thinking":
			if p.Caps.ExposeThinkingBlocks {
				m.ThinkingBlocks = append(m.ThinkingBlocks, openai.ThinkingBlock{Type: "redacted_thinking", Data: b.Data})
			}
		case "tool_use":
			input := compactInput(b.Input)
			if p.JSONTool && b.Name == jsonToolName {
				text.Write(input) // the forced tool's input is the structured answer
				continue
			}
			m.ToolCalls = append(m.ToolCalls, openai.ToolCall{
				ID: b.ID, Type: "function",
				Function: openai.FunctionCall{Name: p.clientToolName(b.Name), Arguments: string(input)},
			})
		}
		// server_tool_use and server tool results were executed upstream:
		// they are not calls for the client to run.
	}
	if text.Len() > 0 {
		m.Content = textContent(text.String())
	} else {
		m.Content = openai.MessageContent{Null: true}
	}
	m.ReasoningContent = reasoning.String()
	stop := ""
	if r.StopReason != nil {
		stop = *r.StopReason
	}
	finish := finishReason(stop, p.JSONTool)
	usage := encodeOpenAIUsage(u)
	return &openai.Completion{
		ID: chatID(r.ID), Object: "chat.completion", Created: created, Model: p.AnswerModel,
		Choices: []openai.Choice{{Index: 0, Message: m, Logprobs: jsontext.Value("null"), FinishReason: &finish}},
		Usage:   usage,
	}, u
}

// compactInput is a tool_use block's input as compact JSON ({} when
// absent), a copy of it.
func compactInput(in jsontext.Value) jsontext.Value {
	v := in.Clone()
	if len(v) == 0 {
		return jsontext.Value("{}")
	}
	v.Compact()
	return v
}

// AnthropicErrorToOpenAI maps an Anthropic upstream error (status and body)
// to the status and body an OpenAI client gets (TRANSLATION.md §4.2).
// Upstream credential and billing failures become 502: the client's own
// key was fine. noRetry means the answer should carry x-should-retry: false.
func AnthropicErrorToOpenAI(status int, body []byte) (int, []byte, bool) {
	typ := gjson.GetBytes(body, "error.type").String()
	msg := errorMessage(body, "error.message")
	if status == 0 { // an error event inside a stream carries no status
		status = anthropic.StatusForErrorType(typ)
	}
	out, otype, code, noRetry := status, openai.ErrServer, "", false
	switch {
	case status == 401 || typ == anthropic.ErrAuthentication:
		out, code, noRetry = 502, "upstream_auth_failed", true
		msg = "upstream rejected the gateway's credential: " + msg
	case status == 402 || typ == anthropic.ErrBilling:
		out, code, noRetry = 502, "upstream_billing", true
		msg = "upstream billing error: " + msg
	case status == 403:
		otype = openai.ErrPermission
	case status == 404:
		otype = openai.ErrInvalidRequest
		if strings.Contains(msg, "model") {
			code = "model_not_found"
		}
	case status == 413:
		otype, code = openai.ErrInvalidRequest, "request_too_large"
	case status == 429:
		otype, code = openai.ErrRateLimit, "rate_limit_exceeded"
	case status == 529 || typ == anthropic.ErrOverloaded:
		out, otype, code = 503, openai.ErrUnavailable, "server_is_overloaded"
	case status == 504 || typ == anthropic.ErrTimeout:
		out, code = 504, "timeout"
	case status >= 500:
	case status >= 400:
		otype = openai.ErrInvalidRequest
		if strings.HasPrefix(msg, "prompt is too long") {
			code = "context_length_exceeded"
		}
	}
	return out, openai.MarshalError(otype, msg, "", code), noRetry
}

// MessagesAnswerToChat translates a whole Messages answer into a Chat
// Completions answer (created is its timestamp), and when the client asked
// for a stream, into its chunks. An answer that cannot be translated is an
// *UpstreamError.
func MessagesAnswerToChat(body []byte, p *Plan, created int64) (out, stream []byte, u meter.Usage, err error) {
	var m anthropic.Response
	if err := decode(body, &m); err != nil {
		return nil, nil, u, &UpstreamError{Message: "upstream answer is not a valid message", Err: err}
	}
	c, u := MessagesResponseToChat(&m, p, created)
	if p.Stream {
		return nil, ChatStream(c, p), u, nil
	}
	out, err = encodeCompletion(c)
	return out, nil, u, err
}
