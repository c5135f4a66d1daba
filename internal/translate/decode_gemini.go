package translate

import (
	"github.com/tollgate/tollgate/internal/api/gemini"
)

// Hand-written decoders of the Gemini request and answer (see decode.go
// and decode_openai.go).

func (r *reader) geminiRequest(v *gemini.Request) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, quoted := r.name()
		switch string(name) {
		case "contents":
			v.Contents = list(r, (*reader).geminiContent)
		case "systemInstruction":
			v.SystemInstruction = pointer(r, (*reader).geminiContent)
		case "tools":
			v.Tools = list(r, (*reader).geminiTool)
		case "toolConfig":
			v.ToolConfig = pointer(r, (*reader).geminiToolConfig)
		case "generationConfig":
			v.GenerationConfig = pointer(r, (*reader).geminiGenerationConfig)
		case "safetySettings":
			v.SafetySettings = r.raw()
		case "cachedContent":
			v.CachedContent = r.str()
		case "labels":
			r.reflect(&v.Labels) // a map, and rare
		default:
			r.extra(&v.Extra, quoted)
		}
	}
}

func (r *reader) geminiContent(v *gemini.Content) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, _ := r.name()
		switch string(name) {
		case "role":
			v.Role = r.str()
		case "parts":
			v.Parts = list(r, (*reader).geminiPart)
		default:
			r.skip()
		}
	}
}

func (r *reader) geminiPart(v *gemini.Part) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, quoted := r.name()
		switch string(name) {
		case "text":
			v.Text = r.str()
		case "thought":
			v.Thought = r.boolean()
		case "thoughtSignature":
			v.ThoughtSignature = r.str()
		case "inlineData":
			v.InlineData = pointer(r, (*reader).geminiBlob)
		case "fileData":
			v.FileData = pointer(r, (*reader).geminiFileData)
		case "functionCall":
			v.FunctionCall = pointer(r, (*reader).geminiFunctionCall)
		case "functionResponse":
			v.FunctionResponse = pointer(r, (*reader).geminiFunctionResponse)
		default:
			r.extra(&v.Extra, quoted)
		}
	}
}

func (r *reader) geminiBlob(v *gemini.Blob) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, _ := r.name()
		switch string(name) {
		case "mimeType":
			v.MimeType = r.str()
		case "data":
			v.Data = r.str()
		default:
			r.skip()
		}
	}
}

func (r *reader) geminiFileData(v *gemini.FileData) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, _ := r.name()
		switch string(name) {
		case "mimeType":
			v.MimeType = r.str()
		case "fileUri":
			v.FileURI = r.str()
		default:
			r.skip()
		}
	}
}

func (r *reader) geminiFunctionCall(v *gemini.FunctionCall) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, _ := r.name()
		switch string(name) {
		case "id":
			v.ID = r.str()
		case "name":
			v.Name = r.str()
		case "args":
			v.Args = r.raw()
		default:
			r.skip()
		}
	}
}

func (r *reader) geminiFunctionResponse(v *gemini.FunctionResponse) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, quoted := r.name()
		switch string(name) {
		case "id":
			v.ID = r.str()
		case "name":
			v.Name = r.str()
		case "response":
			v.Response = r.raw()
		case "parts":
			v.Parts = list(r, (*reader).geminiPart)
		default:
			r.extra(&v.Extra, quoted)
		}
	}
}

func (r *reader) geminiTool(v *gemini.Tool) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, quoted := r.name()
		switch string(name) {
		case "functionDeclarations":
			v.FunctionDeclarations = list(r, (*reader).geminiFunctionDeclaration)
		default:
			r.extra(&v.Extra, quoted)
		}
	}
}

func (r *reader) geminiFunctionDeclaration(v *gemini.FunctionDeclaration) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, quoted := r.name()
		switch string(name) {
		case "name":
			v.Name = r.str()
		case "description":
			v.Description = r.str()
		case "parameters":
			v.Parameters = r.raw()
		case "parametersJsonSchema":
			v.ParametersJSONSchema = r.raw()
		default:
			r.extra(&v.Extra, quoted)
		}
	}
}

