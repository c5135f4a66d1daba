package translate

import (
	"context"
	"fmt"
	"mime"
	"path"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/gemini"
	"github.com/tollgate/tollgate/internal/jsonx"
)

// MessagesToGemini translates an Anthropic Messages request into a Gemini
// generateContent request (the model and the stream are in the URL). The
// Plan carries what the answer side needs. It stops with ctx's error when
// ctx ends.
func MessagesToGemini(ctx context.Context, in *anthropic.MessagesRequest, upstreamModel string, caps Caps, policy Policy, signer *Signer) (*gemini.Request, *Plan, error) {
	p := &Plan{AnswerModel: upstreamModel, Stream: in.Stream, Caps: caps, policy: policy, signer: signer}
	out := &gemini.Request{}
	gc := &gemini.GenerationConfig{}
	if err := m2gTopLevel(ctx, in, gc, p); err != nil {
		return nil, nil, err
	}
	if err := m2gMessages(in, out, p); err != nil {
		return nil, nil, err
	}
	if err := m2gTools(ctx, in, out, p); err != nil {
		return nil, nil, err
	}
	if err := m2gThinking(in, gc, p); err != nil {
		return nil, nil, err
	}
	out.GenerationConfig = gc
	return out, p, nil
}

func m2gTopLevel(ctx context.Context, in *anthropic.MessagesRequest, gc *gemini.GenerationConfig, p *Plan) error {
	if err := positiveBound("max_tokens", &in.MaxTokens); err != nil {
		return err
	}
	gc.MaxOutputTokens = in.MaxTokens // both count thoughts inside the output limit
	if n := len(in.StopSequences); n > maxGeminiStop {
		return badRequest("stop_sequences", "stop_sequences: Gemini accepts at most %d stop sequences, got %d", maxGeminiStop, n)
	}
	gc.StopSequences = in.StopSequences
	gc.Temperature, gc.TopP, gc.TopK = in.Temperature, in.TopP, in.TopK
	if in.Metadata != nil && in.Metadata.UserID != "" {
		if err := p.advisory("metadata.user_id", "Gemini has no end-user identifier"); err != nil {
			return err
		}
	}
	for _, c := range []struct {
		param, why string
		present    bool
	}{
		{"mcp_servers", "MCP servers run on Anthropic's side and cannot be used with Gemini", !emptyJSON(in.MCPServers)},
		{"container", "code-execution containers run on Anthropic's side and cannot be used with Gemini", !emptyJSON(in.Container)},
	} {
		if c.present {
			if err := p.contract(c.param, c.why); err != nil {
				return err
			}
		}
	}
	if err := anthropicAccountMembers(in, p, "Gemini"); err != nil {
		return err
	}
	if format := outputFormat(in); len(format) > 0 {
		if err := m2gResponseFormat(ctx, format, gc, p); err != nil {
			return err
		}
	}
	return unknownMembers(in.Extra, "", p)
}

// m2gResponseFormat asks Gemini for JSON that follows the schema.
func m2gResponseFormat(ctx context.Context, format jsontext.Value, gc *gemini.GenerationConfig, p *Plan) error {
	var f struct {
		Type   string         `json:"type"`
		Schema jsontext.Value `json:"schema"`
	}
	if err := jsonx.Unmarshal(format, &f); err != nil || f.Type != "json_schema" || len(f.Schema) == 0 {
		return badRequest("output_config.format", "output_config.format: want {\"type\": \"json_schema\", \"schema\": {…}}")
	}
	schema, err := geminiSchema(ctx, f.Schema, "output_config.format.schema", "output_config.format.schema", p)
	if err != nil {
		return err
	}
	gc.ResponseMimeType, gc.ResponseSchema = "application/json", schema
	return nil
}

