package translate

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/api/responses"
	"github.com/tollgate/tollgate/internal/jsonx"
)

// ChatBodyToResponses translates a Chat Completions request body into a
// Responses body. A body that cannot be translated is a *RequestError.
func ChatBodyToResponses(_ context.Context, body []byte, t Target) ([]byte, *Plan, error) {
	return bodyToBody(body, t, ChatRequestToResponses)
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
		path := pathAt("", "messages", i)
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
				tpath := pathAt(path, "tool_calls", j)
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
		ppath := pathAt(path, "content", j)
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
