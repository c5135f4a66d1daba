// Package gemini holds the wire types of the Gemini API's generateContent
// (generativelanguage.googleapis.com, and Gemini models on Vertex AI), as
// far as translation needs them. Members not named here are kept raw in
// Extra, so nothing a translator does not understand is lost unseen.
// https://ai.google.dev/api/generate-content
package gemini

import (
	"reflect"

	"github.com/go-json-experiment/json/jsontext"
)

// Request is the body of models/{model}:generateContent and
// :streamGenerateContent. The model is in the URL, never in the body.
type Request struct {
	Contents          []Content         `json:"contents"`
	SystemInstruction *Content          `json:"systemInstruction,omitempty"`
	Tools             []Tool            `json:"tools,omitempty"`
	ToolConfig        *ToolConfig       `json:"toolConfig,omitempty"`
	GenerationConfig  *GenerationConfig `json:"generationConfig,omitempty"`
	SafetySettings    jsontext.Value    `json:"safetySettings,omitzero"`
	CachedContent     string            `json:"cachedContent,omitempty"`
	Labels            map[string]string `json:"labels,omitempty"` // Vertex AI only

	Extra jsontext.Value `json:",embed"`
}

// Content is one turn: role "user" or "model" (none in systemInstruction).
type Content struct {
	Role  string `json:"role,omitempty"`
	Parts []Part `json:"parts"`
}

// Part is one piece of a turn: text (a thought when Thought is set),
// inline or referenced data, a function call or its response. A thought
// signature may ride on any part the model made, and must come back on
// the same part.
type Part struct {
	Text             string            `json:"text,omitempty"`
	Thought          bool              `json:"thought,omitzero"`
	ThoughtSignature string            `json:"thoughtSignature,omitempty"`
	InlineData       *Blob             `json:"inlineData,omitempty"`
	FileData         *FileData         `json:"fileData,omitempty"`
	FunctionCall     *FunctionCall     `json:"functionCall,omitempty"`
	FunctionResponse *FunctionResponse `json:"functionResponse,omitempty"`

	Extra jsontext.Value `json:",embed"` // executableCode, codeExecutionResult, videoMetadata…
}

// Blob is data sent inline, base64-encoded.
type Blob struct {
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
}

// FileData is data referenced by URI (a Files API upload, gs://, https://).
type FileData struct {
	MimeType string `json:"mimeType,omitempty"`
	FileURI  string `json:"fileUri"`
}

// FunctionCall is the model asking for a function to run.
type FunctionCall struct {
	ID   string         `json:"id,omitempty"`
	Name string         `json:"name"`
	Args jsontext.Value `json:"args,omitzero"`
}

// FunctionResponse is a function's result, sent back in a user turn.
type FunctionResponse struct {
	ID       string         `json:"id,omitempty"`
	Name     string         `json:"name"`
	Response jsontext.Value `json:"response"`
	// Parts are media the function returned (inlineData or fileData;
	// Gemini 3 models).
	Parts []Part `json:"parts,omitempty"`

	Extra jsontext.Value `json:",embed"` // willContinue, scheduling
}

// Tool is a set of function declarations (or a built-in tool, in Extra).
type Tool struct {
	FunctionDeclarations []FunctionDeclaration `json:"functionDeclarations,omitempty"`

	Extra jsontext.Value `json:",embed"` // googleSearch, codeExecution, urlContext…
}

// FunctionDeclaration declares a function; Parameters is Gemini's subset
// of OpenAPI's schema, ParametersJSONSchema the alternative in JSON
// Schema (one or the other).
type FunctionDeclaration struct {
	Name                 string         `json:"name"`
	Description          string         `json:"description,omitempty"`
	Parameters           jsontext.Value `json:"parameters,omitzero"`
	ParametersJSONSchema jsontext.Value `json:"parametersJsonSchema,omitzero"`

	Extra jsontext.Value `json:",embed"` // response, responseJsonSchema, behavior
}

// ToolConfig configures function calling.
type ToolConfig struct {
	FunctionCallingConfig *FunctionCallingConfig `json:"functionCallingConfig,omitempty"`

	Extra jsontext.Value `json:",embed"` // retrievalConfig
}

// FunctionCallingConfig: mode AUTO, ANY (must call one of
// AllowedFunctionNames, or any), NONE, VALIDATED (calls, when made, are
// of AllowedFunctionNames).
type FunctionCallingConfig struct {
	Mode                 string   `json:"mode,omitempty"`
	AllowedFunctionNames []string `json:"allowedFunctionNames,omitempty"`
}

