// Package translate converts requests, responses, streams and errors between
// the Anthropic Messages API and the OpenAI Chat Completions API.
//
// It is pure: no network, no storage, no clock beyond what callers pass in.
// Translators are pairwise (Anthropic client → OpenAI upstream, OpenAI
// client → Anthropic upstream) rather than through a shared schema, so
// neither side is squeezed through what the other can say. Every mapping
// that depends on the target model is driven by Caps, never by matching
// model names.
package translate

import (
	"fmt"
	"strings"
)

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

// ThinkingMode is how an Anthropic model accepts extended thinking.
type ThinkingMode uint8

const (
	// ThinkingBudget: thinking {type: enabled, budget_tokens} (Sonnet 4.5, Opus 4.5, …).
	ThinkingBudget ThinkingMode = iota
	// ThinkingAdaptive: thinking {type: adaptive} with output_config.effort.
	ThinkingAdaptive
	// ThinkingNone: the model does not think; reasoning requests are dropped.
	ThinkingNone
)

// ReasoningDialect is how an OpenAI-compatible upstream takes reasoning settings.
type ReasoningDialect uint8

const (
	ReasoningOpenAI     ReasoningDialect = iota // reasoning_effort
	ReasoningDeepSeek                           // thinking {type}, and reasoning_content echoed back in history
	ReasoningOpenRouter                         // reasoning {effort}
	ReasoningQwen                               // enable_thinking
	ReasoningNone                               // no reasoning control
)

// Caps are what the target model and its upstream accept. The zero value
// is a sensible default for current models.
type Caps struct {
	// MaxOutputTokens is sent as max_tokens to an Anthropic upstream when an
	// OpenAI client set no limit (OpenAI's meaning of "no limit" is the
	// model's limit). 0 means DefaultMaxOutputTokens.
	MaxOutputTokens int64
	// NonStreamMaxTokens caps that default for non-streaming requests, which
	// must finish before any byte is sent. 0 means no cap.
	NonStreamMaxTokens int64

	// Anthropic upstreams.
	Thinking                 ThinkingMode
	OutputFormat             bool // accepts output_config.format (structured output)
	StrictTools              bool // accepts tools[].strict
	TemperatureTopPExclusive bool // rejects temperature and top_p together
	NoURLImages              bool // needs base64 images
	// SystemMessages: the model takes {"role":"system"} messages inside
	// messages (mid-conversation system messages, Claude Opus 4.8 on the
	// Claude API). System and developer messages after the first turn
	// then stay in the conversation, which keeps the cached prefix,
	// instead of joining the top-level system prompt.
	SystemMessages bool

	// OpenAI-compatible upstreams.
	LegacyMaxTokens      bool // takes max_tokens instead of max_completion_tokens
	Reasoning            ReasoningDialect
	AcceptsReasoningNone bool // takes reasoning_effort "none"
	AcceptsXHigh         bool // takes reasoning_effort "xhigh"
	AcceptsTopK          bool // takes top_k (vLLM, SGLang)
	NoStreamUsage        bool // rejects stream_options
	FileParts            bool // takes PDF file parts
	MaxStop              int  // most stop sequences accepted; 0 means 4
	// LeadingSystemOnly: the upstream's chat template takes one system
	// message, first (some vLLM/llama.cpp templates refuse any other).
	// Anthropic system entries inside messages are then folded into the
	// user turn next to them, verbatim, instead of becoming system
	// messages where they stand (see foldSystemMessages).
	LeadingSystemOnly bool

	// Responses to OpenAI clients.
	ExposeThinkingBlocks bool // add thinking_blocks (with signatures) to answers
}

// DefaultMaxOutputTokens is the max_tokens sent to an Anthropic upstream
// when neither the client nor Caps give one.
const DefaultMaxOutputTokens = 8192

func (c Caps) maxOutput() int64 {
	if c.MaxOutputTokens > 0 {
		return c.MaxOutputTokens
	}
	return DefaultMaxOutputTokens
}

func (c Caps) maxStop() int {
	if c.MaxStop > 0 {
		return c.MaxStop
	}
	return 4
}

var (
	thinkingModes     = []string{ThinkingBudget: "budget", ThinkingAdaptive: "adaptive", ThinkingNone: "none"}
	reasoningDialects = []string{ReasoningOpenAI: "openai", ReasoningDeepSeek: "deepseek", ReasoningOpenRouter: "openrouter", ReasoningQwen: "qwen", ReasoningNone: "none"}
)

func (m ThinkingMode) String() string { return thinkingModes[m] }

// UnmarshalText accepts budget, adaptive or none.
func (m *ThinkingMode) UnmarshalText(b []byte) error {
	return parseEnum(b, thinkingModes, (*uint8)(m), "thinking mode")
}

func (d ReasoningDialect) String() string { return reasoningDialects[d] }

// UnmarshalText accepts openai, deepseek, openrouter, qwen or none.
func (d *ReasoningDialect) UnmarshalText(b []byte) error {
	return parseEnum(b, reasoningDialects, (*uint8)(d), "reasoning dialect")
}

func parseEnum(b []byte, names []string, dst *uint8, what string) error {
	for i, n := range names {
		if n == string(b) {
			*dst = uint8(i)
			return nil
		}
	}
	return fmt.Errorf("unknown %s %q (want one of %s)", what, b, strings.Join(names, ", "))
}