func (r *reader) geminiToolConfig(v *gemini.ToolConfig) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, quoted := r.name()
		switch string(name) {
		case "functionCallingConfig":
			v.FunctionCallingConfig = pointer(r, (*reader).geminiFunctionCallingConfig)
		default:
			r.extra(&v.Extra, quoted)
		}
	}
}

func (r *reader) geminiFunctionCallingConfig(v *gemini.FunctionCallingConfig) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, _ := r.name()
		switch string(name) {
		case "mode":
			v.Mode = r.str()
		case "allowedFunctionNames":
			v.AllowedFunctionNames = list(r, str1)
		default:
			r.skip()
		}
	}
}

func (r *reader) geminiGenerationConfig(v *gemini.GenerationConfig) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, quoted := r.name()
		switch string(name) {
		case "temperature":
			v.Temperature = r.floatPtr()
		case "topP":
			v.TopP = r.floatPtr()
		case "topK":
			v.TopK = r.intPtr()
		case "maxOutputTokens":
			v.MaxOutputTokens = r.int()
		case "stopSequences":
			v.StopSequences = list(r, str1)
		case "candidateCount":
			v.CandidateCount = r.int()
		case "presencePenalty":
			v.PresencePenalty = r.floatPtr()
		case "frequencyPenalty":
			v.FrequencyPenalty = r.floatPtr()
		case "seed":
			v.Seed = r.intPtr()
		case "responseMimeType":
			v.ResponseMimeType = r.str()
		case "responseSchema":
			v.ResponseSchema = r.raw()
		case "responseJsonSchema":
			v.ResponseJSONSchema = r.raw()
		case "responseModalities":
			v.ResponseModalities = list(r, str1)
		case "responseLogprobs":
			v.ResponseLogprobs = r.boolean()
		case "logprobs":
			v.Logprobs = r.intPtr()
		case "thinkingConfig":
			v.ThinkingConfig = pointer(r, (*reader).geminiThinkingConfig)
		default:
			r.extra(&v.Extra, quoted)
		}
	}
}

func (r *reader) geminiThinkingConfig(v *gemini.ThinkingConfig) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, _ := r.name()
		switch string(name) {
		case "thinkingBudget":
			v.ThinkingBudget = r.intPtr()
		case "thinkingLevel":
			v.ThinkingLevel = r.str()
		case "includeThoughts":
			v.IncludeThoughts = r.boolean()
		default:
			r.skip()
		}
	}
}

func (r *reader) geminiResponse(v *gemini.Response) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, _ := r.name()
		switch string(name) {
		case "candidates":
			v.Candidates = list(r, (*reader).geminiCandidate)
		case "promptFeedback":
			v.PromptFeedback = pointer(r, (*reader).geminiPromptFeedback)
		case "usageMetadata":
			v.UsageMetadata = r.raw()
		case "modelVersion":
			v.ModelVersion = r.str()
		case "responseId":
			v.ResponseID = r.str()
		default:
			r.skip()
		}
	}
}

func (r *reader) geminiCandidate(v *gemini.Candidate) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, _ := r.name()
		switch string(name) {
		case "content":
			r.geminiContent(&v.Content)
		case "finishReason":
			v.FinishReason = r.str()
		case "finishMessage":
			v.FinishMessage = r.str()
		case "index":
			v.Index = r.int()
		case "safetyRatings":
			v.SafetyRatings = r.raw()
		default:
			r.skip()
		}
	}
}

func (r *reader) geminiPromptFeedback(v *gemini.PromptFeedback) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, _ := r.name()
		switch string(name) {
		case "blockReason":
			v.BlockReason = r.str()
		case "blockReasonMessage":
			v.BlockReasonMessage = r.str()
		case "safetyRatings":
			v.SafetyRatings = r.raw()
		default:
			r.skip()
		}
	}
}
