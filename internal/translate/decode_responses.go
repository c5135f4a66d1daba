package translate

import (
	"github.com/tollgate/tollgate/internal/api/responses"
)

// Hand-written decoders of the Responses request (see decode.go and
// decode_openai.go).

func (r *reader) responsesRequest(v *responses.Request) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, quoted := r.name()
		switch string(name) {
		case "model":
			v.Model = r.str()
		case "input":
			r.responsesInput(&v.Input)
		case "instructions":
			v.Instructions = r.strPtr()
		case "tools":
			v.Tools = list(r, (*reader).responsesTool)
		case "tool_choice":
			v.ToolChoice = r.raw()
		case "parallel_tool_calls":
			v.ParallelToolCalls = r.boolPtr()
		case "max_output_tokens":
			v.MaxOutputTokens = r.intPtr()
		case "max_tool_calls":
			v.MaxToolCalls = r.intPtr()
		case "temperature":
			v.Temperature = r.floatPtr()
		case "top_p":
			v.TopP = r.floatPtr()
		case "top_logprobs":
			v.TopLogprobs = r.intPtr()
		case "reasoning":
			v.Reasoning = pointer(r, (*reader).responsesReasoning)
		case "text":
			v.Text = pointer(r, (*reader).responsesText)
		case "stream":
			v.Stream = r.boolean()
		case "stream_options":
			v.StreamOptions = r.raw()
		case "store":
			v.Store = r.boolPtr()
		case "previous_response_id":
			v.PreviousResponseID = r.str()
		case "conversation":
			v.Conversation = r.raw()
		case "include":
			v.Include = list(r, str1)
		case "metadata":
			v.Metadata = r.raw()
		case "prompt_cache_key":
			v.PromptCacheKey = r.str()
		case "safety_identifier":
			v.SafetyIdentifier = r.str()
		case "user":
			v.User = r.str()
		case "truncation":
			v.Truncation = r.str()
		case "service_tier":
			v.ServiceTier = r.str()
		case "background":
			v.Background = r.boolPtr()
		case "prompt":
			v.Prompt = r.raw()
		default:
			r.extra(&v.Extra, quoted)
		}
	}
}

// responsesInput is responses.Input.UnmarshalJSONFrom.
func (r *reader) responsesInput(v *responses.Input) {
	switch r.kind() {
	case '"':
		*v = responses.Input{IsString: true, Text: r.str()}
	case '[':
		*v = responses.Input{Items: list(r, (*reader).responsesItem)}
	default:
		r.fail()
	}
}

func (r *reader) responsesItem(v *responses.Item) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, quoted := r.name()
		switch string(name) {
		case "type":
			v.Type = r.str()
		case "id":
			v.ID = r.str()
		case "status":
			v.Status = r.str()
		case "role":
			v.Role = r.str()
		case "content":
			r.responsesContent(&v.Content)
		case "phase":
			v.Phase = r.str()
		case "call_id":
			v.CallID = r.str()
		case "name":
			v.Name = r.str()
		case "namespace":
			v.Namespace = r.str()
		case "arguments":
			v.Arguments = r.strPtr()
		case "input":
			v.Input = r.strPtr()
		case "output":
			r.responsesContent(&v.Output)
		case "summary":
			v.Summary = list(r, (*reader).responsesPart)
		case "encrypted_content":
			v.EncryptedContent = r.strPtr()
		default:
			r.extra(&v.Extra, quoted)
		}
	}
}

// responsesContent is responses.Content.UnmarshalJSONFrom.
func (r *reader) responsesContent(v *responses.Content) {
	switch r.kind() {
	case '"':
		*v = responses.Content{IsString: true, Text: r.str()}
	case '[':
		*v = responses.Content{Parts: list(r, (*reader).responsesPart)}
	case 'n':
		r.null()
		*v = responses.Content{Null: true}
	default:
		r.fail()
	}
}

func (r *reader) responsesPart(v *responses.Part) {
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
			v.ImageURL = r.str()
		case "file_id":
			v.FileID = r.str()
		case "file_data":
			v.FileData = r.str()
		case "file_url":
			v.FileURL = r.str()
		case "filename":
			v.Filename = r.str()
		case "detail":
			v.Detail = r.str()
		case "annotations":
			v.Annot = r.raw()
		default:
			r.extra(&v.Extra, quoted)
		}
	}
}

func (r *reader) responsesTool(v *responses.Tool) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, quoted := r.name()
		switch string(name) {
		case "type":
			v.Type = r.str()
		case "name":
			v.Name = r.str()
		case "description":
			v.Description = r.str()
		case "parameters":
			v.Parameters = r.raw()
		case "strict":
			v.Strict = r.boolPtr()
		case "format":
			v.Format = r.raw()
		case "tools":
			v.Tools = list(r, (*reader).responsesTool)
		default:
			r.extra(&v.Extra, quoted)
		}
	}
}

func (r *reader) responsesReasoning(v *responses.Reasoning) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, quoted := r.name()
		switch string(name) {
		case "effort":
			v.Effort = r.str()
		case "summary":
			v.Summary = r.str()
		case "generate_summary":
			v.GenerateSummary = r.str()
		default:
			r.extra(&v.Extra, quoted)
		}
	}
}

func (r *reader) responsesText(v *responses.Text) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, quoted := r.name()
		switch string(name) {
		case "format":
			v.Format = pointer(r, (*reader).responsesFormat)
		case "verbosity":
			v.Verbosity = r.str()
		default:
			r.extra(&v.Extra, quoted)
		}
	}
}

func (r *reader) responsesFormat(v *responses.Format) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, _ := r.name()
		switch string(name) {
		case "type":
			v.Type = r.str()
		case "name":
			v.Name = r.str()
		case "schema":
			v.Schema = r.raw()
		case "strict":
			v.Strict = r.boolPtr()
		case "description":
			v.Description = r.str()
		default:
			r.skip()
		}
	}
}
