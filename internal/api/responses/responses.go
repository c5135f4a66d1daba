// Package responses holds wire types of the OpenAI Responses API
// (POST /v1/responses): requests, input and output items, the response
// object and its usage, as far as translation needs them. Members a type
// does not name are kept in Extra.
// Reference: https://platform.openai.com/docs/api-reference/responses
package responses

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/jsonx"
)

// Request is the body of POST /v1/responses.
type Request struct {
	Model              string         `json:"model"`
	Input              Input          `json:"input,omitzero"`
	Instructions       *string        `json:"instructions,omitempty"`
	Tools              []Tool         `json:"tools,omitempty"`
	ToolChoice         jsontext.Value `json:"tool_choice,omitzero"` // "none" | "auto" | "required" | object
	ParallelToolCalls  *bool          `json:"parallel_tool_calls,omitempty"`
	MaxOutputTokens    *int64         `json:"max_output_tokens,omitempty"`
	MaxToolCalls       *int64         `json:"max_tool_calls,omitempty"`
	Temperature        *float64       `json:"temperature,omitempty"`
	TopP               *float64       `json:"top_p,omitempty"`
	TopLogprobs        *int64         `json:"top_logprobs,omitempty"`
	Reasoning          *Reasoning     `json:"reasoning,omitempty"`
	Text               *Text          `json:"text,omitempty"`
	Stream             bool           `json:"stream,omitzero"`
	StreamOptions      jsontext.Value `json:"stream_options,omitzero"`
	Store              *bool          `json:"store,omitempty"`
	PreviousResponseID string         `json:"previous_response_id,omitempty"`
	Conversation       jsontext.Value `json:"conversation,omitzero"`
	Include            []string       `json:"include,omitempty"`
	Metadata           jsontext.Value `json:"metadata,omitzero"`
	PromptCacheKey     string         `json:"prompt_cache_key,omitempty"`
	SafetyIdentifier   string         `json:"safety_identifier,omitempty"`
	User               string         `json:"user,omitempty"`
	Truncation         string         `json:"truncation,omitempty"`
	ServiceTier        string         `json:"service_tier,omitempty"`
	Background         *bool          `json:"background,omitempty"`
	Prompt             jsontext.Value `json:"prompt,omitzero"`

	Extra jsontext.Value `json:",embed"`
}

// Reasoning is the reasoning object of a request or response.
type Reasoning struct {
	Effort          string `json:"effort,omitempty"` // none, minimal, low, medium, high, xhigh
	Summary         string `json:"summary,omitempty"`
	GenerateSummary string `json:"generate_summary,omitempty"` // deprecated form of summary

	Extra jsontext.Value `json:",embed"`
}

// Text is the text object: the output format and verbosity.
type Text struct {
	Format    *Format `json:"format,omitempty"`
	Verbosity string  `json:"verbosity,omitempty"`

	Extra jsontext.Value `json:",embed"`
}

// Format is text.format: text, json_object, or json_schema (flat, unlike
// Chat Completions' response_format).
type Format struct {
	Type        string         `json:"type"`
	Name        string         `json:"name,omitempty"`
	Schema      jsontext.Value `json:"schema,omitzero"`
	Strict      *bool          `json:"strict,omitempty"`
	Description string         `json:"description,omitempty"`
}

// Input is a request's input: a string (one user message) or items.
type Input struct {
	Items    []Item
	IsString bool
	Text     string // when IsString
}

// IsZero reports whether the input is absent.
func (in Input) IsZero() bool { return !in.IsString && in.Items == nil }

// MarshalJSONTo implements json.MarshalerTo.
func (in Input) MarshalJSONTo(enc *jsontext.Encoder) error {
	if in.IsString {
		return enc.WriteToken(jsontext.String(in.Text))
	}
	return json.MarshalEncode(enc, in.Items)
}

// UnmarshalJSONFrom implements json.UnmarshalerFrom.
func (in *Input) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	switch dec.PeekKind() {
	case '"':
		tok, err := dec.ReadToken()
		*in = Input{IsString: true, Text: tok.String()}
		return err
	case '[':
		*in = Input{Items: []Item{}}
		return json.UnmarshalDecode(dec, &in.Items)
	default:
		return jsonx.Mismatch(dec.PeekKind(), "a string or an array of input items")
	}
}

// Item is one input or output item of any type, flattened: a message
// (type "message", or no type with a role), function_call,
// function_call_output, reasoning, custom_tool_call,
// custom_tool_call_output, item_reference, or a hosted tool's item.
type Item struct {
	Type   string `json:"type,omitempty"`
	ID     string `json:"id,omitempty"`
	Status string `json:"status,omitempty"`

	// message
	Role    string  `json:"role,omitempty"`
	Content Content `json:"content,omitzero"`
	Phase   string  `json:"phase,omitempty"`

	// function_call, custom_tool_call and their outputs
	CallID    string  `json:"call_id,omitempty"`
	Name      string  `json:"name,omitempty"`
	Namespace string  `json:"namespace,omitempty"`
	Arguments *string `json:"arguments,omitzero"` // function_call: JSON text
	Input     *string `json:"input,omitzero"`     // custom_tool_call: free text
	Output    Content `json:"output,omitzero"`    // *_output: a string or parts

	// reasoning
	Summary          []Part  `json:"summary,omitzero"`
	EncryptedContent *string `json:"encrypted_content,omitempty"`

	Extra jsontext.Value `json:",embed"`
}

