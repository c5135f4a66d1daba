package translate

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/responses"
	"github.com/tollgate/tollgate/internal/jsonx"
)

// MessagesBodyToResponses translates a Messages request body into a
// Responses body. A body that cannot be translated is a *RequestError.
func MessagesBodyToResponses(_ context.Context, body []byte, t Target) ([]byte, *Plan, error) {
	return bodyToBody(body, t, MessagesRequestToResponses)
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
		path := pathAt("", "messages", i)
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
				bpath := pathAt(path, "content", j)
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
					if err := p.contract(pathAt(path, "content", j), fmt.Sprintf("%s blocks cannot be sent to a Responses upstream", b.Type)); err != nil {
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
			part, err := m2rPart(pathAt(path, "content", j), rb, p)
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
			if err := p.advisory(pathAt("", "tools", i), fmt.Sprintf("tool %q is Anthropic's; a Responses upstream has no definition of it", t.Type)); err != nil {
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
