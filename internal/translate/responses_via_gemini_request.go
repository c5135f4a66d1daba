package translate

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/api/gemini"
	"github.com/tollgate/tollgate/internal/api/responses"
	"github.com/tollgate/tollgate/internal/jsonx"
)

// A Responses client carries Gemini's thought signatures in reasoning
// items: a signature comes back sealed in the encrypted_content of a
// reasoning item just before the call it belongs to (geminiReasoning).

// ResponsesToGemini translates a Responses request into a Gemini
// generateContent request. It stops with ctx's error when ctx ends.
func ResponsesToGemini(ctx context.Context, in *responses.Request, upstreamModel string, caps Caps, policy Policy, signer *Signer) (*gemini.Request, *Plan, error) {
	p := &Plan{AnswerModel: upstreamModel, Stream: in.Stream, Caps: caps, policy: policy, signer: signer, rp: &responsesPlan{req: in}}
	if err := responsesState(in); err != nil {
		return nil, nil, err
	}
	out := &gemini.Request{}
	gc := &gemini.GenerationConfig{}
	if err := positiveBound("max_output_tokens", in.MaxOutputTokens); err != nil {
		return nil, nil, err
	}
	if n := in.MaxOutputTokens; n != nil {
		gc.MaxOutputTokens = *n
	}
	gc.Temperature, gc.TopP = in.Temperature, in.TopP
	for _, id := range []struct{ param, v string }{{"user", in.User}, {"safety_identifier", in.SafetyIdentifier}} {
		if id.v != "" {
			if err := p.advisory(id.param, "Gemini has no end-user identifier"); err != nil {
				return nil, nil, err
			}
		}
	}
	if err := r2gInput(in, out, p); err != nil {
		return nil, nil, err
	}
	if err := r2gTools(ctx, in, out, p); err != nil {
		return nil, nil, err
	}
	if err := r2gText(ctx, in.Text, gc, p); err != nil {
		return nil, nil, err
	}
	if r := in.Reasoning; r != nil && r.Effort != "" {
		if err := c2gReasoning(r.Effort, gc, p); err != nil {
			return nil, nil, err
		}
	}
	if err := responsesAdvisoryMembers(in, p, "prompt_cache_key"); err != nil { // it routes the conversation
		return nil, nil, err
	}
	if !gc.IsZero() {
		out.GenerationConfig = gc
	}
	return out, p, nil
}

// r2gInput converts instructions and input items into the system
// instruction and contents.
func r2gInput(in *responses.Request, out *gemini.Request, p *Plan) error {
	var sys []gemini.Part
	if in.Instructions != nil && *in.Instructions != "" {
		sys = append(sys, gemini.Part{Text: *in.Instructions})
	}
	add := func(role string, parts ...gemini.Part) {
		if len(parts) == 0 {
			return
		}
		if n := len(out.Contents); n > 0 && out.Contents[n-1].Role == role {
			out.Contents[n-1].Parts = append(out.Contents[n-1].Parts, parts...)
			return
		}
		out.Contents = append(out.Contents, gemini.Content{Role: role, Parts: parts})
	}
	if in.Input.IsString && in.Input.Text != "" {
		add(gemini.RoleUser, gemini.Part{Text: in.Input.Text})
	}
	callNames := map[string]string{}
	for _, it := range in.Input.Items {
		if it.Type == "function_call" || it.Type == "custom_tool_call" {
			callNames[it.CallID] = p.responsesToolName(rTool{namespace: it.Namespace, name: it.Name, custom: it.Type == "custom_tool_call"})
		}
	}
	pending := "" // a thought signature for the next model part
	turnCalls := -1
	signedTurn := false
	// A model turn of calls none of which carries a signature is marked
	// to skip Gemini's check, as the other pairs do.
	endTurn := func() {
		n := len(out.Contents)
		if turnCalls >= 0 && !signedTurn && n > 0 && out.Contents[n-1].Role == gemini.RoleModel {
			out.Contents[n-1].Parts[turnCalls].ThoughtSignature = gemini.SkipThoughtSignature
		}
		turnCalls, signedTurn = -1, false
	}
	for i, it := range in.Input.Items {
		path := pathAt("", "input", i)
		switch {
		case it.IsMessage():
			switch it.Role {
			case "system", "developer":
				blocks, err := r2mTextBlocks(path, it.Content, p)
				if err != nil {
					return err
				}
				for _, b := range blocks {
					sys = append(sys, gemini.Part{Text: b.Text})
				}
			case "assistant":
				blocks, err := r2mTextBlocks(path, it.Content, p)
				if err != nil {
					return err
				}
				for _, b := range blocks {
					add(gemini.RoleModel, gemini.Part{Text: b.Text, ThoughtSignature: pending})
					pending = ""
				}
			case "user":
				endTurn()
				parts, err := r2gUserParts(path, it.Content, p)
				if err != nil {
					return err
				}
				add(gemini.RoleUser, parts...)
			default:
				return badRequest(path+".role", "%s.role: must be user, assistant, system or developer, got %q", path, it.Role)
			}
		case it.Type == "reasoning":
			if it.EncryptedContent != nil {
				if sig, ok := p.signer.unsealGemini(*it.EncryptedContent); ok {
					pending = sig
				}
			}
		case it.Type == "function_call", it.Type == "custom_tool_call":
			if err := requiredCallID(path+".call_id", it.CallID, "that the output answering this call names"); err != nil {
				return err
			}
			args := jsontext.Value(`{}`)
			switch {
			case it.Type == "custom_tool_call" && it.Input != nil:
				args = mustJSON(map[string]string{"input": *it.Input})
			case it.Arguments != nil:
				var err error
				if args, err = toolInput(*it.Arguments, path+".arguments"); err != nil {
					return err
				}
			}
			if n := len(out.Contents); n == 0 || out.Contents[n-1].Role != gemini.RoleModel {
				endTurn()
				turnCalls = 0
			} else if turnCalls < 0 {
				turnCalls = len(out.Contents[n-1].Parts)
			}
			signedTurn = signedTurn || pending != ""
			add(gemini.RoleModel, gemini.Part{FunctionCall: &gemini.FunctionCall{ID: it.CallID, Name: p.geminiToolName(callNames[it.CallID]), Args: args},
				ThoughtSignature: pending})
			pending = ""
		case it.Type == "function_call_output", it.Type == "custom_tool_call_output":
			endTurn()
			res, err := r2mToolResult(path, it, p)
			if err != nil {
				return err
			}
			name, ok := callNames[it.CallID]
			if !ok {
				return badRequest(path+".call_id", "%s.call_id: %q answers no call in the input", path, it.CallID)
			}
			var text []string
			var after []gemini.Part
			if res.Content != nil {
				for k, b := range res.Content.Blocks {
					if b.Type == "text" {
						text = append(text, b.Text)
						continue
					}
					ps, err := m2gContentParts(b, pathAt(path, "output", k), p)
					if err != nil {
						return err
					}
					after = append(after, ps...)
				}
			}
			resp := append(append([]byte(`{"result":`), jsonx.AppendQuote(nil, strings.Join(text, "\n\n"))...), '}')
			add(gemini.RoleUser, append([]gemini.Part{{FunctionResponse: &gemini.FunctionResponse{ID: it.CallID, Name: p.geminiToolName(name), Response: resp}}}, after...)...)
		default:
			if err := responsesOtherItem(path, it, p); err != nil {
				return err
			}
		}
	}
	endTurn()
	if len(sys) > 0 {
		out.SystemInstruction = &gemini.Content{Parts: sys}
	}
	if len(out.Contents) == 0 {
		return badRequest("input", "input: at least one message with content is required")
	}
	return nil
}

