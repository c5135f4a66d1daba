package translate

import (
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/api/responses"
	"github.com/tollgate/tollgate/internal/jsonx"
)

// What the requests of Chat Completions and Messages clients for a model
// served only through the Responses API share. The translated request
// keeps no state upstream (store: false) and asks for encrypted reasoning,
// which the answer hands to Anthropic clients sealed in their thinking
// blocks' signatures so that it goes back on the next turn. It never
// carries what the Responses API refuses: max_tokens, stop,
// stream_options, an output bound under 16.

// minOutputTokens is the smallest max_output_tokens the Responses API takes.
const minOutputTokens = 16

// newResponsesRequest starts the upstream request for a client request.
func newResponsesRequest(model string, stream bool, maxOut *int64, p *Plan) *responses.Request {
	off := false
	out := &responses.Request{Model: model, Stream: stream, Store: &off, Input: responses.Input{Items: []responses.Item{}}}
	if maxOut != nil {
		n := *maxOut
		if n < minOutputTokens {
			n = minOutputTokens
			p.adjust("max_tokens")
		}
		out.MaxOutputTokens = &n
	}
	return out
}

// appendMember adds "k": v to an object of unnamed members.
func appendMember(obj jsontext.Value, k string, v jsontext.Value) jsontext.Value {
	b := []byte("{")
	if len(obj) > 2 {
		b = append(b, obj[1:len(obj)-1]...)
		b = append(b, ',')
	}
	b = jsonx.AppendQuote(b, k)
	b = append(b, ':')
	b = append(b, v...)
	return append(b, '}')
}

func cmpPtr[T any](a, b *T) *T {
	if a != nil {
		return a
	}
	return b
}
