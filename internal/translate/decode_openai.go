package translate

import (
	"github.com/tollgate/tollgate/internal/api/openai"
)

// Hand-written decoders of the Chat Completions types (see decode.go).
// Each member goes where its json tag says; members without a field go to
// Extra where the type has one, and are skipped where it has none.

func (r *reader) chatRequest(v *openai.ChatRequest) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, quoted := r.name()
		switch string(name) {
		case "model":
			v.Model = r.str()
		case "messages":
			v.Messages = list(r, (*reader).chatMessage)
		case "max_tokens":
			v.MaxTokens = r.intPtr()
		case "max_completion_tokens":
			v.MaxCompletionTokens = r.intPtr()
		case "stream":
			v.Stream = r.boolean()
		case "stream_options":
			v.StreamOptions = pointer(r, (*reader).streamOptions)
		case "temperature":
			v.Temperature = r.floatPtr()
		case "top_p":
			v.TopP = r.floatPtr()
		case "top_k":
			v.TopK = r.intPtr()
		case "stop":
			r.stop(&v.Stop)
		case "n":
			v.N = r.intPtr()
		case "logprobs":
			v.Logprobs = r.boolPtr()
		case "top_logprobs":
			v.TopLogprobs = r.intPtr()
		case "user":
			v.User = r.str()
		case "prompt_cache_key":
			v.PromptCacheKey = r.str()
		case "safety_identifier":
			v.SafetyIdentifier = r.str()
		case "tools":
			v.Tools = list(r, (*reader).chatTool)
		case "tool_choice":
			v.ToolChoice = r.raw()
		case "parallel_tool_calls":
			v.ParallelToolCalls = r.boolPtr()
		case "functions":
			v.Functions = list(r, (*reader).chatFunction)
		case "function_call":
			v.FunctionCall = r.raw()
		case "reasoning_effort":
			v.ReasoningEffort = r.str()
		case "response_format":
			v.ResponseFormat = r.raw()
		case "modalities":
			v.Modalities = list(r, str1)
		case "audio":
			v.Audio = r.raw()
		case "thinking":
			v.Thinking = r.raw()
		case "reasoning":
			v.Reasoning = r.raw()
		case "enable_thinking":
			v.EnableThinking = r.boolPtr()
		default:
			r.extra(&v.Extra, quoted)
		}
	}
}

func (r *reader) streamOptions(v *openai.StreamOptions) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, _ := r.name()
		switch string(name) {
		case "include_usage":
			v.IncludeUsage = r.boolean()
		default:
			r.skip()
		}
	}
}

// stop is openai.Strings.UnmarshalJSONFrom.
func (r *reader) stop(v *openai.Strings) {
	switch r.kind() {
	case '"':
		*v = openai.Strings{Values: []string{r.str()}, Set: true}
	case 'n':
		r.null()
		*v = openai.Strings{}
	default:
		v.Set = true
		v.Values = list(r, str1)
	}
}

func (r *reader) chatMessage(v *openai.ChatMessage) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, quoted := r.name()
		switch string(name) {
		case "role":
			v.Role = r.str()
		case "content":
			r.messageContent(&v.Content)
		case "name":
			v.Name = r.str()
		case "tool_calls":
			v.ToolCalls = list(r, (*reader).toolCall)
		case "tool_call_id":
			v.ToolCallID = r.str()
		case "function_call":
			v.FunctionCall = pointer(r, (*reader).functionCall)
		case "refusal":
			v.Refusal = r.strPtr()
		case "reasoning_content":
			v.ReasoningContent = r.str()
		case "reasoning":
			v.Reasoning = r.str()
		case "thinking_blocks":
			v.ThinkingBlocks = list(r, (*reader).thinkingBlock)
		case "reasoning_signature":
			v.ReasoningSig = r.str()
		default:
			r.extra(&v.Extra, quoted)
		}
	}
}

