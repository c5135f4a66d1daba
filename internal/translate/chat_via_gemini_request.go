package translate

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/gemini"
	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/jsonx"
)

// ChatToGemini translates a Chat Completions request into a Gemini
// generateContent request. It stops with ctx's error when ctx ends.
func ChatToGemini(ctx context.Context, in *openai.ChatRequest, upstreamModel string, caps Caps, policy Policy, signer *Signer) (*gemini.Request, *Plan, error) {
	p := &Plan{AnswerModel: upstreamModel, Stream: in.Stream, Caps: caps, policy: policy, signer: signer}
	p.IncludeUsage = in.StreamOptions != nil && in.StreamOptions.IncludeUsage
	out := &gemini.Request{}
	gc := &gemini.GenerationConfig{}
	if err := c2gTopLevel(in, gc, p); err != nil {
		return nil, nil, err
	}
	if err := c2gMessages(in, out, p); err != nil {
		return nil, nil, err
	}
	if err := c2gTools(ctx, in, out, p); err != nil {
		return nil, nil, err
	}
	if err := c2gResponseFormat(ctx, in, gc, p); err != nil {
		return nil, nil, err
	}
	if !gc.IsZero() {
		out.GenerationConfig = gc
	}
	return out, p, nil
}

func c2gTopLevel(in *openai.ChatRequest, gc *gemini.GenerationConfig, p *Plan) error {
	if in.N != nil && *in.N > 1 {
		if err := p.contract("n", "tollgate cannot produce more than 1 choice with a Gemini upstream"); err != nil {
			return err
		}
	}
	if (in.Logprobs != nil && *in.Logprobs) || in.TopLogprobs != nil {
		if err := p.contract("logprobs", "log probabilities are not translated from Gemini"); err != nil {
			return err
		}
	}
	if slices.Contains(in.Modalities, "audio") || len(in.Audio) > 0 {
		if err := p.contract("modalities", "Gemini's audio output is not translated"); err != nil {
			return err
		}
	}
	for _, b := range []struct {
		param string
		n     *int64
	}{{"max_tokens", in.MaxTokens}, {"max_completion_tokens", in.MaxCompletionTokens}} {
		if err := positiveBound(b.param, b.n); err != nil {
			return err
		}
	}
	if n := cmp.Or(in.MaxCompletionTokens, in.MaxTokens); n != nil {
		gc.MaxOutputTokens = *n
	}
	gc.Temperature, gc.TopP, gc.TopK = in.Temperature, in.TopP, in.TopK
	if len(in.Stop.Values) > maxGeminiStop {
		return badRequest("stop", "stop: Gemini accepts at most %d stop sequences, got %d", maxGeminiStop, len(in.Stop.Values))
	}
	gc.StopSequences = in.Stop.Values
	for _, id := range []struct{ param, v string }{{"user", in.User}, {"safety_identifier", in.SafetyIdentifier}} {
		if id.v != "" {
			if err := p.advisory(id.param, "Gemini has no end-user identifier"); err != nil {
				return err
			}
		}
	}
	if err := c2gReasoning(in.ReasoningEffort, gc, p); err != nil {
		return err
	}
	var extra map[string]jsontext.Value
	if len(in.Extra) > 0 {
		jsonx.Unmarshal(in.Extra, &extra)
	}
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		v := extra[k]
		var f float64
		var n int64
		switch {
		case k == "presence_penalty" && jsonx.Unmarshal(v, &f) == nil:
			gc.PresencePenalty = &f
		case k == "frequency_penalty" && jsonx.Unmarshal(v, &f) == nil:
			gc.FrequencyPenalty = &f
		case k == "seed" && jsonx.Unmarshal(v, &n) == nil:
			gc.Seed = &n
		default:
			why := "unknown parameter, not translated"
			if advisoryChatParams[k] {
				why = "Gemini has no such parameter"
			}
			if err := p.advisory(k, why); err != nil {
				return err
			}
		}
	}
	for _, x := range []struct {
		param   string
		present bool
	}{{"thinking", len(in.Thinking) > 0}, {"reasoning", len(in.Reasoning) > 0}, {"enable_thinking", in.EnableThinking != nil}} {
		if x.present {
			if err := p.advisory(x.param, "Gemini's thinking is asked for with reasoning_effort"); err != nil {
				return err
			}
		}
	}
	return nil
}

// c2gReasoning maps reasoning_effort to a thinking level (none: no
// thinking budget); the thoughts come back as reasoning_content.
func c2gReasoning(effort string, gc *gemini.GenerationConfig, p *Plan) error {
	tc := &gemini.ThinkingConfig{IncludeThoughts: true}
	switch effort {
	case "":
		return nil
	case "none":
		zero := int64(0)
		tc = &gemini.ThinkingConfig{ThinkingBudget: &zero}
	case "minimal", "low":
		tc.ThinkingLevel = "low"
	case "medium":
		tc.ThinkingLevel = "medium"
	case "high", "xhigh":
		tc.ThinkingLevel = "high"
	default:
		return badRequest("reasoning_effort", "reasoning_effort: unknown value %q", effort)
	}
	if effort == "minimal" || effort == "xhigh" {
		p.adjust("reasoning_effort")
	}
	gc.ThinkingConfig = tc
	return nil
}

