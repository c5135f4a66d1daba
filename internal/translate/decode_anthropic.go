package translate

import (
	"github.com/tollgate/tollgate/internal/api/anthropic"
)

// Hand-written decoders of the Messages types (see decode.go and
// decode_openai.go).

func (r *reader) messagesRequest(v *anthropic.MessagesRequest) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, quoted := r.name()
		switch string(name) {
		case "model":
			v.Model = r.str()
		case "max_tokens":
			v.MaxTokens = r.int()
		case "system":
			r.content(&v.System)
		case "messages":
			v.Messages = list(r, (*reader).message)
		case "stop_sequences":
			v.StopSequences = list(r, str1)
		case "stream":
			v.Stream = r.boolean()
		case "temperature":
			v.Temperature = r.floatPtr()
		case "top_p":
			v.TopP = r.floatPtr()
		case "top_k":
			v.TopK = r.intPtr()
		case "metadata":
			v.Metadata = pointer(r, (*reader).metadata)
		case "tools":
			v.Tools = list(r, (*reader).tool)
		case "tool_choice":
			v.ToolChoice = pointer(r, (*reader).toolChoice)
		case "thinking":
			v.Thinking = pointer(r, (*reader).thinking)
		case "output_config":
			v.OutputConfig = pointer(r, (*reader).outputConfig)
		case "output_format":
			v.OutputFormat = r.raw()
		case "service_tier":
			v.ServiceTier = r.str()
		case "mcp_servers":
			v.MCPServers = r.raw()
		case "container":
			v.Container = r.raw()
		case "context_management":
			v.ContextMgmt = r.raw()
		case "cache_control":
			v.CacheControl = r.raw()
		case "inference_geo":
			v.InferenceGeo = r.str()
		default:
			r.extra(&v.Extra, quoted)
		}
	}
}

func (r *reader) metadata(v *anthropic.Metadata) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, _ := r.name()
		switch string(name) {
		case "user_id":
			v.UserID = r.str()
		default:
			r.skip()
		}
	}
}

func (r *reader) message(v *anthropic.Message) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, quoted := r.name()
		switch string(name) {
		case "role":
			v.Role = r.str()
		case "content":
			r.content(&v.Content)
		case "cache_control":
			v.CacheControl = r.raw()
		default:
			r.extra(&v.Extra, quoted)
		}
	}
}

// content is anthropic.Content.UnmarshalJSONFrom.
func (r *reader) content(v *anthropic.Content) {
	switch r.kind() {
	case '"':
		*v = anthropic.Content{Blocks: []anthropic.Block{{Type: "text", Text: r.str()}}, FromString: true}
	case '[':
		v.FromString = false
		v.Blocks = list(r, (*reader).block)
	case 'n':
		r.null()
		*v = anthropic.Content{}
	case '{':
		*v = anthropic.Content{Raw: r.raw()}
	default:
		r.fail()
	}
}

func (r *reader) block(v *anthropic.Block) {
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
		case "citations":
			v.Citations = r.raw()
		case "source":
			r.reflect(&v.Source) // a string or an object, and rare
		case "title":
			v.Title = r.str()
		case "id":
			v.ID = r.str()
		case "name":
			v.Name = r.str()
		case "input":
			v.Input = r.raw()
		case "tool_use_id":
			v.ToolUseID = r.str()
		case "content":
			v.Content = pointer(r, (*reader).content)
		case "is_error":
			v.IsError = r.boolean()
		case "thinking":
			v.Thinking = r.str()
		case "signature":
			v.Signature = r.str()
		case "data":
			v.Data = r.str()
		case "cache_control":
			v.CacheControl = r.raw()
		default:
			r.extra(&v.Extra, quoted)
		}
	}
}

func (r *reader) tool(v *anthropic.Tool) {
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
		case "input_schema":
			v.InputSchema = r.raw()
		case "strict":
			v.Strict = r.boolPtr()
		case "cache_control":
			v.CacheControl = r.raw()
		case "defer_loading":
			v.DeferLoading = r.boolean()
		case "input_examples":
			v.InputExamples = r.raw()
		case "allowed_callers":
			v.AllowedCallers = list(r, str1)
		case "eager_input_streaming":
			v.EagerInputStreaming = r.boolPtr()
		default:
			r.extra(&v.Extra, quoted)
		}
	}
}

func (r *reader) toolChoice(v *anthropic.ToolChoice) {
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
		case "disable_parallel_tool_use":
			v.DisableParallelToolUse = r.boolean()
		default:
			r.skip()
		}
	}
}

func (r *reader) thinking(v *anthropic.Thinking) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, quoted := r.name()
		switch string(name) {
		case "type":
			v.Type = r.str()
		case "budget_tokens":
			v.BudgetTokens = r.int()
		default:
			r.extra(&v.Extra, quoted)
		}
	}
}

func (r *reader) outputConfig(v *anthropic.OutputConfig) {
	if !r.open('{') {
		return
	}
	for r.more() {
		name, quoted := r.name()
		switch string(name) {
		case "effort":
			v.Effort = r.str()
		case "format":
			v.Format = r.raw()
		default:
			r.extra(&v.Extra, quoted)
		}
	}
}

func (r *reader) messagesResponse(v *anthropic.Response) {
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
		case "role":
			v.Role = r.str()
		case "model":
			v.Model = r.str()
		case "content":
			v.Content = list(r, (*reader).block)
		case "stop_reason":
			v.StopReason = r.strPtr()
		case "stop_sequence":
			v.StopSequence = r.strPtr()
		case "usage":
			v.Usage = r.raw()
		default:
			r.skip()
		}
	}
}
