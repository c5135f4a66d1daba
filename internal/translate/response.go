package translate

import (
	"crypto/rand"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/meter"
)

// UpstreamError is an upstream answer that cannot be translated into a
// valid response (HTTP 502 to the client). Err is the cause, if any.
type UpstreamError struct {
	Message string
	Err     error
}

func (e *UpstreamError) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *UpstreamError) Unwrap() error { return e.Err }

// ChatResponseToMessages translates an OpenAI-compatible upstream's
// completion into a Messages response for an Anthropic client (§2.1).
func ChatResponseToMessages(c *openai.Completion, p *Plan) (*anthropic.Response, meter.Usage, error) {
	var u meter.Usage
	openai.SetUsage(&u, string(c.Usage))
	out := &anthropic.Response{
		ID: "msg_" + base62(24), Type: "message", Role: "assistant",
		Model: p.AnswerModel, Content: []anthropic.Block{},
	}
	if len(c.Choices) == 0 {
		return nil, u, &UpstreamError{Message: "upstream returned no choices"}
	}
	ch := c.Choices[0]
	m := ch.Message
	finish := ""
	if ch.FinishReason != nil {
		finish = *ch.FinishReason
	}
	out.Content = append(out.Content, thinkingBlocks(m, p)...)
	refused := false
	if text := messageText(m.Content); text != "" {
		out.Content = append(out.Content, anthropic.Block{Type: "text", Text: text})
	}
	if m.Refusal != nil && *m.Refusal != "" {
		out.Content = append(out.Content, anthropic.Block{Type: "text", Text: *m.Refusal})
		refused = true
	}
	tools := 0
	truncated := false
	for _, tc := range m.ToolCalls {
		input, ok := parseArguments(tc.Function.Arguments)
		if !ok {
			if finish == openai.FinishLength {
				truncated = true // cut off mid-arguments: not a usable call
				continue
			}
			return nil, u, &UpstreamError{Message: fmt.Sprintf("upstream returned malformed arguments for tool %q", tc.Function.Name)}
		}
		out.Content = append(out.Content, anthropic.Block{
			Type: "tool_use", ID: sanitizeID(tc.ID), Name: p.clientToolName(tc.Function.Name), Input: input,
		})
		tools++
	}
	stop := stopReason(finish, tools > 0, refused)
	if truncated {
		stop = anthropic.StopMaxTokens
	}
	out.StopReason = &stop
	out.Usage, _ = jsonx.Marshal(anthropicUsage(u))
	return out, u, nil
}

// thinkingBlocks turns upstream reasoning into thinking blocks: the
// upstream's own signed blocks when it sent them, else one block signed by
// tollgate (SDK types require a signature).
func thinkingBlocks(m openai.ChatMessage, p *Plan) []anthropic.Block {
	var out []anthropic.Block
	for _, tb := range m.ThinkingBlocks {
		switch tb.Type {
		case "thinking":
			out = append(out, anthropic.Block{Type: "thinking", Thinking: tb.Thinking, Signature: tb.Signature})
		case "redacted_thinking":
			out = append(out, anthropic.Block{Type: "redacted_thinking", Data: tb.Data})
		}
	}
	if len(out) > 0 {
		return out
	}
	if r := cmpOr(m.ReasoningContent, m.Reasoning); r != "" {
		sig := m.ReasoningSig
		if sig == "" {
			sig = p.signer.Sign(r)
		}
		out = append(out, anthropic.Block{Type: "thinking", Thinking: r, Signature: sig})
	}
	return out
}

func messageText(c openai.MessageContent) string {
	if c.IsString {
		return c.Text
	}
	var b strings.Builder
	for _, part := range c.Parts {
		if part.Type == "text" {
			b.WriteString(part.Text)
		}
	}
	return b.String()
}

// parseArguments parses tool-call arguments into a tool_use input object.
func parseArguments(args string) (jsontext.Value, bool) {
	if strings.TrimSpace(args) == "" {
		return jsontext.Value("{}"), true
	}
	v := jsontext.Value(args)
	if !v.IsValid() || v.Kind() != '{' {
		return nil, false
	}
	v = v.Clone()
	v.Compact()
	return v, true
}

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
	usage, _ := jsonx.Marshal(openAIUsage(u))
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

// chatID derives a stable chat completion id from a message or response id.
func chatID(msgID string) string {
	for _, prefix := range [...]string{"msg_", "resp_"} { // a message's or a response's id
		if rest, ok := strings.CutPrefix(msgID, prefix); ok && rest != "" {
			return "chatcmpl-" + rest
		}
	}
	if msgID == "" {
		return "chatcmpl-" + base62(24)
	}
	return "chatcmpl-" + msgID
}

const base62Alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

func base62(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	for i := range b {
		b[i] = base62Alphabet[int(b[i])%len(base62Alphabet)]
	}
	return string(b)
}