// m2gMessages converts system and messages. System messages inside the
// conversation (Claude Code sends them) join systemInstruction, in order:
// Gemini has instructions for the whole conversation only.
func m2gMessages(in *anthropic.MessagesRequest, out *gemini.Request, p *Plan) error {
	var sys []gemini.Part
	addSystem := func(blocks []anthropic.Block, where string) error {
		for _, b := range blocks {
			if len(b.CacheControl) > 0 {
				if err := p.advisory("cache_control", "Gemini has no prompt-cache breakpoints"); err != nil {
					return err
				}
			}
			if b.Type != "text" {
				return badRequest(where, "%s: system content must be text, got a %s block", where, b.Type)
			}
			if b.Text != "" {
				sys = append(sys, gemini.Part{Text: b.Text})
			}
		}
		return nil
	}
	if err := addSystem(in.System.Blocks, "system"); err != nil {
		return err
	}
	first, firstBlock, err := compactedFrom(in.Messages)
	if err != nil {
		return err
	}
	// Function responses name their function; the calls are found by id.
	callNames := map[string]string{}
	for _, m := range in.Messages {
		if m.Role == "assistant" {
			for _, b := range m.Content.Blocks {
				if b.Type == "tool_use" {
					callNames[b.ID] = b.Name
				}
			}
		}
	}
	for i, m := range in.Messages {
		if i < first {
			continue
		}
		blocks := m.Content.Blocks
		if i == first {
			blocks = blocks[firstBlock:]
		}
		if err := messageMembers(i, m, p); err != nil {
			return err
		}
		where := pathAt("", "messages", i)
		var c gemini.Content
		switch m.Role {
		case "system":
			if err := addSystem(blocks, where+".content"); err != nil {
				return err
			}
			continue
		case "user":
			c.Role = gemini.RoleUser
			c.Parts, err = m2gUserParts(blocks, where, callNames, p)
		case "assistant":
			c.Role = gemini.RoleModel
			c.Parts, err = m2gModelParts(blocks, where, p)
		default:
			err = badRequest(where+".role", "%s.role: must be user, assistant or system, got %q", where, m.Role)
		}
		if err != nil {
			return err
		}
		if len(c.Parts) == 0 {
			continue // nothing Gemini can read (only thinking it cannot use)
		}
		if n := len(out.Contents); n > 0 && out.Contents[n-1].Role == c.Role {
			out.Contents[n-1].Parts = append(out.Contents[n-1].Parts, c.Parts...) // turns alternate
			continue
		}
		out.Contents = append(out.Contents, c)
	}
	if len(sys) > 0 {
		out.SystemInstruction = &gemini.Content{Parts: sys}
	}
	if len(out.Contents) == 0 {
		return badRequest("messages", "messages: at least one message with content is required")
	}
	return nil
}

func m2gUserParts(blocks []anthropic.Block, where string, callNames map[string]string, p *Plan) ([]gemini.Part, error) {
	var parts, after []gemini.Part // after: images of tool results, which follow the responses
	for j, b := range blocks {
		bp := pathAt(where, "content", j)
		if len(b.CacheControl) > 0 {
			if err := p.advisory("cache_control", "Gemini has no prompt-cache breakpoints"); err != nil {
				return nil, err
			}
		}
		if b.Type != "tool_result" {
			ps, err := m2gContentParts(b, bp, p)
			if err != nil {
				return nil, err
			}
			parts = append(parts, ps...)
			continue
		}
		if b.ToolUseID == "" {
			return nil, badRequest(bp+".tool_use_id", "%s.tool_use_id: required", bp)
		}
		name, ok := callNames[b.ToolUseID]
		if !ok {
			return nil, badRequest(bp+".tool_use_id", "%s.tool_use_id: %q answers no tool_use in the conversation", bp, b.ToolUseID)
		}
		var text []string
		if b.Content != nil {
			for k, cb := range b.Content.Blocks {
				switch cb.Type {
				case "text":
					text = append(text, cb.Text)
				default:
					ps, err := m2gContentParts(cb, pathAt(bp, "content", k), p)
					if err != nil {
						return nil, err
					}
					after = append(after, ps...)
				}
			}
		}
		key := "result"
		if b.IsError {
			key = "error"
		}
		resp := append(append([]byte(`{"`+key+`":`), jsonx.AppendQuote(nil, strings.Join(text, "\n\n"))...), '}')
		parts = append(parts, gemini.Part{FunctionResponse: &gemini.FunctionResponse{ID: b.ToolUseID, Name: p.geminiToolName(name), Response: resp}})
	}
	return append(parts, after...), nil
}

