package translate

import "github.com/tollgate/tollgate/internal/sse"

// What the stream machines reading a Messages upstream share.

// maxContentBlocks bounds the block indexes an upstream may use.
const maxContentBlocks = 1000

// upstreamBlock is what an Anthropic content block becomes for the client.
type upstreamBlock uint8

const (
	ublockIgnored  upstreamBlock = iota // server tools and their results, unknown types
	ublockText                          // text → delta.content
	ublockThinking                      // thinking → delta.reasoning_content
	ublockTool                          // tool_use → delta.tool_calls
	ublockJSON                          // the structured-output tool → delta.content
	ublockSearch                        // a web search the upstream ran → a web_search_call item
)

// anthropicStartError reports whether ev, an Anthropic stream's first
// event (parsed into f), is an error event, with the status and OpenAI
// error body to answer with.
func anthropicStartError(f *sse.Fields, ev []byte) (int, []byte, bool) {
	f.Parse(ev)
	if string(f.Name) != "error" {
		return 0, nil, false
	}
	status, body, _ := AnthropicErrorToOpenAI(0, f.Data)
	return status, body, true
}
