package translate

import (
	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/api/responses"
	"github.com/tollgate/tollgate/internal/meter"
)

// ChatAnswerToResponses translates a whole Chat Completions answer into
// the response a Responses client asked for, and when it asked for a
// stream, into the events of one. An answer that cannot be translated is
// an *UpstreamError.
func ChatAnswerToResponses(body []byte, p *Plan, created int64) (out, stream []byte, u meter.Usage, err error) {
	var c openai.Completion
	if err := decode(body, &c); err != nil {
		return nil, nil, u, &UpstreamError{Message: "upstream answer is not a valid chat completion", Err: err}
	}
	w, u, err := chatAnswerItems(&c, p, created, !p.Stream)
	if err != nil {
		return nil, nil, u, err
	}
	if p.Stream {
		return nil, w.out, u, nil
	}
	out = w.response.AppendJSON(nil)
	return out, nil, u, err
}

// ChatResponseToResponses translates an OpenAI-compatible upstream's
// completion into the response a Responses client asked for.
func ChatResponseToResponses(c *openai.Completion, p *Plan, created int64) (*responses.Response, meter.Usage, error) {
	w, u, err := chatAnswerItems(c, p, created, true)
	if err != nil {
		return nil, u, err
	}
	return &w.response, u, nil
}

// chatAnswerItems writes a completion as output items: the events of a
// stream, or (quiet) only the finished response.
func chatAnswerItems(c *openai.Completion, p *Plan, created int64, quiet bool) (*rsOut, meter.Usage, error) {
	var u meter.Usage
	openai.SetUsage(&u, string(c.Usage))
	if len(c.Choices) == 0 {
		return nil, u, &UpstreamError{Message: "upstream returned no choices"}
	}
	w := newRSOut(p, created)
	w.quiet = quiet
	ch := c.Choices[0]
	m := ch.Message
	if r := cmpOr(m.ReasoningContent, m.Reasoning); r != "" {
		w.reasoning(r, quote(r))
	}
	if text := messageText(m.Content); text != "" {
		w.outputText(text, quote(text))
	}
	if m.Refusal != nil && *m.Refusal != "" {
		w.outputText(*m.Refusal, quote(*m.Refusal))
	}
	for _, tc := range m.ToolCalls {
		if tc.Function.Name == "" {
			return nil, u, &UpstreamError{Message: "upstream returned a tool call without a function name"}
		}
		w.call(cmpOr(tc.ID, "call_"+randomHex(12)), p.responsesTool(tc.Function.Name))
		if a := tc.Function.Arguments; a != "" {
			w.arguments(a, quote(a))
		}
	}
	finish := ""
	if ch.FinishReason != nil {
		finish = *ch.FinishReason
	}
	w.finish(incompleteReason(finish), u, len(c.Usage) > 0)
	return w, u, nil
}

// incompleteReason maps a finish reason to a Responses incomplete reason;
// "" for a complete answer.
func incompleteReason(finish string) string {
	switch finish {
	case openai.FinishLength:
		return "max_output_tokens"
	case openai.FinishContentFilter:
		return "content_filter"
	}
	return ""
}