// m2gContentParts converts a block of user content: text, images,
// documents, search results.
func m2gContentParts(b anthropic.Block, bp string, p *Plan) ([]gemini.Part, error) {
	switch b.Type {
	case "text":
		if b.Text == "" {
			return nil, nil
		}
		return []gemini.Part{{Text: b.Text}}, nil
	case "image", "document":
		s := b.Source
		if s == nil {
			return nil, badRequest(bp+".source", "%s.source: required", bp)
		}
		switch s.Type {
		case "base64":
			mt := s.MediaType
			if mt == "" && b.Type == "document" {
				mt = "application/pdf"
			}
			return []gemini.Part{{InlineData: &gemini.Blob{MimeType: mt, Data: s.Data}}}, nil
		case "url":
			mt := s.MediaType
			if mt == "" {
				mt = mime.TypeByExtension(path.Ext(strings.SplitN(s.URL, "?", 2)[0]))
			}
			return []gemini.Part{{FileData: &gemini.FileData{MimeType: mt, FileURI: s.URL}}}, nil
		case "text":
			return []gemini.Part{{Text: s.Data}}, nil
		case "content":
			var out []gemini.Part
			if s.Content != nil {
				for k, cb := range s.Content.Blocks {
					ps, err := m2gContentParts(cb, fmt.Sprintf("%s.source.content[%d]", bp, k), p)
					if err != nil {
						return nil, err
					}
					out = append(out, ps...)
				}
			}
			return out, nil
		}
		return nil, badRequest(bp+".source.type", "%s.source.type: a %s source cannot be sent to Gemini (send it base64 or by URL)", bp, s.Type)
	case "search_result":
		return []gemini.Part{{Text: searchResultText(b)}}, nil
	}
	return nil, badRequest(bp+".type", "%s: a %s block cannot be sent to Gemini", bp, b.Type)
}

// m2gModelParts converts an assistant turn. A thinking block whose
// signature carries a Gemini thought signature gives it to the part that
// follows (where Gemini put it); other thinking cannot be used by Gemini
// and is left out. A turn of function calls none of which has a
// signature (made with another model) is marked to skip Gemini's check.
func m2gModelParts(blocks []anthropic.Block, where string, p *Plan) ([]gemini.Part, error) {
	var parts []gemini.Part
	pending := ""
	firstCall, signedCall := -1, false
	for j, b := range blocks {
		bp := pathAt(where, "content", j)
		switch b.Type {
		case "thinking":
			if sig, ok := p.signer.unsealGemini(b.Signature); ok {
				pending = sig
			}
		case "redacted_thinking":
		case "text":
			if b.Text == "" && pending == "" {
				continue
			}
			parts = append(parts, gemini.Part{Text: b.Text, ThoughtSignature: pending})
			pending = ""
		case "tool_use":
			if b.Name == "" {
				return nil, badRequest(bp+".name", "%s.name: required", bp)
			}
			args := b.Input
			if len(args) == 0 {
				args = jsontext.Value("{}")
			}
			if firstCall < 0 {
				firstCall = len(parts)
			}
			signedCall = signedCall || pending != ""
			parts = append(parts, gemini.Part{FunctionCall: &gemini.FunctionCall{ID: b.ID, Name: p.geminiToolName(b.Name), Args: args},
				ThoughtSignature: pending})
			pending = ""
		default:
			return nil, badRequest(bp+".type", "%s: a %s block cannot be sent to Gemini", bp, b.Type)
		}
	}
	if firstCall >= 0 && !signedCall {
		parts[firstCall].ThoughtSignature = gemini.SkipThoughtSignature
	}
	return parts, nil
}

