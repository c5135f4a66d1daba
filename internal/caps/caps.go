// Package caps describes what a model and its upstream accept: the
// capabilities that drive every model-dependent translation choice, so
// that no code ever matches model names. One type, read from configuration
// (models[].capabilities) and used as it is by the translators. Zero
// values are the defaults for current models.
package caps

import (
	"fmt"
	"strings"
)

// Caps are what a target model and its upstream accept.
type Caps struct {
	// MaxOutputTokens is sent as max_tokens to an Anthropic upstream when
	// an OpenAI client set no limit (OpenAI's meaning of "no limit" is the
	// model's limit). 0 means DefaultMaxOutputTokens.
	MaxOutputTokens int64 `yaml:"max_output_tokens"`
	// NonStreamMaxTokens caps that default for non-streaming requests,
	// which must finish before any byte is sent. 0 means no cap.
	NonStreamMaxTokens int64 `yaml:"non_stream_max_tokens"`

	// Anthropic upstreams.
	Thinking                 ThinkingMode `yaml:"thinking"`
	OutputFormat             bool         `yaml:"output_format"`               // accepts output_config.format (structured output); else a forced tool
	StrictTools              bool         `yaml:"strict_tools"`                // accepts tools[].strict
	TemperatureTopPExclusive bool         `yaml:"temperature_top_p_exclusive"` // rejects temperature and top_p together
	NoURLImages              bool         `yaml:"base64_images_only"`          // needs base64 images: cannot fetch image URLs
	// SystemMessages: the model takes {"role":"system"} messages inside
	// messages (mid-conversation system messages, Claude Opus 4.8 on the
	// Claude API). System and developer messages after the first turn
	// then stay in the conversation, which keeps the cached prefix,
	// instead of joining the top-level system prompt.
	SystemMessages bool `yaml:"system_messages"`
	// CacheMinTokens is the model's minimum cacheable prompt length:
	// tollgate marks no prompt-cache breakpoint on a shorter prefix (see
	// models[].prompt_cache). 0 means 1024, the smallest Anthropic
	// documents; Anthropic's prompt-caching page lists each model's.
	CacheMinTokens int64 `yaml:"cache_min_tokens"`
	// WebSearch: the upstream runs a hosted web search: Anthropic's web
	// search server tool (web_search_20250305), or on a Responses
	// upstream the web_search tool. A Responses client's web_search tool,
	// or a Gemini client's googleSearch, is then offered as it; a
	// Responses client's searches come back as web_search_call items.
	WebSearch bool `yaml:"web_search"`

	// OpenAI-compatible upstreams.
	LegacyMaxTokens      TokensField      `yaml:"max_tokens_field"` // takes max_tokens instead of max_completion_tokens
	Reasoning            ReasoningDialect `yaml:"reasoning"`
	AcceptsReasoningNone bool             `yaml:"reasoning_none"`  // takes reasoning_effort "none"
	AcceptsXHigh         bool             `yaml:"reasoning_xhigh"` // takes reasoning_effort "xhigh"
	AcceptsTopK          bool             `yaml:"top_k"`           // takes top_k (vLLM, SGLang)
	NoStreamUsage        bool             `yaml:"no_stream_usage"` // rejects stream_options
	FileParts            bool             `yaml:"file_parts"`      // takes PDF file parts
	MaxStop              int              `yaml:"max_stop"`        // most stop sequences accepted; 0 means 4
	// NoPromptCacheKey: the upstream rejects prompt_cache_key, which
	// tollgate otherwise sends to OpenAI-protocol upstreams so that a
	// conversation reaches the servers that cached its prefix.
	NoPromptCacheKey bool `yaml:"no_prompt_cache_key"`
	// LeadingSystemOnly: the upstream's chat template takes one system
	// message, first (some vLLM/llama.cpp templates refuse any other).
	// Anthropic system entries inside messages are then folded into the
	// user turn next to them, verbatim, instead of becoming system
	// messages where they stand.
	LeadingSystemOnly bool `yaml:"leading_system_only"`

	// Responses to OpenAI clients.
	ExposeThinkingBlocks bool `yaml:"expose_thinking_blocks"` // add thinking_blocks (with signatures) to answers
}

// DefaultMaxOutputTokens is the max_tokens sent to an Anthropic upstream
// when neither the client nor Caps give one.
const DefaultMaxOutputTokens = 8192

// MaxOutput is MaxOutputTokens, or its default.
func (c Caps) MaxOutput() int64 {
	if c.MaxOutputTokens > 0 {
		return c.MaxOutputTokens
	}
	return DefaultMaxOutputTokens
}

// StopLimit is MaxStop, or its default of 4.
func (c Caps) StopLimit() int {
	if c.MaxStop > 0 {
		return c.MaxStop
	}
	return 4
}

// Check reports a setting out of range.
func (c Caps) Check() error {
	if c.MaxOutputTokens < 0 || c.NonStreamMaxTokens < 0 || c.MaxStop < 0 || c.CacheMinTokens < 0 {
		return fmt.Errorf("token counts and max_stop must not be negative")
	}
	return nil
}

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

// TokensField is true when an OpenAI-compatible upstream takes only the
// older max_tokens field (max_tokens_field: max_tokens) instead of
// max_completion_tokens.
type TokensField bool

var (
	thinkingModes     = []string{ThinkingBudget: "budget", ThinkingAdaptive: "adaptive", ThinkingNone: "none"}
	reasoningDialects = []string{ReasoningOpenAI: "openai", ReasoningDeepSeek: "deepseek", ReasoningOpenRouter: "openrouter", ReasoningQwen: "qwen", ReasoningNone: "none"}
	tokensFields      = []string{"max_completion_tokens", "max_tokens"}
)

func (m ThinkingMode) String() string { return thinkingModes[m] }

// UnmarshalText accepts budget, adaptive or none.
func (m *ThinkingMode) UnmarshalText(b []byte) error {
	return parseEnum(b, thinkingModes, (*uint8)(m))
}

func (d ReasoningDialect) String() string { return reasoningDialects[d] }

// UnmarshalText accepts openai, deepseek, openrouter, qwen or none.
func (d *ReasoningDialect) UnmarshalText(b []byte) error {
	return parseEnum(b, reasoningDialects, (*uint8)(d))
}

func (f TokensField) String() string {
	if f {
		return tokensFields[1]
	}
	return tokensFields[0]
}

// UnmarshalText accepts max_completion_tokens or max_tokens.
func (f *TokensField) UnmarshalText(b []byte) error {
	var i uint8
	if err := parseEnum(b, tokensFields, &i); err != nil {
		return err
	}
	*f = i == 1
	return nil
}

func parseEnum(b []byte, names []string, dst *uint8) error {
	if len(b) == 0 {
		*dst = 0 // the default
		return nil
	}
	for i, n := range names {
		if n == string(b) {
			*dst = uint8(i)
			return nil
		}
	}
	return fmt.Errorf("%q is not one of %s", b, strings.Join(names, ", "))
}