// r2gUserParts converts a user message's content, part by part as the
// Anthropic pair converts the same content.
func r2gUserParts(path string, c responses.Content, p *Plan) ([]gemini.Part, error) {
	if c.IsString {
		if c.Text == "" {
			return nil, nil
		}
		return []gemini.Part{{Text: c.Text}}, nil
	}
	var out []gemini.Part
	for j, part := range c.Parts {
		pp := pathAt(path, "content", j)
		if part.Type == "input_image" && strings.HasPrefix(part.ImageURL, "data:") {
			g, err := geminiDataPart(part.ImageURL, pp+".image_url") // any image type Gemini reads
			if err != nil {
				return nil, err
			}
			out = append(out, g)
			continue
		}
		b, err := r2mPart(pp, part, p)
		if err != nil {
			return nil, err
		}
		if b == nil {
			continue
		}
		ps, err := m2gContentParts(*b, pp, p)
		if err != nil {
			return nil, err
		}
		out = append(out, ps...)
	}
	return out, nil
}

// r2gTools converts tools and tool_choice.
func r2gTools(ctx context.Context, in *responses.Request, out *gemini.Request, p *Plan) error {
	defs, _, err := responsesToolDefs(in, p, nil)
	if err != nil {
		return err
	}
	var decls []gemini.FunctionDeclaration
	for i, d := range defs {
		if d.strict != nil && *d.strict {
			p.drop("strict")
		}
		fd := gemini.FunctionDeclaration{Name: p.geminiToolName(d.name), Description: d.description}
		if !emptyObjectSchema(d.params) {
			schema, err := geminiSchema(ctx, d.params, fmt.Sprintf("tools[%d].parameters", i), "tools.parameters", p)
			if err != nil {
				return err
			}
			fd.Parameters = schema
		}
		decls = append(decls, fd)
	}
	if len(decls) > 0 {
		out.Tools = []gemini.Tool{{FunctionDeclarations: decls}}
	}
	c, err := responsesToolChoice(in.ToolChoice, p)
	if err != nil || c == nil || len(decls) == 0 && c.mode != "none" {
		return err
	}
	out.ToolConfig = p.geminiToolConfig(map[string]string{"auto": "AUTO", "required": "ANY", "none": "NONE", "tool": "ANY"}[c.mode], c.name)
	return nil
}

// r2gText maps text.format to a JSON response (with its schema converted).
func r2gText(ctx context.Context, t *responses.Text, gc *gemini.GenerationConfig, p *Plan) error {
	kind, schema, err := responsesFormat(t, p)
	if err != nil || kind == "" {
		return err
	}
	gc.ResponseMimeType = "application/json"
	if kind == "json_schema" {
		gc.ResponseSchema, err = geminiSchema(ctx, schema, "text.format.schema", "text.format.schema", p)
	}
	return err
}

// ResponsesBodyToGemini translates a Responses request body into a Gemini
// generateContent body. A body that cannot be translated is a
// *RequestError; when ctx ends first, the translation stops with ctx's
// error.
func ResponsesBodyToGemini(ctx context.Context, body []byte, t Target) ([]byte, *Plan, error) {
	return bodyToBody(body, t, withContext(ctx, ResponsesToGemini))
}
