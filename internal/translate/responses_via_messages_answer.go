package translate

import (
	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/responses"
	"github.com/tollgate/tollgate/internal/meter"
)

// MessagesAnswerToResponses translates a whole Messages answer into the
// response a Responses client asked for, and when it asked for a stream,
// into the events of one. An answer that cannot be translated is an
// *UpstreamError.
func MessagesAnswerToResponses(body []byte, p *Plan, created int64) (out, stream []byte, u meter.Usage, err error) {
	var m anthropic.Response
	if err := decode(body, &m); err != nil {
		return nil, nil, u, &UpstreamError{Message: "upstream answer is not a valid message", Err: err}
	}
	w, u := messagesAnswerItems(&m, p, created, !p.Stream)
	if p.Stream {
		return nil, w.out, u, nil
	}
	out = w.response.AppendJSON(nil)
	return out, nil, u, err
}

// MessagesResponseToResponses translates an Anthropic upstream's answer
// into the response a Responses client asked for.
func MessagesResponseToResponses(r *anthropic.Response, p *Plan, created int64) (*responses.Response, meter.Usage) {
	w, u := messagesAnswerItems(r, p, created, true)
	return &w.response, u
}

// messagesAnswerItems writes an Anthropic answer as output items: the
// events of a stream, or (quiet) only the finished response. Each thinking
// block is a reasoning item whose encrypted_content seals the block, so
// that it goes back to Claude as it came; each text block a message; each
// tool_use a function or custom tool call. Server tools ran upstream and
// are not the client's to run.
func messagesAnswerItems(r *anthropic.Response, p *Plan, created int64, quiet bool) (*rsOut, meter.Usage) {
	var u meter.Usage
	anthropic.MergeUsage(&u, string(r.Usage))
	w := newRSOut(p, created)
	w.quiet = quiet
	for _, b := range r.Content {
		switch b.Type {
		case "thinking", "redacted_thinking":
			w.closeOpen() // one reasoning item per block
			w.reasoning(b.Thinking, quote(b.Thinking))
			w.seal(p.sealBlock(b))
			w.closeOpen()
		case "text":
			w.closeOpen()
			w.outputText(b.Text, quote(b.Text))
			w.closeOpen()
		case "server_tool_use":
			if b.Name == "web_search" {
				w.webSearch(gjson.GetBytes(b.Input, "query").Str)
			}
		case "tool_use":
			input := compactInput(b.Input)
			if p.JSONTool && b.Name == jsonToolName {
				w.outputText(string(input), quote(string(input))) // the structured answer
				continue
			}
			w.call(b.ID, p.responsesTool(b.Name))
			w.arguments(string(input), quote(string(input)))
		}
	}
	stop := ""
	if r.StopReason != nil {
		stop = *r.StopReason
	}
	w.finish(messagesIncomplete(stop), u, len(r.Usage) > 0)
	return w, u
}

// sealBlock is the encrypted_content of a reasoning item made from an
// Anthropic thinking or redacted_thinking block.
func (p *Plan) sealBlock(b anthropic.Block) string {
	if p.signer == nil {
		return ""
	}
	keep := anthropic.Block{Type: b.Type, Thinking: b.Thinking, Signature: b.Signature, Data: b.Data}
	return p.signer.seal(mustJSON(sealedReasoning{Blocks: mustJSON([]anthropic.Block{keep})}))
}

// messagesIncomplete is the Responses incomplete reason for an Anthropic
// stop reason; "" for a complete answer.
func messagesIncomplete(stop string) string {
	switch stop {
	case anthropic.StopMaxTokens, anthropic.StopContextWindow:
		return "max_output_tokens"
	case anthropic.StopRefusal:
		return "content_filter"
	}
	return ""
}

// failureCode is the response.failed error code for an Anthropic error type.
func failureCode(typ string) string {
	switch typ {
	case anthropic.ErrRateLimit:
		return "rate_limit_exceeded"
	case anthropic.ErrOverloaded:
		return "server_is_overloaded"
	}
	return "server_error"
}