func c2gMessages(in *openai.ChatRequest, out *gemini.Request, p *Plan) error {
	var sys []gemini.Part
	callNames := map[string]string{}
	for _, m := range in.Messages {
		for _, tc := range m.ToolCalls {
			base, _ := p.splitCallID(tc.ID)
			callNames[base] = tc.Function.Name
		}
	}
	add := func(role string, parts []gemini.Part) {
		if len(parts) == 0 {
			return
		}
		if n := len(out.Contents); n > 0 && out.Contents[n-1].Role == role {
			out.Contents[n-1].Parts = append(out.Contents[n-1].Parts, parts...)
			return
		}
		out.Contents = append(out.Contents, gemini.Content{Role: role, Parts: parts})
	}
	fnCalls := 0 // legacy function_call: their responses answer the last one by name
	for i, m := range in.Messages {
		mp := pathAt("", "messages", i)
		switch m.Role {
		case "system", "developer":
			for _, part := range textParts(m.Content) {
				if part.Text != "" {
					sys = append(sys, gemini.Part{Text: part.Text})
				}
			}
		case "user":
			parts, err := c2gUserParts(m.Content, mp, p)
			if err != nil {
				return err
			}
			add(gemini.RoleUser, parts)
		case "assistant":
			parts, err := c2gModelParts(m, mp, &fnCalls, p)
			if err != nil {
				return err
			}
			add(gemini.RoleModel, parts)
		case "tool", "function":
			id, name := "", m.Name
			if m.Role == "tool" {
				if err := requiredCallID(mp+".tool_call_id", m.ToolCallID, "of the assistant tool call this message answers"); err != nil {
					return err
				}
				id, _ = p.splitCallID(m.ToolCallID)
				var ok bool
				if name, ok = callNames[id]; !ok {
					return badRequest(mp+".tool_call_id", "%s.tool_call_id: %q answers no tool call in the conversation", mp, m.ToolCallID)
				}
			}
			var text []string
			for _, part := range textParts(m.Content) {
				text = append(text, part.Text)
			}
			resp := append(append([]byte(`{"result":`), jsonx.AppendQuote(nil, strings.Join(text, "\n\n"))...), '}')
			add(gemini.RoleUser, []gemini.Part{{FunctionResponse: &gemini.FunctionResponse{ID: id, Name: p.geminiToolName(name), Response: resp}}})
		default:
			return badRequest(mp+".role", "%s.role: unknown role %q", mp, m.Role)
		}
	}
	if len(sys) > 0 {
		out.SystemInstruction = &gemini.Content{Parts: sys}
	}
	if len(out.Contents) == 0 {
		return badRequest("messages", "messages: at least one user message with content is required")
	}
	return nil
}

