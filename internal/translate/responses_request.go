package translate

import (
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/api/responses"
	"github.com/tollgate/tollgate/internal/jsonx"
)

// Requests of Chat Completions and Messages clients for a model served
// only through the Responses API. The translated request keeps no state
// upstream (store: false) and asks for encrypted reasoning, which the
// answer hands to Anthropic clients sealed in their thinking blocks'
// signatures so that it goes back on the next turn. It never carries what
// the Responses API refuses: max_tokens, stop, stream_options, an output
// bound under 16.

// minOutputTokens is the smallest max_output_tokens the Responses API takes.
const minOutputTokens = 16

// newResponsesRequest starts the upstream request for a client request.
func newResponsesRequest(model string, stream bool, maxOut *int64, p *Plan) *responses.Request {
	off := false
	out := &responses.Request{Model: model, Stream: stream, Store: &off, Input: responses.Input{Items: []responses.Item{}}}
	if maxOut != nil {
		n := *maxOut
		if n < minOutputTokens {
			n = minOutputTokens
			p.adjust("max_tokens")
		}
		out.MaxOutputTokens = &n
	}
	return out
}

// ChatRequestToResponses translates a Chat Completions request into a
// Responses request for an upstream serving upstreamModel.
func ChatRequestToResponses(in *openai.ChatRequest, upstreamModel string, caps Caps, policy Policy, signer *Signer) (*responses.Request, *Plan, error) {
	p := &Plan{AnswerModel: upstreamModel, Stream: in.Stream, Caps: caps, policy: policy, signer: signer}
	p.IncludeUsage = in.StreamOptions != nil && in.StreamOptions.IncludeUsage
	if in.N != nil && *in.N > 1 {
		if err := p.contract("n", "a Responses upstream produces one answer per request"); err != nil {
			return nil, nil, err
		}
	}
	if (in.Logprobs != nil && *in.Logprobs) || in.TopLogprobs != nil {
		if err := p.advisory("logprobs", "log probabilities are not translated from a Responses upstream"); err != nil {
			return nil, nil, err
		}
	}
	for _, m := range []struct {
		param   string
		present bool
	}{
		{"stop", len(in.Stop.Values) > 0}, {"top_k", in.TopK != nil},
		{"modalities", len(in.Modalities) > 0 || len(in.Audio) > 0},
	} {
		if m.present {
			if err := p.advisory(m.param, "the Responses API has no such parameter"); err != nil {
				return nil, nil, err
			}
		}
	}
	for _, b := range []struct {
		param string
		n     *int64
	}{{"max_completion_tokens", in.MaxCompletionTokens}, {"max_tokens", in.MaxTokens}} {
		if err := positiveBound(b.param, b.n); err != nil {
			return nil, nil, err
		}
	}
	out := newResponsesRequest(upstreamModel, in.Stream, cmpPtr(in.MaxCompletionTokens, in.MaxTokens), p)
	out.Temperature, out.TopP, out.ParallelToolCalls = in.Temperature, in.TopP, in.ParallelToolCalls
	out.SafetyIdentifier = cmpOr(in.SafetyIdentifier, in.User)
	if in.ReasoningEffort != "" {
		out.Reasoning = &responses.Reasoning{Effort: in.ReasoningEffort, Summary: "auto"}
		out.Include = []string{"reasoning.encrypted_content"}
	}
	if err := c2rFormat(in.ResponseFormat, out); err != nil {
		return nil, nil, err
	}
	out.PromptCacheKey = in.PromptCacheKey
	if err := c2rMessages(in, out, p); err != nil {
		return nil, nil, err
	}
	if err := c2rTools(in, out, p); err != nil {
		return nil, nil, err
	}
	if err := eachMember(in.Extra, func(k string) error {
		switch k {
		case "service_tier", "metadata", "verbosity", "prompt_cache_retention":
			return c2rPassMember(k, in.Extra, out)
		case "store":
			return nil // the gateway keeps nothing upstream
		}
		why := "unknown parameter, not translated"
		if advisoryChatParams[k] {
			why = "the Responses API has no such parameter"
		}
		return p.advisory(k, why)
	}); err != nil {
		return nil, nil, err
	}
	return out, p, nil
}

