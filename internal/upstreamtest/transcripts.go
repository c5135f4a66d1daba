package upstreamtest

import (
	"embed"
	"fmt"

	"github.com/tollgate/tollgate/internal/sse"
)

// Realistic upstream answers, shaped after the providers' API references:
//
//	anthropic_stream.sse     Messages stream: ping, thinking + signature, text, tool_use, cache usage, extras
//	anthropic_message.json   Messages response with cache read usage and extra fields
//	openai_stream.sse        Chat Completions stream: comments, tool call, usage-only chunk, [DONE]
//	openai_completion.json   Chat Completions response with cached tokens and extra fields
//	responses_stream.sse     Responses stream: reasoning summary, text, a function call, cached usage, obfuscation
//	responses.json           Responses answer: the same output as a whole response
//	gemini_stream.sse        Gemini stream (alt=sse, CRLF): text, a thought and a signed function call, cached and thought usage
//	gemini_answer.json       Gemini generateContent answer, pretty-printed as Google serves it, with cached and thought usage
//
//go:embed testdata
var transcripts embed.FS

// File returns a transcript's bytes.
func File(name string) []byte {
	b, err := transcripts.ReadFile("testdata/" + name)
	if err != nil {
		panic(fmt.Sprintf("upstreamtest: %v", err))
	}
	return b
}

// Events splits a transcript into its SSE events, as sent on the wire.
func Events(name string) [][]byte {
	b := File(name)
	var out [][]byte
	for len(b) > 0 {
		n := sse.Split(b)
		if n == 0 {
			panic("upstreamtest: transcript " + name + " ends in an incomplete event")
		}
		out = append(out, b[:n])
		b = b[n:]
	}
	return out
}
