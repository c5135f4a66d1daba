package translate

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/jsonx"
)

// jsonToolName is the forced tool that emulates structured output on
// Anthropic models without output_config.format.
const jsonToolName = "json_tool_call"

// advisoryChatParams are Chat Completions parameters with no Anthropic
// counterpart whose loss leaves a valid answer: dropped and reported.
var advisoryChatParams = map[string]bool{
	"presence_penalty": true, "frequency_penalty": true, "logit_bias": true, "seed": true,
	"prediction": true, "store": true, "metadata": true, "service_tier": true,
	"prompt_cache_key": true, "verbosity": true, "prompt_cache_retention": true,
	"web_search_options": true, "moderation": true, "prompt_cache_options": true,
}

// ChatToMessages translates a Chat Completions request into a Messages
// request for an Anthropic upstream serving upstreamModel.
func ChatToMessages(in *openai.ChatRequest, upstreamModel string, caps Caps, policy Policy, signer *Signer) (*anthropic.MessagesRequest, *Plan, error) {
	p := &Plan{AnswerModel: upstreamModel, Stream: in.Stream, Caps: caps, policy: policy, signer: signer}
	p.IncludeUsage = in.StreamOptions != nil && in.StreamOptions.IncludeUsage
	out := &anthropic.MessagesRequest{Model: upstreamModel, Stream: in.Stream}

	if err := c2mTopLevel(in, out, p); err != nil {
		return nil, nil, err
	}
	if err := c2mMessages(in, out, p); err != nil {
		return nil, nil, err
	}
	if err := c2mTools(in, out, p); err != nil {
		return nil, nil, err
	}
	if err := c2mResponseFormat(in, out, p); err != nil {
		return nil, nil, err
	}
	if err := c2mThinking(in, out, p); err != nil {
		return nil, nil, err
	}
	declareReferencedTools(out)
	return out, p, nil
}