// GenerationConfig bounds and shapes generation.
type GenerationConfig struct {
	Temperature      *float64       `json:"temperature,omitempty"`
	TopP             *float64       `json:"topP,omitempty"`
	TopK             *int64         `json:"topK,omitempty"`
	MaxOutputTokens  int64          `json:"maxOutputTokens,omitzero"`
	StopSequences    []string       `json:"stopSequences,omitempty"`
	CandidateCount   int64          `json:"candidateCount,omitzero"`
	PresencePenalty  *float64       `json:"presencePenalty,omitempty"`
	FrequencyPenalty *float64       `json:"frequencyPenalty,omitempty"`
	Seed             *int64         `json:"seed,omitempty"`
	ResponseMimeType string         `json:"responseMimeType,omitempty"`
	ResponseSchema   jsontext.Value `json:"responseSchema,omitzero"`
	// ResponseJSONSchema is the alternative to ResponseSchema in JSON
	// Schema (one or the other).
	ResponseJSONSchema jsontext.Value  `json:"responseJsonSchema,omitzero"`
	ResponseModalities []string        `json:"responseModalities,omitempty"`
	ResponseLogprobs   bool            `json:"responseLogprobs,omitzero"`
	Logprobs           *int64          `json:"logprobs,omitempty"`
	ThinkingConfig     *ThinkingConfig `json:"thinkingConfig,omitempty"`

	Extra jsontext.Value `json:",embed"` // speechConfig, mediaResolution…
}

// IsZero reports whether no member is set: a request without one sends
// no generationConfig.
func (g *GenerationConfig) IsZero() bool { return reflect.ValueOf(*g).IsZero() }

// ThinkingConfig asks for thinking: a token budget (2.5 models; -1 lets
// the model decide, 0 turns it off) or a level (3 models), and whether
// thought summaries come back.
type ThinkingConfig struct {
	ThinkingBudget  *int64 `json:"thinkingBudget,omitempty"`
	ThinkingLevel   string `json:"thinkingLevel,omitempty"`
	IncludeThoughts bool   `json:"includeThoughts,omitzero"`
}

// Response is a generateContent answer, and each event of a stream.
type Response struct {
	Candidates     []Candidate     `json:"candidates,omitempty"`
	PromptFeedback *PromptFeedback `json:"promptFeedback,omitempty"`
	// UsageMetadata stays raw: SetUsage reads it.
	UsageMetadata jsontext.Value `json:"usageMetadata,omitzero"`
	ModelVersion  string         `json:"modelVersion,omitempty"`
	ResponseID    string         `json:"responseId,omitempty"`
}

// Candidate is one generated answer.
type Candidate struct {
	Content       Content        `json:"content"`
	FinishReason  string         `json:"finishReason,omitempty"`
	FinishMessage string         `json:"finishMessage,omitempty"`
	Index         int64          `json:"index,omitzero"`
	SafetyRatings jsontext.Value `json:"safetyRatings,omitzero"`
}

// PromptFeedback says why a prompt was blocked (no candidates then).
type PromptFeedback struct {
	BlockReason        string         `json:"blockReason,omitempty"`
	BlockReasonMessage string         `json:"blockReasonMessage,omitempty"`
	SafetyRatings      jsontext.Value `json:"safetyRatings,omitzero"`
}

// Roles of a Content.
const (
	RoleUser  = "user"
	RoleModel = "model"
)

// Finish reasons of a Candidate.
const (
	FinishStop                  = "STOP"
	FinishMaxTokens             = "MAX_TOKENS"
	FinishSafety                = "SAFETY"
	FinishRecitation            = "RECITATION"
	FinishLanguage              = "LANGUAGE"
	FinishOther                 = "OTHER"
	FinishBlocklist             = "BLOCKLIST"
	FinishProhibitedContent     = "PROHIBITED_CONTENT"
	FinishSPII                  = "SPII"
	FinishMalformedFunctionCall = "MALFORMED_FUNCTION_CALL"
	FinishImageSafety           = "IMAGE_SAFETY"
	FinishUnexpectedToolCall    = "UNEXPECTED_TOOL_CALL"
)

// SkipThoughtSignature is the value Gemini documents for a function call
// whose signature was never seen (history made with another model): it
// turns the signature check off for that part.
const SkipThoughtSignature = "skip_thought_signature_validator"
