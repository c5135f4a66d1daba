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

// ResponsesToMessages translates a Responses request into a Messages
// request for an Anthropic upstream serving upstreamModel.
func ResponsesToMessages(in *responses.Request, upstreamModel string, caps Caps, policy Policy, signer *Signer) (*anthropic.MessagesRequest, *Plan, error) {
	p := &Plan{AnswerModel: upstreamModel, Stream: in.Stream, Caps: caps, policy: policy, signer: signer, rp: &responsesPlan{req: in}}
	out := &anthropic.MessagesRequest{Model: upstreamModel, Stream: in.Stream}
	if err := responsesState(in); err != nil {
		return nil, nil, err
	}
	var err error
	if out.MaxTokens, err = anthropicMaxTokens("max_output_tokens", in.MaxOutputTokens, in.Stream, p); err != nil {
		return nil, nil, err
	}
	if err := anthropicSampling(in.Temperature, in.TopP, out, p); err != nil {
		return nil, nil, err
	}
	if id := cmpOr(in.SafetyIdentifier, in.User); id != "" {
		out.Metadata = &anthropic.Metadata{UserID: opaqueUserID(id)}
	}
	if err := r2mInput(in, out, p); err != nil {
		return nil, nil, err
	}
	if err := r2mTools(in, out, p); err != nil {
		return nil, nil, err
	}
	if err := r2mText(in.Text, out, p); err != nil {
		return nil, nil, err
	}
	if r := in.Reasoning; r != nil {
		// An effort turns thinking on; a summary alone asks for what the
		// model does anyway.
		if err := anthropicEffort(r.Effort, "reasoning.effort", out, p); err != nil {
			return nil, nil, err
		}
	}
	if err := responsesAdvisoryMembers(in, p, "prompt_cache_key"); err != nil {
		return nil, nil, err
	}
	declareReferencedTools(out)
	return out, p, nil
}

// r2mInput converts instructions and input into system and messages:
// instructions and system or developer messages are hoisted into system
// (or kept in place after the first turn, on models with
// capabilities.system_messages); function calls become tool_use blocks of
// the assistant turn, their outputs tool_result blocks of the next user
// turn; reasoning items tollgate sealed give back Claude's own thinking
// blocks.
func r2mInput(in *responses.Request, out *anthropic.MessagesRequest, p *Plan) error {
	var sys []anthropic.Block
	var msgs []anthropic.Message
	var later []laterSystem
	if in.Instructions != nil && *in.Instructions != "" {
		sys = append(sys, anthropic.Block{Type: "text", Text: *in.Instructions})
	}
	if in.Input.IsString {
		if in.Input.Text != "" {
			msgs = appendBlocks(msgs, "user", []anthropic.Block{{Type: "text", Text: in.Input.Text}})
		}
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
				if p.Caps.SystemMessages && len(msgs) > 0 {
					later = append(later, laterSystem{pos: len(msgs), blocks: blocks})
				} else {
					sys = append(sys, blocks...)
				}
			case "assistant":
				blocks, err := r2mTextBlocks(path, it.Content, p)
				if err != nil {
					return err
				}
				msgs = appendBlocks(msgs, "assistant", blocks)
			case "user":
				blocks, err := r2mUserBlocks(path, it.Content, p)
				if err != nil {
					return err
				}
				msgs = appendBlocks(msgs, "user", blocks)
			default:
				return badRequest(path+".role", "%s.role: must be user, assistant, system or developer, got %q", path, it.Role)
			}
		case it.Type == "function_call", it.Type == "custom_tool_call":
			if err := requiredCallID(path+".call_id", it.CallID, "that the output answering this call names"); err != nil {
				return err
			}
			input := jsontext.Value(`{}`)
			switch {
			case it.Type == "custom_tool_call" && it.Input != nil:
				input = mustJSON(map[string]string{"input": *it.Input})
			case it.Arguments != nil:
				var err error
				if input, err = toolInput(*it.Arguments, path+".arguments"); err != nil {
					return err
				}
			}
			name := p.responsesToolName(rTool{namespace: it.Namespace, name: it.Name, custom: it.Type == "custom_tool_call"})
			msgs = appendBlocks(msgs, "assistant", []anthropic.Block{{Type: "tool_use", ID: sanitizeID(it.CallID), Name: name, Input: input}})
		case it.Type == "function_call_output", it.Type == "custom_tool_call_output":
			res, err := r2mToolResult(path, it, p)
			if err != nil {
				return err
			}
			msgs = appendBlocks(msgs, "user", []anthropic.Block{res})
		case it.Type == "reasoning":
			msgs = appendBlocks(msgs, "assistant", p.thinkingBlocks(it))
		default:
			if err := responsesOtherItem(path, it, p); err != nil {
				return err
			}
		}
	}
	msgs, err := tidyMessages(msgs)
	if err != nil {
		return badRequest("input", "input: %s", strings.TrimPrefix(err.Error(), "messages: "))
	}
	msgs, sys = placeSystemMessages(msgs, later, sys)
	out.Messages = msgs
	if len(sys) > 0 {
		out.System = anthropic.Content{Blocks: sys}
	}
	return nil
}