func c2mTopLevel(in *openai.ChatRequest, out *anthropic.MessagesRequest, p *Plan) error {
	if in.N != nil && *in.N > 1 {
		if err := p.contract("n", "tollgate cannot produce more than 1 choice with an Anthropic upstream"); err != nil {
			return err
		}
	}
	if (in.Logprobs != nil && *in.Logprobs) || in.TopLogprobs != nil {
		if err := p.contract("logprobs", "Anthropic models do not return log probabilities"); err != nil {
			return err
		}
	}
	if slices.Contains(in.Modalities, "audio") || len(in.Audio) > 0 {
		if err := p.contract("modalities", "Anthropic models do not produce audio"); err != nil {
			return err
		}
	}
	if err := positiveBound("max_tokens", in.MaxTokens); err != nil {
		return err
	}
	bound := "max_tokens"
	if in.MaxCompletionTokens != nil {
		bound = "max_completion_tokens"
	}
	var err error
	if out.MaxTokens, err = anthropicMaxTokens(bound, cmp.Or(in.MaxCompletionTokens, in.MaxTokens), in.Stream, p); err != nil {
		return err
	}
	if err := anthropicSampling(in.Temperature, in.TopP, out, p); err != nil {
		return err
	}
	out.TopK = in.TopK
	for _, s := range in.Stop.Values {
		if strings.TrimSpace(s) == "" {
			p.drop("stop") // Anthropic rejects whitespace-only stop sequences
			continue
		}
		out.StopSequences = append(out.StopSequences, s)
	}
	if id := cmpOr(in.SafetyIdentifier, in.User); id != "" {
		out.Metadata = &anthropic.Metadata{UserID: opaqueUserID(id)}
	}
	if len(in.Extra) > 0 {
		var m map[string]jsontext.Value
		if err := jsonx.Unmarshal(in.Extra, &m); err == nil {
			for _, k := range slices.Sorted(maps.Keys(m)) {
				why := "unknown parameter, not translated"
				if advisoryChatParams[k] {
					why = "Anthropic models have no such parameter"
				}
				if err := p.advisory(k, why); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// anthropicMaxTokens is max_tokens for a client's output bound n, the
// member param (nil: none, which is the model's limit for OpenAI clients;
// Anthropic needs a number).
func anthropicMaxTokens(param string, n *int64, stream bool, p *Plan) (int64, error) {
	if n != nil {
		if err := positiveBound(param, n); err != nil {
			return 0, err
		}
		return *n, nil
	}
	m := p.Caps.MaxOutput()
	if !stream && p.Caps.NonStreamMaxTokens > 0 {
		m = min(m, p.Caps.NonStreamMaxTokens)
	}
	return m, nil
}

// anthropicSampling sets temperature (OpenAI's 0–2 capped to Anthropic's
// 0–1, reported) and top_p.
func anthropicSampling(temperature, topP *float64, out *anthropic.MessagesRequest, p *Plan) error {
	if t := temperature; t != nil {
		switch {
		case *t < 0:
			return badRequest("temperature", "temperature: must be between 0 and 2")
		case *t > 1:
			one := 1.0 // Anthropic's range is 0–1; its own compatibility layer caps too
			out.Temperature = &one
			p.adjust("temperature")
		default:
			out.Temperature = t
		}
	}
	out.TopP = topP
	if out.Temperature != nil && out.TopP != nil && p.Caps.TemperatureTopPExclusive {
		out.TopP = nil
		p.drop("top_p")
	}
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// opaqueUserID forwards ids as they are, but hashes values that look like
// an e-mail address or a phone number: Anthropic refuses personal data in
// metadata.user_id.
func opaqueUserID(id string) string {
	digits := 0
	for _, c := range id {
		if c >= '0' && c <= '9' {
			digits++
		}
	}
	if strings.Contains(id, "@") || (digits >= 7 && strings.Trim(id, "+0123456789 -()") == "") {
		return hashID(id)
	}
	return id
}

// hashID is an opaque, stable stand-in for an id: 64 hex digits.
func hashID(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}

// c2mMessages hoists system/developer messages into system and converts
// the conversation (§1.4). On models that take mid-conversation system
// messages, those after the first turn stay in the conversation instead
// (placeSystemMessages).
func c2mMessages(in *openai.ChatRequest, out *anthropic.MessagesRequest, p *Plan) error {
	var sys []anthropic.Block
	var msgs []anthropic.Message
	var later []laterSystem // kept where they stand (Caps.SystemMessages)
	fnCalls := 0            // legacy function_call ids
	for i, m := range in.Messages {
		path := pathAt("", "messages", i)
		switch m.Role {
		case "system", "developer":
			var blocks []anthropic.Block
			for _, part := range textParts(m.Content) {
				if part.Text != "" {
					blocks = append(blocks, anthropic.Block{Type: "text", Text: part.Text, CacheControl: part.CacheControl})
				}
			}
			if p.Caps.SystemMessages && len(msgs) > 0 {
				later = append(later, laterSystem{pos: len(msgs), blocks: blocks})
			} else {
				sys = append(sys, blocks...)
			}
		case "user":
			blocks, err := c2mUserBlocks(m.Content, path, p)
			if err != nil {
				return err
			}
			msgs = appendBlocks(msgs, "user", blocks)
		case "assistant":
			blocks, err := c2mAssistantBlocks(m, path, &fnCalls, p)
			if err != nil {
				return err
			}
			msgs = appendBlocks(msgs, "assistant", blocks)
		case "tool", "function":
			id := m.ToolCallID
			if m.Role == "function" {
				id = "toolu_fc_" + strconv.Itoa(fnCalls)
			} else if err := requiredCallID(path+".tool_call_id", id, "of the assistant tool call this message answers"); err != nil {
				return err
			}
			res := anthropic.Block{Type: "tool_result", ToolUseID: sanitizeID(id)}
			if m.Content.IsString {
				if m.Content.Text != "" {
					res.Content = &anthropic.Content{Blocks: []anthropic.Block{{Type: "text", Text: m.Content.Text}}, FromString: true}
				}
			} else if parts := textParts(m.Content); len(parts) > 0 {
				c := &anthropic.Content{}
				for _, part := range parts {
					if part.Text != "" {
						c.Blocks = append(c.Blocks, anthropic.Block{Type: "text", Text: part.Text})
					}
				}
				if len(c.Blocks) > 0 {
					res.Content = c
				}
			}
			msgs = appendBlocks(msgs, "user", []anthropic.Block{res})
		default:
			return badRequest(path+".role", "%s.role: unknown role %q", path, m.Role)
		}
	}
	msgs, err := tidyMessages(msgs)
	if err != nil {
		return err
	}
	msgs, sys = placeSystemMessages(msgs, later, sys)
	out.Messages = msgs
	if len(sys) > 0 {
		out.System = anthropic.Content{Blocks: sys}
	}
	return nil
}

// tidyMessages puts a translated conversation in the shape Anthropic
// takes: tool results open the user message that follows the calls, a
// final assistant message (a prefill) does not end in white space, and
// there is at least one message.
func tidyMessages(msgs []anthropic.Message) ([]anthropic.Message, error) {
	for i := range msgs {
		m := &msgs[i]
		if m.Role == "user" {
			if len(m.Content.Blocks) == 0 {
				return nil, badRequest("messages", "messages: a user message has no content")
			}
			slices.SortStableFunc(m.Content.Blocks, func(a, b anthropic.Block) int {
				return boolRank(a.Type != "tool_result") - boolRank(b.Type != "tool_result")
			})
		}
	}
	if n := len(msgs); n > 0 && msgs[n-1].Role == "assistant" {
		blocks := msgs[n-1].Content.Blocks
		if k := len(blocks) - 1; blocks[k].Type == "text" {
			blocks[k].Text = strings.TrimRight(blocks[k].Text, " \t\r\n")
			if blocks[k].Text == "" {
				msgs[n-1].Content.Blocks = blocks[:k]
				if k == 0 {
					msgs = msgs[:n-1]
				}
			}
		}
	}
	if len(msgs) == 0 {
		return nil, badRequest("messages", "messages: at least one user or assistant message is required")
	}
	return msgs, nil
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// appendBlocks adds blocks as a message of role, merged into a directly
// preceding message of the same role (Anthropic combines consecutive turns;
// merging keeps tool results of one turn together).
func appendBlocks(msgs []anthropic.Message, role string, blocks []anthropic.Block) []anthropic.Message {
	if len(blocks) == 0 {
		return msgs
	}
	if n := len(msgs); n > 0 && msgs[n-1].Role == role {
		msgs[n-1].Content.Blocks = append(msgs[n-1].Content.Blocks, blocks...)
		return msgs
	}
	return append(msgs, anthropic.Message{Role: role, Content: anthropic.Content{Blocks: blocks}})
}

// textParts returns the content as text parts (a string is one part).
func textParts(c openai.MessageContent) []openai.Part {
	if c.IsString {
		return []openai.Part{{Type: "text", Text: c.Text}}
	}
	var out []openai.Part
	for _, part := range c.Parts {
		if part.Type == "text" {
			out = append(out, part)
		}
	}
	return out
}

func c2mUserBlocks(c openai.MessageContent, path string, p *Plan) ([]anthropic.Block, error) {
	if c.IsString {
		if c.Text == "" {
			return nil, nil
		}
		return []anthropic.Block{{Type: "text", Text: c.Text}}, nil
	}
	var out []anthropic.Block
	for j, part := range c.Parts {
		ppath := pathAt(path, "content", j)
		switch part.Type {
		case "text":
			if part.Text != "" {
				out = append(out, anthropic.Block{Type: "text", Text: part.Text, CacheControl: part.CacheControl})
			}
		case "image_url":
			if part.ImageURL == nil {
				return nil, badRequest(ppath, "%s: image_url part without an image_url", ppath)
			}
			b, err := imageBlock(part.ImageURL.URL, ppath, ".image_url.url", p)
			if err != nil {
				return nil, err
			}
			if part.ImageURL.Detail != "" {
				p.drop("detail")
			}
			b.CacheControl = part.CacheControl
			out = append(out, b)
		case "file":
			f := part.File
			if f == nil || f.FileData == "" {
				return nil, p.contract(ppath, "only inline file_data can be sent to an Anthropic model (file_id refers to OpenAI's file store)")
			}
			mt, data, ok := parseDataURL(f.FileData)
			if !ok || mt != "application/pdf" {
				return nil, badRequest(ppath, "%s: file_data must be a data: URL of a PDF", ppath)
			}
			out = append(out, anthropic.Block{Type: "document", Source: &anthropic.Source{Type: "base64", MediaType: mt, Data: data}})
		case "input_audio":
			if err := p.contract(ppath, "Anthropic models do not accept audio input"); err != nil {
				return nil, err
			}
		default:
			if err := p.contract(ppath, fmt.Sprintf("content parts of type %q cannot be sent to an Anthropic model", part.Type)); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// imageBlock converts an image URL into an image block; path names the
// part, member where in it the URL is.
func imageBlock(url, path, member string, p *Plan) (anthropic.Block, error) {
	if strings.HasPrefix(url, "data:") {
		upath := path + member
		mt, data, ok := parseDataURL(url)
		if !ok {
			return anthropic.Block{}, badRequest(upath, "%s: a data: URL must be base64-encoded, as in data:image/png;base64,…", upath)
		}
		if mt = imageMediaType(mt); !anthropicImageTypes[mt] {
			return anthropic.Block{}, badRequest(upath, "%s: image type %q cannot be sent to an Anthropic model, which takes image/jpeg, image/png, image/gif and image/webp", upath, mt)
		}
		return anthropic.Block{Type: "image", Source: &anthropic.Source{Type: "base64", MediaType: mt, Data: data}}, nil
	}
	if strings.HasPrefix(url, "https://") || strings.HasPrefix(url, "http://") {
		if p.Caps.NoURLImages {
			return anthropic.Block{}, p.contract(path, "this model's upstream takes inline (base64) images only")
		}
		return anthropic.Block{Type: "image", Source: &anthropic.Source{Type: "url", URL: url}}, nil
	}
	upath := path + member
	return anthropic.Block{}, badRequest(upath, "%s: must be a data: URL or an http(s) URL", upath)
}

// parseDataURL splits "data:<type>;base64,<data>".
func parseDataURL(s string) (mediaType, data string, ok bool) {
	rest, ok := strings.CutPrefix(s, "data:")
	if !ok {
		return "", "", false
	}
	meta, data, ok := strings.Cut(rest, ",")
	if !ok {
		return "", "", false
	}
	mediaType, ok = strings.CutSuffix(meta, ";base64")
	return mediaType, data, ok
}

func c2mAssistantBlocks(m openai.ChatMessage, path string, fnCalls *int, p *Plan) ([]anthropic.Block, error) {
	var out []anthropic.Block
	// Thinking first. Only signed thinking can go back to Anthropic, and
	// never a tollgate-made signature.
	for _, tb := range m.ThinkingBlocks {
		switch {
		case tb.Type == "thinking" && tb.Signature != "" && !anthropic.IsSyntheticSignature(tb.Signature):
			out = append(out, anthropic.Block{Type: "thinking", Thinking: tb.Thinking, Signature: tb.Signature})
		case tb.Type == "redacted_thinking" && tb.Data != "":
			out = append(out, anthropic.Block{Type: "redacted_thinking", Data: tb.Data})
		}
	}
	if len(m.ThinkingBlocks) == 0 && m.ReasoningSig != "" && !anthropic.IsSyntheticSignature(m.ReasoningSig) {
		out = append(out, anthropic.Block{Type: "thinking", Thinking: cmpOr(m.ReasoningContent, m.Reasoning), Signature: m.ReasoningSig})
	}
	for _, part := range textParts(m.Content) {
		if strings.TrimSpace(part.Text) != "" { // an empty text block is a 400 upstream
			out = append(out, anthropic.Block{Type: "text", Text: part.Text})
		}
	}
	for j, tc := range m.ToolCalls {
		tpath := pathAt(path, "tool_calls", j)
		if err := requiredCallID(tpath+".id", tc.ID, "that the tool message answering this call names"); err != nil {
			return nil, err
		}
		input, err := toolInput(tc.Function.Arguments, tpath)
		if err != nil {
			return nil, err
		}
		out = append(out, anthropic.Block{Type: "tool_use", ID: sanitizeID(tc.ID), Name: tc.Function.Name, Input: input})
	}
	if fc := m.FunctionCall; fc != nil {
		*fnCalls++
		input, err := toolInput(fc.Arguments, path+".function_call")
		if err != nil {
			return nil, err
		}
		out = append(out, anthropic.Block{Type: "tool_use", ID: "toolu_fc_" + strconv.Itoa(*fnCalls), Name: fc.Name, Input: input})
	}
	return out, nil
}

// toolInput parses tool-call arguments into a tool_use input object. Bad
// arguments are refused here, naming the call, rather than dropped (which
// would orphan its tool result and fail far from the cause).
func toolInput(args, path string) (jsontext.Value, error) {
	if strings.TrimSpace(args) == "" {
		return jsontext.Value("{}"), nil
	}
	v := jsontext.Value(args)
	if !v.IsValid() || v.Kind() != '{' {
		return nil, badRequest(path, "%s: function.arguments must be a JSON object, got %.80q", path, args)
	}
	return v, nil
}

// chatFunctionTools returns a chat request's function tools (tools and
// the legacy functions), each checked; other tool types are dropped under
// the plan's contract, or refused with "tools of type X cannot be " + where.
func chatFunctionTools(in *openai.ChatRequest, p *Plan, where string) ([]openai.Tool, error) {
	defs := in.Tools
	for _, f := range in.Functions {
		defs = append(defs, openai.Tool{Type: "function", Function: f})
	}
	var out []openai.Tool
	for i, t := range defs {
		path, legacy := chatToolPath(in, i)
		if t.Type != "function" {
			if err := p.contract(path, fmt.Sprintf("tools of type %q cannot be %s", t.Type, where)); err != nil {
				return nil, err
			}
			continue
		}
		if err := chatFunction(t, path, legacy); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// c2mTools converts tools, tool_choice and parallel_tool_calls (§1.5).
func c2mTools(in *openai.ChatRequest, out *anthropic.MessagesRequest, p *Plan) error {
	defs, err := chatFunctionTools(in, p, "used with an Anthropic model")
	if err != nil {
		return err
	}
	for _, t := range defs {
		at := anthropic.Tool{Name: t.Function.Name, Description: t.Function.Description, InputSchema: inputSchema(t.Function.Parameters)}
		if t.Function.Strict != nil {
			if p.Caps.StrictTools {
				at.Strict = t.Function.Strict
			} else {
				p.drop("strict")
			}
		}
		out.Tools = append(out.Tools, at)
	}
	choice := in.ToolChoice
	if len(choice) == 0 {
		choice = in.FunctionCall
	}
	var tc *anthropic.ToolChoice
	if len(choice) > 0 {
		var err error
		if tc, err = c2mToolChoice(choice, out); err != nil {
			return err
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
	out.ToolChoice = tc
	return nil
}

// inputSchema keeps the parameters schema verbatim, adding what Anthropic
// requires (an object schema).
func inputSchema(params jsontext.Value) jsontext.Value {
	if len(params) == 0 || string(params) == "null" {
		return jsontext.Value(`{"type":"object","properties":{}}`)
	}
	var probe struct {
		Type *string `json:"type"`
	}
	if params.Kind() == '{' && jsonx.Unmarshal(params, &probe) == nil && probe.Type == nil {
		// Add "type":"object" without re-encoding the rest.
		rest := strings.TrimSpace(string(params[1:]))
		if rest == "}" {
			return jsontext.Value(`{"type":"object"}`)
		}
		return jsontext.Value(`{"type":"object",` + rest)
	}
	return params
}

func c2mToolChoice(choice jsontext.Value, out *anthropic.MessagesRequest) (*anthropic.ToolChoice, error) {
	if choice.Kind() == '"' {
		var s string
		jsonx.Unmarshal(choice, &s)
		switch s {
		case "auto":
			return &anthropic.ToolChoice{Type: "auto"}, nil
		case "required":
			return &anthropic.ToolChoice{Type: "any"}, nil
		case "none":
			return &anthropic.ToolChoice{Type: "none"}, nil // tools are kept: history may use them
		}
		return nil, badRequest("tool_choice", "tool_choice: unknown value %q", s)
	}
	var obj struct {
		Type     string `json:"type"`
		Name     string `json:"name"` // legacy function_call {"name"}
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
		AllowedTools struct {
			Mode  string `json:"mode"`
			Tools []struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tools"`
		} `json:"allowed_tools"`
	}
	if err := jsonx.Unmarshal(choice, &obj); err != nil {
		return nil, explained("tool_choice", err)
	}
	switch {
	case obj.Type == "function" && obj.Function.Name != "":
		return &anthropic.ToolChoice{Type: "tool", Name: obj.Function.Name}, nil
	case obj.Type == "" && obj.Name != "":
		return &anthropic.ToolChoice{Type: "tool", Name: obj.Name}, nil
	case obj.Type == "allowed_tools":
		allowed := map[string]bool{}
		for _, t := range obj.AllowedTools.Tools {
			allowed[t.Function.Name] = true
		}
		out.Tools = slices.DeleteFunc(out.Tools, func(t anthropic.Tool) bool { return !allowed[t.Name] })
		if obj.AllowedTools.Mode == "required" {
			return &anthropic.ToolChoice{Type: "any"}, nil
		}
		return &anthropic.ToolChoice{Type: "auto"}, nil
	}
	return nil, badRequest("tool_choice", "tool_choice: unsupported value %s", choice)
}

// c2mResponseFormat maps response_format to output_config.format, or
// emulates it with a forced tool on models without it (§1.9).
func c2mResponseFormat(in *openai.ChatRequest, out *anthropic.MessagesRequest, p *Plan) error {
	if len(in.ResponseFormat) == 0 {
		return nil
	}
	var rf struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Name   string         `json:"name"`
			Schema jsontext.Value `json:"schema"`
		} `json:"json_schema"`
	}
	if err := jsonx.Unmarshal(in.ResponseFormat, &rf); err != nil {
		return explained("response_format", err)
	}
	var schema jsontext.Value
	switch rf.Type {
	case "text", "":
		return nil
	case "json_schema":
		schema = rf.JSONSchema.Schema
		if len(schema) == 0 {
			return badRequest("response_format.json_schema.schema", "response_format.json_schema.schema: required")
		}
	case "json_object":
		schema = jsontext.Value(`{"type":"object","additionalProperties":true,"properties":{}}`)
	default:
		return badRequest("response_format.type", "response_format.type: unknown value %q", rf.Type)
	}
	anthropicFormat(schema, rf.Type == "json_schema", out, p)
	return nil
}

// anthropicFormat asks for output matching schema: output_config.format on
// models that take it (for a JSON schema), else a forced tool whose input
// is the answer (§1.9).
func anthropicFormat(schema jsontext.Value, isSchema bool, out *anthropic.MessagesRequest, p *Plan) {
	if p.Caps.OutputFormat && isSchema {
		format, _ := jsonx.Marshal(map[string]any{"type": "json_schema", "schema": schema})
		out.OutputConfig = &anthropic.OutputConfig{Format: format}
		return
	}
	out.Tools = append(out.Tools, anthropic.Tool{Name: jsonToolName, Description: "Respond with a JSON object.", InputSchema: schema})
	out.ToolChoice = &anthropic.ToolChoice{Type: "tool", Name: jsonToolName}
	p.JSONTool = true
}

// reasoningBudgets are the budgets used for reasoning_effort on models
// with budget thinking; budgetEffort inverts them.
var reasoningBudgets = map[string]int64{
	"minimal": 1024, "low": 1024, "medium": 8192, "high": 24576, "xhigh": 32768, "max": 32768,
}

// c2mThinking maps reasoning_effort (or a raw thinking extension) to
// Anthropic thinking (§1.8.1).
func c2mThinking(in *openai.ChatRequest, out *anthropic.MessagesRequest, p *Plan) error {
	if len(in.Thinking) > 0 && string(in.Thinking) != "null" {
		var t anthropic.Thinking
		if err := jsonx.Unmarshal(in.Thinking, &t); err != nil {
			return explained("thinking", err)
		}
		out.Thinking = &t // explicit: forwarded as sent, parameters untouched
		return nil
	}
	return anthropicEffort(in.ReasoningEffort, "reasoning_effort", out, p)
}

// anthropicEffort turns on thinking for a reasoning effort (param names
// the client's member), with a budget or adaptively as the model takes it.
func anthropicEffort(effort, param string, out *anthropic.MessagesRequest, p *Plan) error {
	if effort == "" || effort == "none" {
		return nil
	}
	if _, ok := reasoningBudgets[effort]; !ok {
		return badRequest(param, "%s: unknown value %q", param, effort)
	}
	if p.Caps.Thinking == ThinkingNone {
		return p.advisory(param, "this model does not think")
	}
	if tc := out.ToolChoice; tc != nil && (tc.Type == "any" || tc.Type == "tool") {
		// Anthropic refuses forced tool use with thinking; the tool choice is the contract.
		p.drop(param)
		return nil
	}
	switch p.Caps.Thinking {
	case ThinkingAdaptive:
		e := effort
		if e == "minimal" {
			e = "low"
		}
		out.Thinking = &anthropic.Thinking{Type: "adaptive"}
		if out.OutputConfig == nil {
			out.OutputConfig = &anthropic.OutputConfig{}
		}
		out.OutputConfig.Effort = e
	default:
		budget := reasoningBudgets[effort]
		out.Thinking = &anthropic.Thinking{Type: "enabled", BudgetTokens: budget}
		if out.MaxTokens <= budget {
			// The budget counts inside max_tokens; keep the client's room for the answer.
			out.MaxTokens = budget + max(out.MaxTokens, 1024)
			p.adjust("max_tokens")
		}
	}
	// Thinking refuses non-default sampling; tollgate added it, so it clears them.
	if out.Temperature != nil {
		out.Temperature = nil
		p.drop("temperature")
	}
	if out.TopP != nil {
		out.TopP = nil
		p.drop("top_p")
	}
	if out.TopK != nil {
		out.TopK = nil
		p.drop("top_k")
	}
	return nil
}

// declareReferencedTools adds a stub definition for every tool the history
// uses but the request does not declare: Anthropic refuses such history.
// A request that declared no tools at all must not start calling the stubs,
// so it also gets tool_choice none (unless the client chose).
func declareReferencedTools(out *anthropic.MessagesRequest) {
	hadTools := len(out.Tools) > 0
	declared := map[string]bool{}
	for _, t := range out.Tools {
		declared[t.Name] = true
	}
	for _, m := range out.Messages {
		for _, b := range m.Content.Blocks {
			if b.Type == "tool_use" && !declared[b.Name] {
				declared[b.Name] = true
				out.Tools = append(out.Tools, anthropic.Tool{Name: b.Name, InputSchema: jsontext.Value(`{"type":"object","properties":{}}`)})
			}
		}
	}
	if !hadTools && len(out.Tools) > 0 && out.ToolChoice == nil {
		out.ToolChoice = &anthropic.ToolChoice{Type: "none"}
	}
}

// ChatBodyToMessages translates a Chat Completions request body into a
// Messages body. A body that cannot be translated is a *RequestError.
func ChatBodyToMessages(_ context.Context, body []byte, t Target) ([]byte, *Plan, error) {
	return bodyToBody(body, t, ChatToMessages)
}
