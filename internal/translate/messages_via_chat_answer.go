package translate

import (
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/meter"
)

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

// OpenAIErrorToAnthropic maps an OpenAI-compatible upstream error to the
// status and body an Anthropic client gets (TRANSLATION.md §4.3). A zero
// status (an error chunk inside a stream) is inferred from the body.
func OpenAIErrorToAnthropic(status int, body []byte) (int, []byte) {
	e := gjson.GetBytes(body, "error")
	otype, code := e.Get("type").String(), e.Get("code").String()
	msg := errorMessage(body, "error.message")
	if status == 0 {
		status = openai.StatusForError(otype, code)
	}
	out, atype := status, anthropic.ErrAPI
	switch {
	case status == 401 || status == 402 || code == "insufficient_quota":
		out, atype = 502, anthropic.ErrAPI
		msg = "upstream rejected the gateway's credential or account: " + msg
	case status == 403:
		atype = anthropic.ErrPermission
	case status == 404:
		atype = anthropic.ErrNotFound
	case status == 409:
		atype = "conflict_error"
	case status == 413:
		atype = anthropic.ErrRequestTooLarge
	case status == 429:
		atype = anthropic.ErrRateLimit
	case status == 503:
		out, atype = 529, anthropic.ErrOverloaded
	case status == 504:
		atype = anthropic.ErrTimeout
	case status >= 500:
	case status >= 400:
		out, atype = 400, anthropic.ErrInvalidRequest
		if code == "context_length_exceeded" {
			msg = promptTooLong(msg)
		}
	}
	return out, anthropic.MarshalError(atype, msg, "")
}

// ChatAnswerToMessages translates a whole Chat Completions answer into a
// Messages answer, and when the client asked for a stream, into the events
// of one. An answer that cannot be translated is an *UpstreamError.
func ChatAnswerToMessages(body []byte, p *Plan, _ int64) (out, stream []byte, u meter.Usage, err error) {
	var c openai.Completion
	if err := decode(body, &c); err != nil {
		return nil, nil, u, &UpstreamError{Message: "upstream answer is not a valid chat completion", Err: err}
	}
	msg, u, err := ChatResponseToMessages(&c, p)
	if err != nil {
		return nil, nil, u, err
	}
	if p.Stream {
		return nil, MessagesStream(msg), u, nil
	}
	out, err = encodeMessagesResponse(msg)
	return out, nil, u, err
}

// OpenAIErrorToAnthropicRetry is OpenAIErrorToAnthropic with whether the
// client should not retry: an upstream that refused the gateway's account.
func OpenAIErrorToAnthropicRetry(status int, body []byte) (int, []byte, bool) {
	out, b := OpenAIErrorToAnthropic(status, body)
	return out, b, out == 502
}
