package anthropic

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/jsonx"
)

// MessagesRequest is the body of POST /v1/messages, as far as translation
// needs it. Opaque parts stay raw JSON; members it does not name are kept
// in Extra so the translator can report them.
// https://docs.anthropic.com/en/api/messages
type MessagesRequest struct {
	Model         string         `json:"model"`
	MaxTokens     int64          `json:"max_tokens"`
	System        Content        `json:"system,omitzero"`
	Messages      []Message      `json:"messages"`
	StopSequences []string       `json:"stop_sequences,omitempty"`
	Stream        bool           `json:"stream,omitzero"`
	Temperature   *float64       `json:"temperature,omitempty"`
	TopP          *float64       `json:"top_p,omitempty"`
	TopK          *int64         `json:"top_k,omitempty"`
	Metadata      *Metadata      `json:"metadata,omitempty"`
	Tools         []Tool         `json:"tools,omitempty"`
	ToolChoice    *ToolChoice    `json:"tool_choice,omitempty"`
	Thinking      *Thinking      `json:"thinking,omitempty"`
	OutputConfig  *OutputConfig  `json:"output_config,omitempty"`
	OutputFormat  jsontext.Value `json:"output_format,omitzero"` // legacy spelling of output_config.format
	ServiceTier   string         `json:"service_tier,omitempty"`
	MCPServers    jsontext.Value `json:"mcp_servers,omitzero"`
	Container     jsontext.Value `json:"container,omitzero"`
	ContextMgmt   jsontext.Value `json:"context_management,omitzero"`
	CacheControl  jsontext.Value `json:"cache_control,omitzero"`
	InferenceGeo  string         `json:"inference_geo,omitempty"`

	Extra jsontext.Value `json:",embed"`
}

// Metadata is the request's metadata object.
type Metadata struct {
	UserID string `json:"user_id,omitempty"`
}

// Message is one conversation turn: user, assistant, or system (a
// mid-conversation system message, text only).
type Message struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
	// CacheControl is a breakpoint on a system message as a whole.
	CacheControl jsontext.Value `json:"cache_control,omitzero"`

	// Extra keeps members not named here (clear_at, output_config of
	// system messages…).
	Extra jsontext.Value `json:",embed"`
}

// Content is a string or an array of content blocks. A string decodes to
// one text block with FromString set, and encodes back as a string. Any
// other JSON (server tool results carry an object, e.g. a
// web_search_tool_result_error) is kept in Raw as it is.
type Content struct {
	Blocks     []Block
	FromString bool
	Raw        jsontext.Value
}

// IsZero reports whether no content was given (for omitzero).
func (c Content) IsZero() bool { return c.Blocks == nil && !c.FromString && c.Raw == nil }

// MarshalJSONTo implements json.MarshalerTo.
func (c Content) MarshalJSONTo(enc *jsontext.Encoder) error {
	if c.Raw != nil {
		return enc.WriteValue(c.Raw)
	}
	if c.FromString && len(c.Blocks) == 1 && c.Blocks[0].Type == "text" {
		return enc.WriteToken(jsontext.String(c.Blocks[0].Text))
	}
	if c.Blocks == nil { // an empty array, never null
		if err := enc.WriteToken(jsontext.BeginArray); err != nil {
			return err
		}
		return enc.WriteToken(jsontext.EndArray)
	}
	return json.MarshalEncode(enc, c.Blocks)
}

// UnmarshalJSONFrom implements json.UnmarshalerFrom.
func (c *Content) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	switch dec.PeekKind() {
	case '"':
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		*c = Content{Blocks: []Block{{Type: "text", Text: tok.String()}}, FromString: true}
		return nil
	case '[':
		c.FromString = false
		c.Blocks = []Block{}
		return json.UnmarshalDecode(dec, &c.Blocks)
	case 'n':
		_, err := dec.ReadToken()
		*c = Content{}
		return err
	case '{':
		v, err := dec.ReadValue()
		*c = Content{Raw: v.Clone()}
		return err
	default:
		return jsonx.Mismatch(dec.PeekKind(), "a string or an array of content blocks")
	}
}

