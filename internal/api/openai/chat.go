package openai

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/jsonx"
)

// ChatRequest is the body of POST /chat/completions, as far as translation
// needs it; members it does not name are kept in Extra.
// https://platform.openai.com/docs/api-reference/chat/create
type ChatRequest struct {
	Model               string         `json:"model"`
	Messages            []ChatMessage  `json:"messages"`
	MaxTokens           *int64         `json:"max_tokens,omitempty"`
	MaxCompletionTokens *int64         `json:"max_completion_tokens,omitempty"`
	Stream              bool           `json:"stream,omitzero"`
	StreamOptions       *StreamOptions `json:"stream_options,omitempty"`
	Temperature         *float64       `json:"temperature,omitempty"`
	TopP                *float64       `json:"top_p,omitempty"`
	TopK                *int64         `json:"top_k,omitempty"` // extension (vLLM, SGLang)
	Stop                Strings        `json:"stop,omitzero"`
	N                   *int64         `json:"n,omitempty"`
	Logprobs            *bool          `json:"logprobs,omitempty"`
	TopLogprobs         *int64         `json:"top_logprobs,omitempty"`
	User                string         `json:"user,omitempty"`
	PromptCacheKey      string         `json:"prompt_cache_key,omitempty"`
	SafetyIdentifier    string         `json:"safety_identifier,omitempty"`
	Tools               []Tool         `json:"tools,omitempty"`
	ToolChoice          jsontext.Value `json:"tool_choice,omitzero"` // "auto" | "none" | "required" | object
	ParallelToolCalls   *bool          `json:"parallel_tool_calls,omitempty"`
	Functions           []Function     `json:"functions,omitempty"`    // deprecated form of tools
	FunctionCall        jsontext.Value `json:"function_call,omitzero"` // deprecated form of tool_choice
	ReasoningEffort     string         `json:"reasoning_effort,omitempty"`
	ResponseFormat      jsontext.Value `json:"response_format,omitzero"`
	Modalities          []string       `json:"modalities,omitempty"`
	Audio               jsontext.Value `json:"audio,omitzero"`
	Thinking            jsontext.Value `json:"thinking,omitzero"` // extension: a raw Anthropic thinking object

	// Sent only to OpenAI-compatible upstreams that speak these dialects.
	Reasoning      jsontext.Value `json:"reasoning,omitzero"`        // OpenRouter
	EnableThinking *bool          `json:"enable_thinking,omitempty"` // Qwen

	Extra jsontext.Value `json:",embed"`
}

// StreamOptions is the stream_options object.
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// ChatMessage is one message of any role.
type ChatMessage struct {
	Role             string          `json:"role"`
	Content          MessageContent  `json:"content"`
	Name             string          `json:"name,omitempty"`
	ToolCalls        []ToolCall      `json:"tool_calls,omitempty"`
	ToolCallID       string          `json:"tool_call_id,omitempty"`
	FunctionCall     *FunctionCall   `json:"function_call,omitempty"`
	Refusal          *string         `json:"refusal,omitempty"`
	ReasoningContent string          `json:"reasoning_content,omitempty"`
	Reasoning        string          `json:"reasoning,omitempty"`
	ThinkingBlocks   []ThinkingBlock `json:"thinking_blocks,omitempty"`
	ReasoningSig     string          `json:"reasoning_signature,omitempty"`

	Extra jsontext.Value `json:",embed"`
}

