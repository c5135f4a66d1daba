// Package translate converts requests, responses, streams and errors between
// wire protocols: Messages (Anthropic), Chat Completions, Responses and
// Gemini.
//
// It is pure: no network, no storage, no clock beyond what callers pass in.
// Translators are pairwise (a client of one protocol on an upstream of
// another) rather than through a shared schema, so neither side is
// squeezed through what the other can say. Every mapping that depends on
// the target model is driven by Caps, never by matching model names.
//
// A pair's files are <client>_via_<upstream>_request.go (client body to
// upstream body), _answer.go (whole upstream answer and errors to the
// client's) and _stream.go (upstream stream to client stream); what one
// protocol's readers or writers share is in <protocol>_*.go. Helpers that
// convert data are prefixed x2y, one letter per protocol (m Messages,
// c Chat, r Responses, g Gemini): c2m converts Chat data into Messages
// data, as in a Chat client's request on a Messages upstream.
package translate

import "github.com/tollgate/tollgate/internal/caps"

// Policy says what to do with input that cannot be mapped.
type Policy uint8

const (
	// PolicyDefault refuses contract-changing input (the client would
	// misread the answer: n>1, logprobs, audio output…) with 400, and drops
	// advisory input (seed, penalties…) listing it in tollgate-dropped-params.
	PolicyDefault Policy = iota
	// PolicyStrict refuses anything that cannot be mapped.
	PolicyStrict
	// PolicyLenient drops anything that cannot be mapped.
	PolicyLenient
)

// Caps are what the target model and its upstream accept (see package
// caps); the names below are kept for the translators' own use.
type (
	Caps             = caps.Caps
	ThinkingMode     = caps.ThinkingMode
	ReasoningDialect = caps.ReasoningDialect
)

const (
	ThinkingBudget   = caps.ThinkingBudget
	ThinkingAdaptive = caps.ThinkingAdaptive
	ThinkingNone     = caps.ThinkingNone

	ReasoningOpenAI     = caps.ReasoningOpenAI
	ReasoningDeepSeek   = caps.ReasoningDeepSeek
	ReasoningOpenRouter = caps.ReasoningOpenRouter
	ReasoningQwen       = caps.ReasoningQwen
	ReasoningNone       = caps.ReasoningNone

	// DefaultMaxOutputTokens is the max_tokens sent to an Anthropic
	// upstream when neither the client nor Caps give one.
	DefaultMaxOutputTokens = caps.DefaultMaxOutputTokens
)