// thinkingBlocks are the Anthropic thinking blocks a reasoning item carries:
// those tollgate sealed into its encrypted_content when Claude sent them,
// exactly as they came. Anything else (OpenAI's own encrypted reasoning,
// text from another upstream, a summary alone) cannot be given to Claude,
// which takes back only its own signed blocks, and is left out.
func (p *Plan) thinkingBlocks(it responses.Item) []anthropic.Block {
	if it.EncryptedContent == nil || p.signer == nil {
		return nil
	}
	payload, ok := p.signer.unseal(*it.EncryptedContent)
	if !ok {
		return nil
	}
	var sr sealedReasoning
	if jsonx.Unmarshal(payload, &sr) != nil || len(sr.Blocks) == 0 {
		return nil
	}
	var blocks []anthropic.Block
	if jsonx.Unmarshal(sr.Blocks, &blocks) != nil {
		return nil
	}
	return blocks
}

// r2mTextBlocks converts content that may hold only text (system,
// developer and assistant messages); white-space-only text is left out
// (Anthropic refuses it).
func r2mTextBlocks(path string, c responses.Content, p *Plan) ([]anthropic.Block, error) {
	text := func(s string) []anthropic.Block {
		if strings.TrimSpace(s) == "" {
			return nil
		}
		return []anthropic.Block{{Type: "text", Text: s}}
	}
	if c.IsString {
		return text(c.Text), nil
	}
	var out []anthropic.Block
	for j, part := range c.Parts {
		switch part.Type {
		case "input_text", "output_text", "text":
			out = append(out, text(part.Text)...)
		case "refusal":
			out = append(out, text(part.Refusal)...)
		default:
			ppath := pathAt(path, "content", j)
			return nil, badRequest(ppath, "%s: %s parts cannot be sent in this message to this model's upstream", ppath, part.Type)
		}
	}
	return out, nil
}

// r2mUserBlocks converts a user message's content.
func r2mUserBlocks(path string, c responses.Content, p *Plan) ([]anthropic.Block, error) {
	if c.IsString {
		if c.Text == "" {
			return nil, nil
		}
		return []anthropic.Block{{Type: "text", Text: c.Text}}, nil
	}
	var out []anthropic.Block
	for j, part := range c.Parts {
		b, err := r2mPart(pathAt(path, "content", j), part, p)
		if err != nil {
			return nil, err
		}
		if b != nil {
			out = append(out, *b)
		}
	}
	return out, nil
}

// r2mPart converts one input part: text, an image (data or http URL) or a
// PDF (inline data or URL). What lives in OpenAI's file store cannot be
// sent.
func r2mPart(path string, c responses.Part, p *Plan) (*anthropic.Block, error) {
	switch c.Type {
	case "input_text", "output_text", "text":
		if c.Text == "" {
			return nil, nil
		}
		return &anthropic.Block{Type: "text", Text: c.Text}, nil
	case "input_image":
		switch {
		case c.ImageURL != "":
			b, err := imageBlock(c.ImageURL, path, ".image_url", p)
			if c.Detail != "" && c.Detail != "auto" {
				p.drop("detail")
			}
			return &b, err
		case c.FileID != "":
			return nil, p.contract(path, "images by file_id refer to OpenAI's file store and cannot be sent to this model's upstream")
		}
		return nil, badRequest(path, "%s: input_image needs image_url or file_id", path)
	case "input_file":
		switch {
		case c.FileData != "":
			mt, data, ok := parseDataURL(c.FileData)
			if !ok {
				mt, data = "application/pdf", c.FileData // the bare base64 of a PDF
			}
			if mt != "application/pdf" {
				return nil, badRequest(path, "%s: file_data must be a PDF, got %q", path, mt)
			}
			return &anthropic.Block{Type: "document", Source: &anthropic.Source{Type: "base64", MediaType: mt, Data: data}, Title: c.Filename}, nil
		case c.FileURL != "":
			return &anthropic.Block{Type: "document", Source: &anthropic.Source{Type: "url", URL: c.FileURL}}, nil
		case c.FileID != "":
			return nil, p.contract(path, "files by file_id refer to OpenAI's file store and cannot be sent to this model's upstream")
		}
		return nil, badRequest(path, "%s: input_file needs file_data, file_url or file_id", path)
	}
	return nil, p.contract(path, fmt.Sprintf("content parts of type %q cannot be sent to this model's upstream", c.Type))
}

// r2mToolResult converts a function or custom tool's output into a
// tool_result block: text, and images and PDFs, which tool results take.
func r2mToolResult(path string, it responses.Item, p *Plan) (anthropic.Block, error) {
	res := anthropic.Block{Type: "tool_result", ToolUseID: sanitizeID(it.CallID)}
	if err := requiredCallID(path+".call_id", it.CallID, "of the call this output answers"); err != nil {
		return res, err
	}
	c := it.Output
	switch {
	case c.IsString:
		if c.Text != "" {
			res.Content = &anthropic.Content{Blocks: []anthropic.Block{{Type: "text", Text: c.Text}}, FromString: true}
		}
	case len(c.Parts) > 0:
		content := &anthropic.Content{}
		for j, part := range c.Parts {
			b, err := r2mPart(pathAt(path, "output", j), part, p)
			if err != nil {
				return res, err
			}
			if b != nil {
				content.Blocks = append(content.Blocks, *b)
			}
		}
		if len(content.Blocks) > 0 {
			res.Content = content
		}
	}
	return res, nil
}