func m2gTools(ctx context.Context, in *anthropic.MessagesRequest, out *gemini.Request, p *Plan) error {
	var decls []gemini.FunctionDeclaration
	var unsent []string
	for i, t := range in.Tools {
		tp := pathAt("", "tools", i)
		if t.Type != "" && t.Type != "custom" {
			unsent = append(unsent, t.Name)
			if err := p.advisory(tp, fmt.Sprintf("the %s server tool runs on Anthropic's side and cannot be used with Gemini", t.Type)); err != nil {
				return err
			}
			continue
		}
		if err := requiredToolName(tp+".name", t.Name); err != nil {
			return err
		}
		for _, h := range []struct {
			param, why string
			present    bool
		}{
			{"cache_control", "Gemini has no prompt-cache breakpoints", len(t.CacheControl) > 0},
			{"defer_loading", "Gemini gets every tool from the start", t.DeferLoading},
			{"input_examples", "Gemini has no tool input examples", !emptyJSON(t.InputExamples)},
			{"strict", "Gemini has no strict tool schemas", t.Strict != nil && *t.Strict},
		} {
			if h.present {
				if err := p.advisory(h.param, h.why); err != nil {
					return err
				}
			}
		}
		d := gemini.FunctionDeclaration{Name: p.geminiToolName(t.Name), Description: t.Description}
		if len(t.InputSchema) > 0 && !emptyObjectSchema(t.InputSchema) {
			schema, err := geminiSchema(ctx, t.InputSchema, tp+".input_schema", "tools.input_schema", p)
			if err != nil {
				return err
			}
			d.Parameters = schema
		}
		decls = append(decls, d)
	}
	if len(decls) > 0 {
		out.Tools = []gemini.Tool{{FunctionDeclarations: decls}}
	}
	tc := in.ToolChoice
	if tc == nil || len(decls) == 0 && tc.Type != "none" {
		return nil
	}
	fc := &gemini.FunctionCallingConfig{}
	switch tc.Type {
	case "auto", "":
		fc.Mode = "AUTO"
	case "any":
		fc.Mode = "ANY"
	case "none":
		fc.Mode = "NONE"
	case "tool":
		if err := requiredToolName("tool_choice.name", tc.Name); err != nil {
			return err
		}
		for _, u := range unsent {
			if u == tc.Name {
				return p.contract("tool_choice", fmt.Sprintf("forced tool %q cannot be used with Gemini", tc.Name))
			}
		}
		fc.Mode, fc.AllowedFunctionNames = "ANY", []string{p.geminiToolName(tc.Name)}
	default:
		return badRequest("tool_choice.type", "tool_choice.type: unknown value %q", tc.Type)
	}
	if tc.DisableParallelToolUse {
		if err := p.advisory("tool_choice.disable_parallel_tool_use", "Gemini cannot be asked for one call at a time"); err != nil {
			return err
		}
	}
	out.ToolConfig = &gemini.ToolConfig{FunctionCallingConfig: fc}
	return nil
}

// emptyObjectSchema reports a schema of an object with no properties:
// Gemini takes a function without parameters, not an empty object.
func emptyObjectSchema(s jsontext.Value) bool {
	var v struct {
		Type       string         `json:"type"`
		Properties map[string]any `json:"properties"`
	}
	if jsonx.Unmarshal(s, &v) != nil {
		return false
	}
	var all map[string]jsontext.Value
	jsonx.Unmarshal(s, &all)
	for k := range all {
		if k != "type" && k != "properties" && k != "$schema" && k != "additionalProperties" {
			return false
		}
	}
	return v.Type == "object" && len(v.Properties) == 0
}

// m2gThinking maps thinking and effort to Gemini's thinkingConfig: a
// budget for enabled thinking, the model's own choice for adaptive, a
// level for effort; thoughts come back when thinking was asked for.
func m2gThinking(in *anthropic.MessagesRequest, gc *gemini.GenerationConfig, p *Plan) error {
	tc := &gemini.ThinkingConfig{}
	if t := in.Thinking; t != nil {
		if err := unknownMembers(t.Extra, "thinking.", p); err != nil {
			return err
		}
		switch t.Type {
		case "enabled":
			if t.BudgetTokens <= 0 {
				return badRequest("thinking.budget_tokens", "thinking.budget_tokens: must be positive")
			}
			b := t.BudgetTokens
			tc.ThinkingBudget, tc.IncludeThoughts = &b, true
		case "adaptive":
			dynamic := int64(-1)
			tc.ThinkingBudget, tc.IncludeThoughts = &dynamic, true
		case "disabled":
		default:
			return badRequest("thinking.type", "thinking.type: unknown value %q", t.Type)
		}
	}
	if in.OutputConfig != nil && in.OutputConfig.Effort != "" {
		switch e := in.OutputConfig.Effort; e {
		case "low", "medium", "high":
			tc.ThinkingLevel = e
		case "max", "xhigh":
			tc.ThinkingLevel = "high"
			p.adjust("output_config.effort")
		default:
			return badRequest("output_config.effort", "output_config.effort: unknown value %q", e)
		}
		if tc.ThinkingBudget != nil {
			// Gemini takes a budget or a level, not both: the budget the
			// client gave wins.
			tc.ThinkingLevel = ""
			if err := p.advisory("output_config.effort", "Gemini takes a thinking budget or a level, not both"); err != nil {
				return err
			}
		}
	}
	if *tc != (gemini.ThinkingConfig{}) {
		gc.ThinkingConfig = tc
	}
	return nil
}

// MessagesBodyToGemini translates a Messages request body into a Gemini
// generateContent body. A body that cannot be translated is a *RequestError;
// when ctx ends first, the translation stops with ctx's error.
func MessagesBodyToGemini(ctx context.Context, body []byte, t Target) ([]byte, *Plan, error) {
	return bodyToBody(body, t, withContext(ctx, MessagesToGemini))
}