// c2rPassMember carries a member both APIs share from the chat request's
// unnamed members into the Responses request.
func c2rPassMember(k string, extra jsontext.Value, out *responses.Request) error {
	var m map[string]jsontext.Value
	if err := jsonx.Unmarshal(extra, &m); err != nil {
		return nil
	}
	v := m[k]
	switch k {
	case "service_tier":
		jsonx.Unmarshal(v, &out.ServiceTier)
	case "metadata":
		out.Metadata = v.Clone()
	case "verbosity":
		var s string
		jsonx.Unmarshal(v, &s)
		if out.Text == nil {
			out.Text = &responses.Text{}
		}
		out.Text.Verbosity = s
	default:
		out.Extra = appendMember(out.Extra, k, v)
	}
	return nil
}

// appendMember adds "k": v to an object of unnamed members.
func appendMember(obj jsontext.Value, k string, v jsontext.Value) jsontext.Value {
	b := []byte("{")
	if len(obj) > 2 {
		b = append(b, obj[1:len(obj)-1]...)
		b = append(b, ',')
	}
	b = jsonx.AppendQuote(b, k)
	b = append(b, ':')
	b = append(b, v...)
	return append(b, '}')
}

func cmpPtr[T any](a, b *T) *T {
	if a != nil {
		return a
	}
	return b
}

// c2rFormat maps response_format to text.format.
func c2rFormat(rf jsontext.Value, out *responses.Request) error {
	if len(rf) == 0 || string(rf) == "null" {
		return nil
	}
	var f struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Name        string         `json:"name"`
			Description string         `json:"description"`
			Schema      jsontext.Value `json:"schema"`
			Strict      *bool          `json:"strict"`
		} `json:"json_schema"`
	}
	if err := jsonx.Unmarshal(rf, &f); err != nil {
		return explained("response_format", err)
	}
	format := &responses.Format{Type: f.Type}
	switch f.Type {
	case "text", "":
		return nil
	case "json_object":
	case "json_schema":
		js := f.JSONSchema
		if len(js.Schema) == 0 {
			return badRequest("response_format.json_schema.schema", "response_format.json_schema.schema: required")
		}
		format.Name, format.Description, format.Schema, format.Strict = cmpOr(js.Name, "output"), js.Description, js.Schema, js.Strict
	default:
		return badRequest("response_format.type", "response_format.type: unknown value %q", f.Type)
	}
	out.Text = &responses.Text{Format: format}
	return nil
}

// c2rMessages converts messages into input items, in order: system and
// developer messages keep their role, assistant tool calls become
// function_call items, tool messages function_call_output items.
func c2rMessages(in *openai.ChatRequest, out *responses.Request, p *Plan) error {
	items := out.Input.Items
	fnCalls := 0 // legacy function_call ids
	for i, m := range in.Messages {
		path := fmt.Sprintf("messages[%d]", i)
		switch m.Role {
		case "system", "developer":
			if text := joinText(textParts(m.Content)); text != "" {
				items = append(items, responses.Item{Type: "message", Role: m.Role, Content: responses.Content{IsString: true, Text: text}})
			}
		case "user":
			parts, err := c2rUserParts(path, m.Content, p)
			if err != nil {
				return err
			}
			if len(parts) > 0 {
				items = append(items, responses.Item{Type: "message", Role: "user", Content: responses.Content{Parts: parts}})
			}
		case "assistant":
			text := joinText(textParts(m.Content))
			if m.Refusal != nil && text == "" {
				text = *m.Refusal
			}
			if text != "" {
				items = append(items, responses.Item{Type: "message", Role: "assistant", Content: responses.Content{Parts: []responses.Part{{Type: "output_text", Text: text}}}})
			}
			for j, tc := range m.ToolCalls {
				tpath := fmt.Sprintf("%s.tool_calls[%d]", path, j)
				if err := requiredCallID(tpath+".id", tc.ID, "that the tool message answering this call names"); err != nil {
					return err
				}
				args := tc.Function.Arguments
				if _, err := toolInput(args, tpath+".function.arguments"); err != nil {
					return err
				}
				items = append(items, responses.Item{Type: "function_call", CallID: tc.ID, Name: p.upstreamToolName(tc.Function.Name), Arguments: &args})
			}
			if fc := m.FunctionCall; fc != nil {
				fnCalls++
				args := fc.Arguments
				items = append(items, responses.Item{Type: "function_call", CallID: fmt.Sprintf("call_fc_%d", fnCalls), Name: p.upstreamToolName(fc.Name), Arguments: &args})
			}
		case "tool", "function":
			id := m.ToolCallID
			if m.Role == "function" {
				id = fmt.Sprintf("call_fc_%d", fnCalls)
			} else if err := requiredCallID(path+".tool_call_id", id, "of the assistant tool call this message answers"); err != nil {
				return err
			}
			items = append(items, responses.Item{Type: "function_call_output", CallID: id, Output: responses.Content{IsString: true, Text: joinText(textParts(m.Content))}})
		default:
			return badRequest(path+".role", "%s.role: unknown role %q", path, m.Role)
		}
	}
	if len(items) == 0 {
		return badRequest("messages", "messages: at least one message is required")
	}
	out.Input.Items = items
	return nil
}