// ThinkingBlock carries an Anthropic thinking block through an OpenAI
// message (the thinking_blocks convention), signature included.
type ThinkingBlock struct {
	Type      string `json:"type"` // thinking, redacted_thinking
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`
	Data      string `json:"data,omitempty"`
}

// MessageContent is null, a string, or an array of parts.
type MessageContent struct {
	Parts    []Part
	IsString bool
	Text     string // when IsString
	Null     bool
}

// IsZero reports whether content is absent.
func (c MessageContent) IsZero() bool { return c.Null || (!c.IsString && c.Parts == nil) }

// MarshalJSONTo implements json.MarshalerTo.
func (c MessageContent) MarshalJSONTo(enc *jsontext.Encoder) error {
	switch {
	case c.IsString:
		return enc.WriteToken(jsontext.String(c.Text))
	case c.Parts != nil:
		return json.MarshalEncode(enc, c.Parts)
	default:
		return enc.WriteToken(jsontext.Null)
	}
}

// UnmarshalJSONFrom implements json.UnmarshalerFrom.
func (c *MessageContent) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	switch dec.PeekKind() {
	case '"':
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		*c = MessageContent{IsString: true, Text: tok.String()}
		return nil
	case '[':
		*c = MessageContent{Parts: []Part{}}
		return json.UnmarshalDecode(dec, &c.Parts)
	case 'n':
		_, err := dec.ReadToken()
		*c = MessageContent{Null: true}
		return err
	default:
		return jsonx.Mismatch(dec.PeekKind(), "a string, an array of content parts or null")
	}
}

// Part is one content part of any type, flattened.
type Part struct {
	Type       string         `json:"type"` // text, image_url, input_audio, file, refusal
	Text       string         `json:"text,omitempty"`
	Refusal    string         `json:"refusal,omitempty"`
	ImageURL   *ImageURL      `json:"image_url,omitempty"`
	File       *File          `json:"file,omitempty"`
	InputAudio jsontext.Value `json:"input_audio,omitzero"`

	CacheControl jsontext.Value `json:"cache_control,omitzero"` // extension some clients send

	Extra jsontext.Value `json:",embed"`
}

// ImageURL is an image_url part's object.
type ImageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

// File is a file part's object.
type File struct {
	FileData string `json:"file_data,omitempty"`
	FileID   string `json:"file_id,omitempty"`
	Filename string `json:"filename,omitempty"`
}

// ToolCall is an assistant tool call.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"` // function
	Function FunctionCall `json:"function"`
}

// FunctionCall is a function name and its JSON-encoded arguments.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Tool is a tool definition.
type Tool struct {
	Type     string   `json:"type"` // function, custom
	Function Function `json:"function,omitzero"`

	Extra jsontext.Value `json:",embed"`
}

// Function is a function tool's definition.
type Function struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  jsontext.Value `json:"parameters,omitzero"`
	Strict      *bool          `json:"strict,omitempty"`
}

// Strings is a string or an array of strings (stop).
type Strings struct {
	Values []string
	Set    bool
}

// IsZero reports whether the value is absent.
func (s Strings) IsZero() bool { return !s.Set }

// MarshalJSONTo implements json.MarshalerTo.
func (s Strings) MarshalJSONTo(enc *jsontext.Encoder) error {
	return json.MarshalEncode(enc, s.Values)
}

// UnmarshalJSONFrom implements json.UnmarshalerFrom.
func (s *Strings) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	switch dec.PeekKind() {
	case '"':
		tok, err := dec.ReadToken()
		*s = Strings{Values: []string{tok.String()}, Set: true}
		return err
	case 'n':
		_, err := dec.ReadToken()
		*s = Strings{}
		return err
	default:
		s.Set = true
		return json.UnmarshalDecode(dec, &s.Values)
	}
}

// Completion is a chat.completion object (non-streaming response).
type Completion struct {
	ID                string         `json:"id"`
	Object            string         `json:"object"`
	Created           int64          `json:"created"`
	Model             string         `json:"model"`
	Choices           []Choice       `json:"choices"`
	Usage             jsontext.Value `json:"usage,omitzero"` // raw: SetUsage reads it, renderers write it
	SystemFingerprint *string        `json:"system_fingerprint"`
}

// Choice is one completion choice.
type Choice struct {
	Index        int64          `json:"index"`
	Message      ChatMessage    `json:"message"`
	Logprobs     jsontext.Value `json:"logprobs"`
	FinishReason *string        `json:"finish_reason"`
}

// Usage is the Chat Completions usage object. prompt_tokens includes
// cached tokens.
type Usage struct {
	PromptTokens            int64                    `json:"prompt_tokens"`
	CompletionTokens        int64                    `json:"completion_tokens"`
	TotalTokens             int64                    `json:"total_tokens"`
	PromptTokensDetails     *PromptTokensDetails     `json:"prompt_tokens_details,omitempty"`
	CompletionTokensDetails *CompletionTokensDetails `json:"completion_tokens_details,omitempty"`
}

// PromptTokensDetails breaks prompt tokens down.
type PromptTokensDetails struct {
	CachedTokens int64 `json:"cached_tokens"`
	// CacheWriteTokens is reported by some compatible upstreams and by
	// tollgate when it translates Anthropic cache writes.
	CacheWriteTokens int64 `json:"cache_write_tokens,omitzero"`
}

// CompletionTokensDetails breaks completion tokens down.
type CompletionTokensDetails struct {
	ReasoningTokens int64 `json:"reasoning_tokens"`
}

// Finish reasons of the Chat Completions API.
const (
	FinishStop          = "stop"
	FinishLength        = "length"
	FinishToolCalls     = "tool_calls"
	FinishContentFilter = "content_filter"
	FinishFunctionCall  = "function_call"
)