// messageContent is openai.MessageContent.UnmarshalJSONFrom.
func (r *reader) messageContent(v *openai.MessageContent) {
	switch r.kind() {
	case '"':
		*v = openai.MessageContent{IsString: true, Text: r.str()}
	case '[':
		*v = openai.MessageContent{Parts: list(r, (*reader).part)}
	case 'n':
		r.null()
		*v = openai.MessageContent{Null: true}
	default:
		r.fail()
	}
}

func (r *reader) part(v *openai.Part) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, quoted := r.name()
		switch string(name) {
		case "type":
			v.Type = r.str()
		case "text":
			v.Text = r.str()
		case "refusal":
			v.Refusal = r.str()
		case "image_url":
			v.ImageURL = pointer(r, (*reader).imageURL)
		case "file":
			v.File = pointer(r, (*reader).file)
		case "input_audio":
			v.InputAudio = r.raw()
		case "cache_control":
			v.CacheControl = r.raw()
		default:
			r.extra(&v.Extra, quoted)
		}
	}
}

func (r *reader) imageURL(v *openai.ImageURL) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, _ := r.name()
		switch string(name) {
		case "url":
			v.URL = r.str()
		case "detail":
			v.Detail = r.str()
		default:
			r.skip()
		}
	}
}

func (r *reader) file(v *openai.File) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, _ := r.name()
		switch string(name) {
		case "file_data":
			v.FileData = r.str()
		case "file_id":
			v.FileID = r.str()
		case "filename":
			v.Filename = r.str()
		default:
			r.skip()
		}
	}
}

func (r *reader) toolCall(v *openai.ToolCall) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, _ := r.name()
		switch string(name) {
		case "id":
			v.ID = r.str()
		case "type":
			v.Type = r.str()
		case "function":
			r.functionCall(&v.Function)
		default:
			r.skip()
		}
	}
}

func (r *reader) functionCall(v *openai.FunctionCall) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, _ := r.name()
		switch string(name) {
		case "name":
			v.Name = r.str()
		case "arguments":
			v.Arguments = r.str()
		default:
			r.skip()
		}
	}
}

func (r *reader) thinkingBlock(v *openai.ThinkingBlock) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, _ := r.name()
		switch string(name) {
		case "type":
			v.Type = r.str()
		case "thinking":
			v.Thinking = r.str()
		case "signature":
			v.Signature = r.str()
		case "data":
			v.Data = r.str()
		default:
			r.skip()
		}
	}
}

func (r *reader) chatTool(v *openai.Tool) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, quoted := r.name()
		switch string(name) {
		case "type":
			v.Type = r.str()
		case "function":
			r.chatFunction(&v.Function)
		default:
			r.extra(&v.Extra, quoted)
		}
	}
}

func (r *reader) chatFunction(v *openai.Function) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, _ := r.name()
		switch string(name) {
		case "name":
			v.Name = r.str()
		case "description":
			v.Description = r.str()
		case "parameters":
			v.Parameters = r.raw()
		case "strict":
			v.Strict = r.boolPtr()
		default:
			r.skip()
		}
	}
}

func (r *reader) completion(v *openai.Completion) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, _ := r.name()
		switch string(name) {
		case "id":
			v.ID = r.str()
		case "object":
			v.Object = r.str()
		case "created":
			v.Created = r.int()
		case "model":
			v.Model = r.str()
		case "choices":
			v.Choices = list(r, (*reader).choice)
		case "usage":
			v.Usage = r.raw()
		case "system_fingerprint":
			v.SystemFingerprint = r.strPtr()
		default:
			r.skip()
		}
	}
}

func (r *reader) choice(v *openai.Choice) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, _ := r.name()
		switch string(name) {
		case "index":
			v.Index = r.int()
		case "message":
			r.chatMessage(&v.Message)
		case "logprobs":
			v.Logprobs = r.raw()
		case "finish_reason":
			v.FinishReason = r.strPtr()
		default:
			r.skip()
		}
	}
}