// joinText is the text of text parts, in order.
func joinText(parts []openai.Part) string {
	var b strings.Builder
	for _, part := range parts {
		b.WriteString(part.Text)
	}
	return b.String()
}

// c2rUserParts converts a user message's content into input parts.
func c2rUserParts(path string, c openai.MessageContent, p *Plan) ([]responses.Part, error) {
	if c.IsString {
		if c.Text == "" {
			return nil, nil
		}
		return []responses.Part{{Type: "input_text", Text: c.Text}}, nil
	}
	var out []responses.Part
	for j, part := range c.Parts {
		ppath := fmt.Sprintf("%s.content[%d]", path, j)
		switch part.Type {
		case "text":
			if part.Text != "" {
				out = append(out, responses.Part{Type: "input_text", Text: part.Text})
			}
		case "image_url":
			if part.ImageURL == nil || part.ImageURL.URL == "" {
				return nil, badRequest(ppath, "%s: image_url part without an image_url", ppath)
			}
			out = append(out, responses.Part{Type: "input_image", ImageURL: part.ImageURL.URL, Detail: cmpOr(part.ImageURL.Detail, "auto")})
		case "file":
			f := part.File
			if f == nil || f.FileData == "" && f.FileID == "" {
				return nil, badRequest(ppath, "%s: file part without file_data or file_id", ppath)
			}
			out = append(out, responses.Part{Type: "input_file", FileData: f.FileData, FileID: f.FileID, Filename: f.Filename})
		default:
			if err := p.contract(ppath, fmt.Sprintf("content parts of type %q cannot be sent to a Responses upstream", part.Type)); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// c2rTools converts tools, tool_choice (and the legacy functions forms).
func c2rTools(in *openai.ChatRequest, out *responses.Request, p *Plan) error {
	defs, err := chatFunctionTools(in, p, "sent to a Responses upstream")
	if err != nil {
		return err
	}
	for _, t := range defs {
		f := t.Function
		out.Tools = append(out.Tools, responses.Tool{Type: "function", Name: p.upstreamToolName(f.Name), Description: f.Description,
			Parameters: inputSchema(f.Parameters), Strict: f.Strict})
	}
	choice := in.ToolChoice
	if len(choice) == 0 {
		choice = in.FunctionCall
	}
	if len(choice) == 0 || string(choice) == "null" {
		return nil
	}
	if choice.Kind() == '"' {
		var s string
		jsonx.Unmarshal(choice, &s)
		switch s {
		case "auto", "none", "required":
			out.ToolChoice = choice.Clone()
			return nil
		}
		return badRequest("tool_choice", "tool_choice: unknown value %q", s)
	}
	var c struct {
		Type     string `json:"type"`
		Name     string `json:"name"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := jsonx.Unmarshal(choice, &c); err != nil {
		return explained("tool_choice", err)
	}
	name := cmpOr(c.Function.Name, c.Name)
	if name == "" {
		return badRequest("tool_choice", "tool_choice: unsupported value %s", choice)
	}
	out.ToolChoice = mustJSON(map[string]string{"type": "function", "name": p.upstreamToolName(name)})
	return nil
}

// MessagesRequestToResponses translates a Messages request into a
// Responses request for an upstream serving upstreamModel.
func MessagesRequestToResponses(in *anthropic.MessagesRequest, upstreamModel string, caps Caps, policy Policy, signer *Signer) (*responses.Request, *Plan, error) {
	p := &Plan{AnswerModel: upstreamModel, Stream: in.Stream, Caps: caps, policy: policy, signer: signer}
	if err := positiveBound("max_tokens", &in.MaxTokens); err != nil {
		return nil, nil, err
	}
	maxOut := in.MaxTokens
	out := newResponsesRequest(upstreamModel, in.Stream, &maxOut, p)
	out.Temperature, out.TopP = in.Temperature, in.TopP
	if in.Metadata != nil && in.Metadata.UserID != "" {
		out.SafetyIdentifier = opaqueUserID(in.Metadata.UserID)
		if len(out.SafetyIdentifier) > 64 {
			out.SafetyIdentifier = hashID(out.SafetyIdentifier)
		}
		// The user (for Claude Code, the session) is what keeps a cached
		// prefix warm: OpenAI routes requests with one key together.
		out.PromptCacheKey = hashID(in.Metadata.UserID)
	}
	for _, m := range []struct {
		param   string
		present bool
	}{
		{"stop_sequences", len(in.StopSequences) > 0}, {"top_k", in.TopK != nil},
		{"mcp_servers", !emptyJSON(in.MCPServers)}, {"container", !emptyJSON(in.Container)},
		{"context_management", !emptyJSON(in.ContextMgmt)}, {"cache_control", len(in.CacheControl) > 0},
	} {
		if m.present {
			if err := p.advisory(m.param, "the Responses API has no such parameter"); err != nil {
				return nil, nil, err
			}
		}
	}
	if err := m2rThinking(in, out, p); err != nil {
		return nil, nil, err
	}
	if err := m2rInput(in, out, p); err != nil {
		return nil, nil, err
	}
	if err := m2rTools(in, out, p); err != nil {
		return nil, nil, err
	}
	if err := unknownMembers(in.Extra, "", p); err != nil {
		return nil, nil, err
	}
	return out, p, nil
}

// m2rThinking maps thinking (a budget, or adaptive with an effort) to a
// reasoning effort, with summaries so that the client sees the thinking,
// and structured output to text.format.
func m2rThinking(in *anthropic.MessagesRequest, out *responses.Request, p *Plan) error {
	effort := ""
	if oc := in.OutputConfig; oc != nil {
		effort = oc.Effort
		if len(oc.Format) > 0 {
			var f struct {
				Type   string         `json:"type"`
				Schema jsontext.Value `json:"schema"`
			}
			if err := jsonx.Unmarshal(oc.Format, &f); err != nil || f.Type != "json_schema" || len(f.Schema) == 0 {
				return badRequest("output_config.format", "output_config.format: a json_schema format with a schema is required")
			}
			out.Text = &responses.Text{Format: &responses.Format{Type: "json_schema", Name: "output", Schema: f.Schema}}
		}
	}
	if t := in.Thinking; t != nil {
		switch t.Type {
		case "enabled":
			effort = budgetEffort(t.BudgetTokens)
		case "adaptive":
			effort = cmpOr(effort, "medium")
		case "disabled":
			effort = ""
		default:
			return badRequest("thinking.type", "thinking.type: unknown value %q", t.Type)
		}
	}
	if effort != "" {
		if effort == "max" {
			effort = "xhigh"
		}
		out.Reasoning = &responses.Reasoning{Effort: effort, Summary: "auto"}
		out.Include = []string{"reasoning.encrypted_content"}
	}
	return nil
}

// m2rInput converts system and messages into instructions and input
// items. A user message's tool results come first, as function_call_output
// items; thinking blocks whose signature seals a Responses reasoning item
// give that item back.
func m2rInput(in *anthropic.MessagesRequest, out *responses.Request, p *Plan) error {
	var sys []string
	for _, b := range in.System.Blocks {
		if b.Type == "text" && b.Text != "" {
			sys = append(sys, b.Text)
		}
	}
	if len(sys) > 0 {
		instructions := strings.Join(sys, "\n\n")
		out.Instructions = &instructions
	}
	items := out.Input.Items
	for i, m := range in.Messages {
		path := fmt.Sprintf("messages[%d]", i)
		var parts []responses.Part
		flush := func(role string) {
			if len(parts) > 0 {
				items = append(items, responses.Item{Type: "message", Role: role, Content: responses.Content{Parts: parts}})
				parts = nil
			}
		}
		switch m.Role {
		case "user", "system":
			role := m.Role
			if role == "system" {
				role = "developer"
			}
			for j, b := range m.Content.Blocks {
				bpath := fmt.Sprintf("%s.content[%d]", path, j)
				if b.Type == "tool_result" {
					flush(role)
					if err := requiredCallID(bpath+".tool_use_id", b.ToolUseID, "of the tool_use block this result answers"); err != nil {
						return err
					}
					res, err := m2rToolResult(bpath, b, p)
					if err != nil {
						return err
					}
					items = append(items, res)
					continue
				}
				part, err := m2rPart(bpath, b, p)
				if err != nil {
					return err
				}
				if part != nil {
					parts = append(parts, *part)
				}
			}
			flush(role)
		case "assistant":
			for j, b := range m.Content.Blocks {
				switch b.Type {
				case "text":
					if b.Text != "" {
						parts = append(parts, responses.Part{Type: "output_text", Text: b.Text})
					}
				case "thinking", "redacted_thinking":
					flush("assistant")
					if it, ok := p.reasoningItem(b); ok {
						items = append(items, it)
					}
				case "tool_use":
					flush("assistant")
					if err := requiredCallID(fmt.Sprintf("%s.content[%d].id", path, j), b.ID, "that the tool_result answering this call names"); err != nil {
						return err
					}
					args := string(compactInput(b.Input))
					items = append(items, responses.Item{Type: "function_call", CallID: b.ID, Name: p.upstreamToolName(b.Name), Arguments: &args})
				default:
					if err := p.contract(fmt.Sprintf("%s.content[%d]", path, j), fmt.Sprintf("%s blocks cannot be sent to a Responses upstream", b.Type)); err != nil {
						return err
					}
				}
			}
			flush("assistant")
		default:
			return badRequest(path+".role", "%s.role: unknown role %q", path, m.Role)
		}
	}
	if len(items) == 0 {
		return badRequest("messages", "messages: at least one message is required")
	}
	out.Input.Items = items
	return nil
}

// reasoningItem is the Responses reasoning item an Anthropic client's
// thinking block stands for: the one tollgate sealed into its signature
// (or a redacted block's data) when the upstream sent it. Thinking from
// anywhere else (Claude's own, another gateway's) is not the upstream's
// and is left out.
func (p *Plan) reasoningItem(b anthropic.Block) (responses.Item, bool) {
	v := b.Signature
	if b.Type == "redacted_thinking" {
		v = b.Data
	}
	if p.signer == nil || v == "" {
		return responses.Item{}, false
	}
	payload, ok := p.signer.unseal(v)
	if !ok {
		return responses.Item{}, false
	}
	var it responses.Item
	if jsonx.Unmarshal(payload, &it) != nil || it.Type != "reasoning" {
		return responses.Item{}, false
	}
	return it, true
}

// m2rPart converts a user content block into an input part.
func m2rPart(path string, b anthropic.Block, p *Plan) (*responses.Part, error) {
	switch b.Type {
	case "text":
		if b.Text == "" {
			return nil, nil
		}
		return &responses.Part{Type: "input_text", Text: b.Text}, nil
	case "image", "document":
		src := b.Source
		if src == nil {
			return nil, badRequest(path, "%s: %s block without a source", path, b.Type)
		}
		part := responses.Part{Type: "input_image", Detail: "auto"}
		if b.Type == "document" {
			part = responses.Part{Type: "input_file", Filename: cmpOr(b.Title, "document.pdf")}
		}
		switch {
		case src.Type == "base64" && b.Type == "image":
			part.ImageURL = "data:" + src.MediaType + ";base64," + src.Data
		case src.Type == "base64":
			part.FileData = "data:" + src.MediaType + ";base64," + src.Data
		case src.Type == "url" && b.Type == "image":
			part.ImageURL = src.URL
		case src.Type == "url":
			part.FileURL = src.URL
		case src.Type == "text" && b.Type == "document":
			return &responses.Part{Type: "input_text", Text: src.Data}, nil
		default:
			return nil, p.contract(path, fmt.Sprintf("%s sources of type %q cannot be sent to a Responses upstream", b.Type, src.Type))
		}
		return &part, nil
	}
	return nil, p.contract(path, fmt.Sprintf("%s blocks cannot be sent to a Responses upstream", b.Type))
}

// m2rToolResult converts a tool_result block into a function_call_output.
func m2rToolResult(path string, b anthropic.Block, p *Plan) (responses.Item, error) {
	it := responses.Item{Type: "function_call_output", CallID: b.ToolUseID, Output: responses.Content{IsString: true}}
	c := b.Content
	switch {
	case c == nil:
	case c.FromString:
		it.Output.Text = c.Blocks[0].Text
	default:
		var parts []responses.Part
		for j, rb := range c.Blocks {
			part, err := m2rPart(fmt.Sprintf("%s.content[%d]", path, j), rb, p)
			if err != nil {
				return it, err
			}
			if part != nil {
				parts = append(parts, *part)
			}
		}
		if len(parts) == 1 && parts[0].Type == "input_text" {
			it.Output.Text = parts[0].Text
		} else if len(parts) > 0 {
			it.Output = responses.Content{Parts: parts}
		}
	}
	if b.IsError && it.Output.IsString {
		it.Output.Text = "Error: " + it.Output.Text // the Responses API has no error flag
	}
	return it, nil
}

// m2rTools converts tools and tool_choice.
func m2rTools(in *anthropic.MessagesRequest, out *responses.Request, p *Plan) error {
	for i, t := range in.Tools {
		if t.Type != "" && t.Type != "custom" {
			if err := p.advisory(fmt.Sprintf("tools[%d]", i), fmt.Sprintf("tool %q is Anthropic's; a Responses upstream has no definition of it", t.Type)); err != nil {
				return err
			}
			continue
		}
		if err := requiredToolName(fmt.Sprintf("tools[%d].name", i), t.Name); err != nil {
			return err
		}
		out.Tools = append(out.Tools, responses.Tool{Type: "function", Name: p.upstreamToolName(t.Name), Description: t.Description,
			Parameters: inputSchema(t.InputSchema), Strict: t.Strict})
	}
	tc := in.ToolChoice
	if tc == nil {
		return nil
	}
	switch tc.Type {
	case "auto":
		out.ToolChoice = jsontext.Value(`"auto"`)
	case "any":
		out.ToolChoice = jsontext.Value(`"required"`)
	case "none":
		out.ToolChoice = jsontext.Value(`"none"`)
	case "tool":
		if err := requiredToolName("tool_choice.name", tc.Name); err != nil {
			return err
		}
		out.ToolChoice = mustJSON(map[string]string{"type": "function", "name": p.upstreamToolName(tc.Name)})
	default:
		return badRequest("tool_choice.type", "tool_choice.type: unknown value %q", tc.Type)
	}
	if tc.DisableParallelToolUse {
		off := false
		out.ParallelToolCalls = &off
	}
	return nil
}