func c2gUserParts(c openai.MessageContent, mp string, p *Plan) ([]gemini.Part, error) {
	if c.IsString {
		if c.Text == "" {
			return nil, nil
		}
		return []gemini.Part{{Text: c.Text}}, nil
	}
	var out []gemini.Part
	for j, part := range c.Parts {
		pp := pathAt(mp, "content", j)
		switch part.Type {
		case "text":
			if part.Text != "" {
				out = append(out, gemini.Part{Text: part.Text})
			}
		case "image_url":
			if part.ImageURL == nil {
				return nil, badRequest(pp, "%s: image_url part without an image_url", pp)
			}
			g, err := geminiDataPart(part.ImageURL.URL, pp+".image_url.url")
			if err != nil {
				return nil, err
			}
			out = append(out, g)
		case "file":
			if part.File == nil || part.File.FileData == "" {
				return nil, p.contract(pp, "only inline file_data can be sent to Gemini (file_id refers to OpenAI's file store)")
			}
			g, err := geminiDataPart(part.File.FileData, pp+".file.file_data")
			if err != nil {
				return nil, err
			}
			out = append(out, g)
		case "input_audio":
			var a struct {
				Data   string `json:"data"`
				Format string `json:"format"`
			}
			if jsonx.Unmarshal(part.InputAudio, &a) != nil || a.Data == "" || a.Format == "" {
				return nil, badRequest(pp+".input_audio", "%s.input_audio: want {\"data\": base64, \"format\": \"wav\" or \"mp3\"}", pp)
			}
			out = append(out, gemini.Part{InlineData: &gemini.Blob{MimeType: "audio/" + a.Format, Data: a.Data}})
		default:
			if err := p.contract(pp, fmt.Sprintf("content parts of type %q cannot be sent to Gemini", part.Type)); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// c2gModelParts converts an assistant message; each tool call gives back
// the signature its id carries, and a message of calls none of which
// carries one (made by another model) is marked to skip Gemini's check.
func c2gModelParts(m openai.ChatMessage, mp string, fnCalls *int, p *Plan) ([]gemini.Part, error) {
	var parts []gemini.Part
	for _, part := range textParts(m.Content) {
		if part.Text != "" {
			parts = append(parts, gemini.Part{Text: part.Text})
		}
	}
	firstCall, signed := -1, false
	call := func(id, name, args, where string) error {
		input, err := toolInput(args, where)
		if err != nil {
			return err
		}
		base, sig := p.splitCallID(id)
		if firstCall < 0 {
			firstCall = len(parts)
		}
		signed = signed || sig != ""
		parts = append(parts, gemini.Part{FunctionCall: &gemini.FunctionCall{ID: base, Name: p.geminiToolName(name), Args: input}, ThoughtSignature: sig})
		return nil
	}
	for j, tc := range m.ToolCalls {
		tp := pathAt(mp, "tool_calls", j)
		if err := requiredCallID(tp+".id", tc.ID, "that the tool message answering this call names"); err != nil {
			return nil, err
		}
		if err := requiredToolName(tp+".function.name", tc.Function.Name); err != nil {
			return nil, err
		}
		if err := call(tc.ID, tc.Function.Name, tc.Function.Arguments, tp); err != nil {
			return nil, err
		}
	}
	if fc := m.FunctionCall; fc != nil {
		*fnCalls++
		if err := call("", fc.Name, fc.Arguments, mp+".function_call"); err != nil {
			return nil, err
		}
	}
	if firstCall >= 0 && !signed {
		parts[firstCall].ThoughtSignature = gemini.SkipThoughtSignature
	}
	return parts, nil
}

// c2gTools converts tools, tool_choice and parallel_tool_calls.
func c2gTools(ctx context.Context, in *openai.ChatRequest, out *gemini.Request, p *Plan) error {
	defs, err := chatFunctionTools(in, p, "used with Gemini")
	if err != nil {
		return err
	}
	// tool_choice is read as the Anthropic translator reads it, on the
	// same names: one mapping to Gemini's functionCallingConfig.
	names := &anthropic.MessagesRequest{}
	for _, t := range defs {
		names.Tools = append(names.Tools, anthropic.Tool{Name: t.Function.Name})
	}
	choice := in.ToolChoice
	if len(choice) == 0 {
		choice = in.FunctionCall
	}
	var tc *anthropic.ToolChoice
	if len(choice) > 0 {
		if tc, err = c2mToolChoice(choice, names); err != nil {
			return err
		}
	}
	kept := map[string]bool{}
	for _, t := range names.Tools {
		kept[t.Name] = true
	}
	var decls []gemini.FunctionDeclaration
	for i, t := range defs {
		if !kept[t.Function.Name] {
			continue // left out by allowed_tools
		}
		if t.Function.Strict != nil && *t.Function.Strict {
			p.drop("strict")
		}
		d := gemini.FunctionDeclaration{Name: p.geminiToolName(t.Function.Name), Description: t.Function.Description}
		if params := t.Function.Parameters; len(params) > 0 && string(params) != "null" && !emptyObjectSchema(params) {
			tp, _ := chatToolPath(in, i)
			schema, err := geminiSchema(ctx, params, tp+".function.parameters", "tools.function.parameters", p)
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
	if in.ParallelToolCalls != nil && !*in.ParallelToolCalls && len(decls) > 0 {
		if err := p.advisory("parallel_tool_calls", "Gemini cannot be asked for one call at a time"); err != nil {
			return err
		}
	}
	if tc == nil || len(decls) == 0 && tc.Type != "none" {
		return nil
	}
	out.ToolConfig = p.geminiToolConfig(map[string]string{"auto": "AUTO", "any": "ANY", "none": "NONE", "tool": "ANY"}[tc.Type], tc.Name)
	return nil
}

// c2gResponseFormat maps response_format to a JSON response (with its
// schema converted).
func c2gResponseFormat(ctx context.Context, in *openai.ChatRequest, gc *gemini.GenerationConfig, p *Plan) error {
	if len(in.ResponseFormat) == 0 {
		return nil
	}
	var rf struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Schema jsontext.Value `json:"schema"`
		} `json:"json_schema"`
	}
	if err := jsonx.Unmarshal(in.ResponseFormat, &rf); err != nil {
		return explained("response_format", err)
	}
	switch rf.Type {
	case "text", "":
		return nil
	case "json_object":
		gc.ResponseMimeType = "application/json"
	case "json_schema":
		gc.ResponseMimeType = "application/json"
		if len(rf.JSONSchema.Schema) > 0 {
			schema, err := geminiSchema(ctx, rf.JSONSchema.Schema, "response_format.json_schema.schema", "response_format.json_schema.schema", p)
			if err != nil {
				return err
			}
			gc.ResponseSchema = schema
		}
	default:
		return badRequest("response_format.type", "response_format.type: unknown value %q", rf.Type)
	}
	return nil
}

// ChatBodyToGemini translates a Chat Completions request body into a
// Gemini generateContent body. A body that cannot be translated is a
// *RequestError; when ctx ends first, the translation stops with ctx's
// error.
func ChatBodyToGemini(ctx context.Context, body []byte, t Target) ([]byte, *Plan, error) {
	return bodyToBody(body, t, withContext(ctx, ChatToGemini))
}
