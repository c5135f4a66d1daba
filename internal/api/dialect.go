// Package api names the wire protocols tollgate speaks. The wire types of
// each protocol live in its subpackage (api/anthropic, api/openai).
package api

// Dialect is the wire protocol of a request or response.
type Dialect uint8

const (
	// Anthropic is the Messages API: POST /v1/messages, named-event SSE.
	Anthropic Dialect = iota + 1
	// OpenAI is the Chat Completions API: POST /v1/chat/completions, data-only SSE ending in [DONE].
	OpenAI
)

func (d Dialect) String() string {
	switch d {
	case Anthropic:
		return "anthropic"
	case OpenAI:
		return "openai"
	default:
		return "unknown"
	}
}