// IsMessage reports whether the item is a message (its type may be left
// out when it has a role).
func (it *Item) IsMessage() bool { return it.Type == "message" || it.Type == "" && it.Role != "" }

// Content is a message's content or a tool output: a string, an array of
// parts, or null.
type Content struct {
	Parts    []Part
	IsString bool
	Text     string // when IsString
	Null     bool
}

// IsZero reports whether the content is absent.
func (c Content) IsZero() bool { return !c.Null && !c.IsString && c.Parts == nil }

// MarshalJSONTo implements json.MarshalerTo.
func (c Content) MarshalJSONTo(enc *jsontext.Encoder) error {
	switch {
	case c.IsString:
		return enc.WriteToken(jsontext.String(c.Text))
	case c.Null:
		return enc.WriteToken(jsontext.Null)
	default:
		return json.MarshalEncode(enc, c.Parts)
	}
}

// UnmarshalJSONFrom implements json.UnmarshalerFrom.
func (c *Content) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	switch dec.PeekKind() {
	case '"':
		tok, err := dec.ReadToken()
		*c = Content{IsString: true, Text: tok.String()}
		return err
	case '[':
		*c = Content{Parts: []Part{}}
		return json.UnmarshalDecode(dec, &c.Parts)
	case 'n':
		_, err := dec.ReadToken()
		*c = Content{Null: true}
		return err
	default:
		return jsonx.Mismatch(dec.PeekKind(), "a string, an array of content parts or null")
	}
}

// Part is one content part, flattened: input_text, input_image,
// input_file, output_text, refusal, summary_text, reasoning_text.
type Part struct {
	Type     string         `json:"type"`
	Text     string         `json:"text,omitzero"`
	Refusal  string         `json:"refusal,omitempty"`
	ImageURL string         `json:"image_url,omitempty"`
	FileID   string         `json:"file_id,omitempty"`
	FileData string         `json:"file_data,omitempty"`
	FileURL  string         `json:"file_url,omitempty"`
	Filename string         `json:"filename,omitempty"`
	Detail   string         `json:"detail,omitempty"`
	Annot    jsontext.Value `json:"annotations,omitzero"`

	Extra jsontext.Value `json:",embed"`
}

// Tool is a tool definition: function, custom, namespace (nested function
// and custom tools), or a hosted tool (web_search, file_search, …) whose
// members stay in Extra.
type Tool struct {
	Type        string         `json:"type"`
	Name        string         `json:"name,omitempty"`
	Description string         `json:"description,omitempty"`
	Parameters  jsontext.Value `json:"parameters,omitzero"`
	Strict      *bool          `json:"strict,omitempty"`
	Format      jsontext.Value `json:"format,omitzero"` // custom: text or grammar
	Tools       []Tool         `json:"tools,omitempty"` // namespace

	Extra jsontext.Value `json:",embed"`
}

// Response is the response object: the body of a whole answer, and the
// response of the stream's lifecycle events.
type Response struct {
	ID                 string         `json:"id"`
	Object             string         `json:"object"` // "response"
	CreatedAt          int64          `json:"created_at"`
	Status             string         `json:"status"` // completed, incomplete, failed, in_progress
	CompletedAt        *int64         `json:"completed_at,omitempty"`
	Error              *Error         `json:"error"`
	IncompleteDetails  *Incomplete    `json:"incomplete_details"`
	Instructions       *string        `json:"instructions"`
	MaxOutputTokens    *int64         `json:"max_output_tokens"`
	Model              string         `json:"model"`
	Output             []Item         `json:"output"`
	ParallelToolCalls  bool           `json:"parallel_tool_calls"`
	PreviousResponseID *string        `json:"previous_response_id"`
	Reasoning          *Reasoning     `json:"reasoning"`
	Store              bool           `json:"store"`
	Temperature        float64        `json:"temperature"`
	Text               *Text          `json:"text,omitempty"`
	ToolChoice         jsontext.Value `json:"tool_choice"`
	Tools              []Tool         `json:"tools"`
	TopP               float64        `json:"top_p"`
	Truncation         string         `json:"truncation"`
	Usage              *Usage         `json:"usage"`
	User               *string        `json:"user"`
	Metadata           jsontext.Value `json:"metadata"`
}

// Error is a failed response's error.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Incomplete says why a response is incomplete: max_output_tokens or
// content_filter.
type Incomplete struct {
	Reason string `json:"reason"`
}

// Usage is a response's usage. input_tokens includes cached tokens,
// output_tokens includes reasoning tokens.
type Usage struct {
	InputTokens         int64               `json:"input_tokens"`
	InputTokensDetails  InputTokensDetails  `json:"input_tokens_details"`
	OutputTokens        int64               `json:"output_tokens"`
	OutputTokensDetails OutputTokensDetails `json:"output_tokens_details"`
	TotalTokens         int64               `json:"total_tokens"`
}

// InputTokensDetails breaks input tokens down.
type InputTokensDetails struct {
	CachedTokens     int64 `json:"cached_tokens"`
	CacheWriteTokens int64 `json:"cache_write_tokens,omitzero"`
}

// OutputTokensDetails breaks output tokens down.
type OutputTokensDetails struct {
	ReasoningTokens int64 `json:"reasoning_tokens"`
}

// Statuses of a response.
const (
	StatusCompleted  = "completed"
	StatusIncomplete = "incomplete"
	StatusFailed     = "failed"
	StatusInProgress = "in_progress"
)