// r2mTools converts tools, tool_choice and parallel_tool_calls.
func r2mTools(in *responses.Request, out *anthropic.MessagesRequest, p *Plan) error {
	defs, _, err := responsesToolDefs(in, p, func(t responses.Tool) bool {
		if !p.Caps.WebSearch || !isWebSearch(t.Type) {
			return false
		}
		out.Tools = append(out.Tools, webSearchTool(t))
		return true
	})
	if err != nil {
		return err
	}
	for _, d := range defs {
		t := anthropic.Tool{Name: d.name, Description: d.description, InputSchema: inputSchema(d.params)}
		if d.strict != nil {
			if p.Caps.StrictTools {
				t.Strict = d.strict
			} else if *d.strict {
				p.drop("strict")
			}
		}
		out.Tools = append(out.Tools, t)
	}
	c, err := responsesToolChoice(in.ToolChoice, p)
	if err != nil {
		return err
	}
	var tc *anthropic.ToolChoice
	if c != nil {
		switch c.mode {
		case "auto":
			tc = &anthropic.ToolChoice{Type: "auto"}
		case "required":
			tc = &anthropic.ToolChoice{Type: "any"}
		case "none":
			tc = &anthropic.ToolChoice{Type: "none"} // tools are kept: history may use them
		case "tool":
			tc = &anthropic.ToolChoice{Type: "tool", Name: c.name}
		}
	}
	if in.ParallelToolCalls != nil && !*in.ParallelToolCalls && len(out.Tools) > 0 {
		if tc == nil {
			tc = &anthropic.ToolChoice{Type: "auto"}
		}
		if tc.Type != "none" {
			tc.DisableParallelToolUse = true
		}
	}
	if len(out.Tools) == 0 && tc != nil && tc.Type != "none" {
		tc = nil // Anthropic refuses a tool choice without tools
	}
	out.ToolChoice = tc
	return nil
}

// responsesFormat reads text.format: "" for plain text, "json_object",
// or "json_schema" with its schema. A verbosity no upstream has a setting
// for is reported.
func responsesFormat(t *responses.Text, p *Plan) (string, jsontext.Value, error) {
	if t == nil {
		return "", nil, nil
	}
	if t.Verbosity != "" && t.Verbosity != "medium" {
		if err := p.advisory("text.verbosity", "the upstream has no verbosity setting"); err != nil {
			return "", nil, err
		}
	}
	f := t.Format
	if f == nil {
		return "", nil, nil
	}
	switch f.Type {
	case "text", "":
		return "", nil, nil
	case "json_object":
		return f.Type, nil, nil
	case "json_schema":
		if len(f.Schema) == 0 {
			return "", nil, badRequest("text.format.schema", "text.format.schema: required")
		}
		return f.Type, f.Schema, nil
	}
	return "", nil, badRequest("text.format.type", "text.format.type: unknown value %q", f.Type)
}

// r2mText maps text.format to structured output.
func r2mText(t *responses.Text, out *anthropic.MessagesRequest, p *Plan) error {
	kind, schema, err := responsesFormat(t, p)
	switch kind {
	case "json_object":
		anthropicFormat(jsontext.Value(`{"type":"object","additionalProperties":true,"properties":{}}`), false, out, p)
	case "json_schema":
		anthropicFormat(schema, true, out, p)
	}
	return err
}

// isWebSearch reports whether a Responses tool type is the hosted web search.
func isWebSearch(typ string) bool {
	return typ == "web_search" || strings.HasPrefix(typ, "web_search_preview") || strings.HasPrefix(typ, "web_search_2")
}

// webSearchTool is Anthropic's web search server tool for a Responses
// client's web_search tool: its allowed domains and approximate user
// location carry over.
func webSearchTool(t responses.Tool) anthropic.Tool {
	var opts struct {
		Filters struct {
			AllowedDomains []string `json:"allowed_domains"`
		} `json:"filters"`
		UserLocation jsontext.Value `json:"user_location"`
	}
	jsonx.Unmarshal(t.Extra, &opts)
	extra := map[string]any{}
	if d := opts.Filters.AllowedDomains; len(d) > 0 {
		extra["allowed_domains"] = d
	}
	if l := opts.UserLocation; len(l) > 0 && string(l) != "null" {
		extra["user_location"] = l
	}
	at := anthropic.Tool{Type: "web_search_20250305", Name: "web_search"}
	if len(extra) > 0 {
		at.Extra = mustJSON(extra)
	}
	return at
}

// ResponsesBodyToMessages translates a Responses request body into a
// Messages body. A body that cannot be translated is a *RequestError.
func ResponsesBodyToMessages(_ context.Context, body []byte, t Target) ([]byte, *Plan, error) {
	return bodyToBody(body, t, ResponsesToMessages)
}