// Block is one content block of any type, flattened: Type says which
// fields apply. Opaque values (tool input, cache_control, citations) stay
// raw so they are neither reordered nor re-encoded.
type Block struct {
	Type string `json:"type"`

	// text
	Text      string         `json:"text,omitempty"`
	Citations jsontext.Value `json:"citations,omitzero"`

	// image, document, search_result
	Source *Source `json:"source,omitempty"`
	Title  string  `json:"title,omitempty"`

	// tool_use, server_tool_use
	ID    string         `json:"id,omitempty"`
	Name  string         `json:"name,omitempty"`
	Input jsontext.Value `json:"input,omitzero"`

	// tool_result, search_result, compaction, server tool results
	ToolUseID string   `json:"tool_use_id,omitempty"`
	Content   *Content `json:"content,omitempty"`
	IsError   bool     `json:"is_error,omitzero"`

	// thinking, redacted_thinking
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`
	Data      string `json:"data,omitempty"`

	CacheControl jsontext.Value `json:"cache_control,omitzero"`

	Extra jsontext.Value `json:",embed"`
}

// MarshalJSONTo implements json.MarshalerTo: a text or thinking block
// carries its text even when empty (a thinking block that holds only a
// signature), as the Messages API sends and requires it.
func (b *Block) MarshalJSONTo(enc *jsontext.Encoder) error {
	type plain Block
	switch {
	case b.Type == "thinking" && b.Thinking == "":
		return json.MarshalEncode(enc, struct {
			plain
			Thinking string `json:"thinking"`
		}{plain: plain(*b)})
	case b.Type == "text" && b.Text == "":
		return json.MarshalEncode(enc, struct {
			plain
			Text string `json:"text"`
		}{plain: plain(*b)})
	}
	return json.MarshalEncode(enc, (*plain)(b))
}

// Source is where an image or document comes from. A search_result's
// source is a plain string instead (a URL or other reference): it decodes
// into Ref, and encodes back as a string.
type Source struct {
	Type      string   `json:"type"` // base64, url, text, file, content
	MediaType string   `json:"media_type,omitempty"`
	Data      string   `json:"data,omitempty"`
	URL       string   `json:"url,omitempty"`
	FileID    string   `json:"file_id,omitempty"`
	Content   *Content `json:"content,omitempty"` // type content: the document's own blocks

	Ref string `json:"-"`
}

type sourceObject Source // Source without its methods

// MarshalJSONTo implements json.MarshalerTo.
func (s Source) MarshalJSONTo(enc *jsontext.Encoder) error {
	if s.Type == "" && s.Ref != "" {
		return enc.WriteToken(jsontext.String(s.Ref))
	}
	return json.MarshalEncode(enc, sourceObject(s))
}

// UnmarshalJSONFrom implements json.UnmarshalerFrom.
func (s *Source) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		*s = Source{Ref: tok.String()}
		return err
	}
	var o sourceObject
	err := json.UnmarshalDecode(dec, &o)
	*s = Source(o)
	return err
}

// Tool is a tool definition. Server tools (web_search_…) carry a Type.
type Tool struct {
	Type         string         `json:"type,omitempty"`
	Name         string         `json:"name"`
	Description  string         `json:"description,omitempty"`
	InputSchema  jsontext.Value `json:"input_schema,omitzero"`
	Strict       *bool          `json:"strict,omitempty"`
	CacheControl jsontext.Value `json:"cache_control,omitzero"`

	// Loading and calling hints of current tool definitions.
	DeferLoading        bool           `json:"defer_loading,omitzero"`
	InputExamples       jsontext.Value `json:"input_examples,omitzero"`
	AllowedCallers      []string       `json:"allowed_callers,omitempty"`
	EagerInputStreaming *bool          `json:"eager_input_streaming,omitempty"`

	Extra jsontext.Value `json:",embed"`
}

// ToolChoice is the tool_choice object.
type ToolChoice struct {
	Type                   string `json:"type"` // auto, any, tool, none
	Name                   string `json:"name,omitempty"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use,omitzero"`
}

// Thinking configures extended thinking.
type Thinking struct {
	Type         string `json:"type"` // enabled, disabled, adaptive
	BudgetTokens int64  `json:"budget_tokens,omitzero"`

	Extra jsontext.Value `json:",embed"`
}

// OutputConfig holds effort and structured-output settings.
type OutputConfig struct {
	Effort string         `json:"effort,omitempty"`
	Format jsontext.Value `json:"format,omitzero"`

	Extra jsontext.Value `json:",embed"` // task_budget…
}

// Response is a Messages API response (non-streaming).
type Response struct {
	ID           string  `json:"id"`
	Type         string  `json:"type"` // "message"
	Role         string  `json:"role"`
	Model        string  `json:"model"`
	Content      []Block `json:"content"`
	StopReason   *string `json:"stop_reason"`
	StopSequence *string `json:"stop_sequence"`
	// Usage stays raw: MergeUsage reads it, and renderers write it.
	Usage jsontext.Value `json:"usage"`
}

// Usage is the Messages API usage object. input_tokens excludes cache
// reads and writes.
type Usage struct {
	InputTokens              int64          `json:"input_tokens"`
	CacheCreationInputTokens int64          `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64          `json:"cache_read_input_tokens"`
	CacheCreation            *CacheCreation `json:"cache_creation,omitempty"`
	OutputTokens             int64          `json:"output_tokens"`
}

// CacheCreation splits cache writes by TTL.
type CacheCreation struct {
	Ephemeral5m int64 `json:"ephemeral_5m_input_tokens"`
	Ephemeral1h int64 `json:"ephemeral_1h_input_tokens"`
}

// Stop reasons of the Messages API.
const (
	StopEndTurn       = "end_turn"
	StopMaxTokens     = "max_tokens"
	StopSequence      = "stop_sequence"
	StopToolUse       = "tool_use"
	StopPauseTurn     = "pause_turn"
	StopRefusal       = "refusal"
	StopContextWindow = "model_context_window_exceeded"
)
