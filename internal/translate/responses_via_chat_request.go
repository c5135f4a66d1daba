package translate

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/api/responses"
)

// ResponsesToChat translates a Responses request into a Chat Completions
// request for an OpenAI-compatible upstream serving upstreamModel.
func ResponsesToChat(in *responses.Request, upstreamModel string, caps Caps, policy Policy, signer *Signer) (*openai.ChatRequest, *Plan, error) {
	p := &Plan{AnswerModel: upstreamModel, Stream: in.Stream, Caps: caps, policy: policy, signer: signer, rp: &responsesPlan{req: in}}
	out := &openai.ChatRequest{Model: upstreamModel, Stream: in.Stream}
	if err := responsesState(in); err != nil {
		return nil, nil, err
	}
	if err := r2cTopLevel(in, out, p); err != nil {
		return nil, nil, err
	}
	msgs, err := r2cInput(in, p)
	if err != nil {
		return nil, nil, err
	}
	out.Messages = msgs
	if err := r2cTools(in, out, p); err != nil {
		return nil, nil, err
	}
	return out, p, nil
}

// responsesState refuses what needs a stored conversation or a response
// run on the upstream's side, which a translated request cannot have.
func responsesState(in *responses.Request) error {
	switch {
	case in.PreviousResponseID != "":
		return badRequest("previous_response_id", "previous_response_id: this model's upstream keeps no responses; send the conversation as input items (store: false)")
	case !emptyJSON(in.Conversation):
		return badRequest("conversation", "conversation: conversations are kept by OpenAI and cannot be used with this model's upstream")
	case in.Background != nil && *in.Background:
		return badRequest("background", "background: responses run in the background only on a Responses API upstream")
	case !emptyJSON(in.Prompt):
		return badRequest("prompt", "prompt: prompt templates are kept by OpenAI and cannot be used with this model's upstream")
	}
	return nil
}

// responsesAdvisories are request members a translated Responses request
// cannot carry without changing the answer's content: dropped and
// reported (refused under PolicyStrict).
var responsesAdvisories = map[string]string{
	"max_tool_calls":         "the upstream has no built-in tool calls to bound",
	"top_logprobs":           "the upstream's log probabilities are not translated",
	"prompt_cache_retention": "prompt caching is the upstream's",
	"prompt_cache_options":   "prompt caching is the upstream's",
	"context_management":     "server-side compaction runs on OpenAI's side",
	"moderation":             "moderation runs on OpenAI's side",
	"service_tier":           "service tiers are OpenAI's",
	"stream_options":         "stream options are OpenAI's",
}

// responsesSilent are members that ask for nothing the translated answer
// could differ in: the gateway meters and stores by itself, and
// encrypted reasoning is what it gives back anyway.
var responsesSilent = map[string]bool{"client_metadata": true, "store": true, "include": true, "parallel_tool_calls": true}

func r2cTopLevel(in *responses.Request, out *openai.ChatRequest, p *Plan) error {
	if err := positiveBound("max_output_tokens", in.MaxOutputTokens); err != nil {
		return err
	}
	if n := in.MaxOutputTokens; n != nil {
		if p.Caps.LegacyMaxTokens {
			out.MaxTokens = n
		} else {
			out.MaxCompletionTokens = n
		}
	}
	if in.Stream && !p.Caps.NoStreamUsage {
		out.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	}
	out.Temperature, out.TopP = in.Temperature, in.TopP
	out.ParallelToolCalls = in.ParallelToolCalls
	out.User = in.SafetyIdentifier
	if out.User == "" {
		out.User = in.User
	}
	if in.Reasoning != nil {
		if err := r2cReasoning(in.Reasoning, out, p); err != nil {
			return err
		}
	}
	if in.Text != nil {
		if f := in.Text.Format; f != nil {
			switch f.Type {
			case "text", "":
			case "json_object":
				out.ResponseFormat = jsontext.Value(`{"type":"json_object"}`)
			case "json_schema":
				js := map[string]any{"name": f.Name, "schema": f.Schema}
				if f.Name == "" {
					js["name"] = "output"
				}
				if f.Strict != nil {
					js["strict"] = *f.Strict
				}
				if f.Description != "" {
					js["description"] = f.Description
				}
				out.ResponseFormat = mustJSON(map[string]any{"type": "json_schema", "json_schema": js})
			default:
				return badRequest("text.format.type", "text.format.type: unknown value %q", f.Type)
			}
		}
		if in.Text.Verbosity != "" && in.Text.Verbosity != "medium" {
			if err := p.advisory("text.verbosity", "the upstream has no verbosity setting"); err != nil {
				return err
			}
		}
	}
	out.PromptCacheKey = in.PromptCacheKey
	return responsesAdvisoryMembers(in, p, "prompt_cache_key")
}

// responsesUnknown reports request members the translator does not name.
func responsesUnknown(extra jsontext.Value, p *Plan) error {
	return eachMember(extra, func(k string) error {
		if responsesSilent[k] {
			return nil
		}
		why, ok := responsesAdvisories[k]
		if !ok {
			why = "unknown parameter, not translated"
		}
		return p.advisory(k, why)
	})
}

// r2cReasoning maps reasoning.effort to the upstream's reasoning dialect.
func r2cReasoning(r *responses.Reasoning, out *openai.ChatRequest, p *Plan) error {
	effort := r.Effort
	switch effort {
	case "":
		if p.Caps.Reasoning == ReasoningDeepSeek && r.Summary != "" {
			out.Thinking = jsontext.Value(`{"type":"enabled"}`)
		}
		return nil
	case "none":
		switch {
		case p.Caps.Reasoning == ReasoningDeepSeek:
			out.Thinking = jsontext.Value(`{"type":"disabled"}`)
		case p.Caps.AcceptsReasoningNone && p.Caps.Reasoning == ReasoningOpenAI:
			out.ReasoningEffort = "none"
		}
		return nil
	case "minimal":
		effort = "low"
	}
	return chatEffort(out, effort, "reasoning", p)
}

// r2cInput converts instructions and input into messages: instructions and
// system or developer messages become system messages, function calls
// join the assistant message before them, their outputs become tool
// messages.
func r2cInput(in *responses.Request, p *Plan) ([]openai.ChatMessage, error) {
	var out []openai.ChatMessage
	if in.Instructions != nil && *in.Instructions != "" {
		out = append(out, openai.ChatMessage{Role: "system", Content: textContent(*in.Instructions)})
	}
	if in.Input.IsString {
		return append(out, openai.ChatMessage{Role: "user", Content: textContent(in.Input.Text)}), nil
	}
	var reasoning strings.Builder // summaries since the last assistant message, for reasoning_content upstreams
	for i, it := range in.Input.Items {
		path := pathAt("", "input", i)
		switch {
		case it.IsMessage():
			var err error
			out, err = r2cMessage(out, path, it, &reasoning, p)
			if err != nil {
				return nil, err
			}
		case it.Type == "function_call", it.Type == "custom_tool_call":
			if err := requiredCallID(path+".call_id", it.CallID, "that the output answering this call names"); err != nil {
				return nil, err
			}
			args := "{}"
			if it.Type == "function_call" && it.Arguments != nil && strings.TrimSpace(*it.Arguments) != "" {
				args = *it.Arguments
			}
			if it.Type == "custom_tool_call" && it.Input != nil {
				args = string(mustJSON(map[string]string{"input": *it.Input}))
			}
			name := p.responsesToolName(rTool{namespace: it.Namespace, name: it.Name, custom: it.Type == "custom_tool_call"})
			m := assistantFor(&out, &reasoning, p)
			m.ToolCalls = append(m.ToolCalls, openai.ToolCall{ID: it.CallID, Type: "function", Function: openai.FunctionCall{Name: name, Arguments: args}})
		case it.Type == "function_call_output", it.Type == "custom_tool_call_output":
			if err := requiredCallID(path+".call_id", it.CallID, "of the call this output answers"); err != nil {
				return nil, err
			}
			text, media, err := r2cOutput(path, it.Output, p)
			if err != nil {
				return nil, err
			}
			out = append(out, openai.ChatMessage{Role: "tool", ToolCallID: it.CallID, Content: textContent(text)})
			if len(media) > 0 {
				out = appendUser(out, media)
			}
		case it.Type == "reasoning":
			for _, s := range it.Summary {
				if reasoning.Len() > 0 {
					reasoning.WriteString("\n\n")
				}
				reasoning.WriteString(s.Text)
			}
		default:
			if err := responsesOtherItem(path, it, p); err != nil {
				return nil, err
			}
		}
	}
	if p.Caps.LeadingSystemOnly {
		out = foldSystemMessages(out)
	}
	return out, nil
}

// assistantFor returns the assistant message that function calls join: the
// last message when it is an assistant's, else a new one, carrying the
// reasoning read before it when the upstream wants it back (DeepSeek).
func assistantFor(out *[]openai.ChatMessage, reasoning *strings.Builder, p *Plan) *openai.ChatMessage {
	if n := len(*out); n > 0 && (*out)[n-1].Role == "assistant" {
		return &(*out)[n-1]
	}
	m := openai.ChatMessage{Role: "assistant", Content: openai.MessageContent{Null: true}}
	if reasoning.Len() > 0 && p.Caps.Reasoning == ReasoningDeepSeek {
		m.ReasoningContent = reasoning.String()
	}
	reasoning.Reset()
	*out = append(*out, m)
	return &(*out)[len(*out)-1]
}

func r2cMessage(out []openai.ChatMessage, path string, it responses.Item, reasoning *strings.Builder, p *Plan) ([]openai.ChatMessage, error) {
	switch it.Role {
	case "system", "developer":
		text, err := r2cText(path, it.Content, p)
		if err != nil {
			return nil, err
		}
		if text != "" {
			out = append(out, openai.ChatMessage{Role: "system", Content: textContent(text)})
		}
		return out, nil
	case "assistant":
		text, err := r2cText(path, it.Content, p)
		if err != nil {
			return nil, err
		}
		if text == "" {
			return out, nil
		}
		m := assistantFor(&out, reasoning, p)
		if len(m.ToolCalls) > 0 { // text after calls: a message of its own
			out = append(out, openai.ChatMessage{Role: "assistant", Content: textContent(text)})
		} else if m.Content.Null {
			m.Content = textContent(text)
		} else {
			m.Content.Text += text
		}
		return out, nil
	case "user":
		if it.Content.IsString {
			return appendUser(out, []openai.Part{{Type: "text", Text: it.Content.Text}}), nil
		}
		var parts []openai.Part
		for j, c := range it.Content.Parts {
			part, err := r2cPart(pathAt(path, "content", j), c, p)
			if err != nil {
				return nil, err
			}
			if part != nil {
				parts = append(parts, *part)
			}
		}
		if len(parts) > 0 {
			out = appendUser(out, parts)
		}
		return out, nil
	}
	return nil, badRequest(path+".role", "%s.role: must be user, assistant, system or developer, got %q", path, it.Role)
}

// r2cText is the text of content that may hold only text (system,
// developer and assistant messages).
func r2cText(path string, c responses.Content, p *Plan) (string, error) {
	if c.IsString {
		return c.Text, nil
	}
	var b strings.Builder
	for j, part := range c.Parts {
		switch part.Type {
		case "input_text", "output_text", "text":
			b.WriteString(part.Text)
		case "refusal":
			b.WriteString(part.Refusal)
		default:
			ppath := pathAt(path, "content", j)
			return "", badRequest(ppath, "%s: %s parts cannot be sent in this message to this model's upstream", ppath, part.Type)
		}
	}
	return b.String(), nil
}

// r2cPart converts one part of a user message.
func r2cPart(path string, c responses.Part, p *Plan) (*openai.Part, error) {
	switch c.Type {
	case "input_text", "output_text", "text":
		if c.Text == "" {
			return nil, nil
		}
		return &openai.Part{Type: "text", Text: c.Text}, nil
	case "input_image":
		switch {
		case c.ImageURL != "":
			if p.Caps.NoURLImages && !strings.HasPrefix(c.ImageURL, "data:") {
				return nil, p.contract(path, "this model's upstream takes images as data URLs only")
			}
			detail := c.Detail
			if detail == "original" {
				detail = "high"
			}
			return &openai.Part{Type: "image_url", ImageURL: &openai.ImageURL{URL: c.ImageURL, Detail: detail}}, nil
		case c.FileID != "":
			return nil, p.contract(path, "images by file_id refer to OpenAI's file store and cannot be sent to this model's upstream")
		}
		return nil, badRequest(path, "%s: input_image needs image_url or file_id", path)
	case "input_file":
		switch {
		case c.FileData != "":
			if !p.Caps.FileParts {
				return nil, p.contract(path, "files are not supported by this model's upstream")
			}
			return &openai.Part{Type: "file", File: &openai.File{FileData: c.FileData, Filename: c.Filename}}, nil
		case c.FileID != "":
			return nil, p.contract(path, "files by file_id refer to OpenAI's file store and cannot be sent to this model's upstream")
		default:
			return nil, p.contract(path, "files by URL cannot be sent to this model's upstream")
		}
	}
	return nil, p.contract(path, fmt.Sprintf("content parts of type %q cannot be sent to this model's upstream", c.Type))
}

// r2cOutput flattens a tool output into the text of a tool message; images
// and files follow in a user message, with a placeholder in the text.
func r2cOutput(path string, c responses.Content, p *Plan) (string, []openai.Part, error) {
	if c.IsString || c.Null {
		return c.Text, nil, nil
	}
	var texts []string
	var media []openai.Part
	for j, part := range c.Parts {
		converted, err := r2cPart(pathAt(path, "output", j), part, p)
		switch {
		case err != nil:
			return "", nil, err
		case converted == nil:
		case converted.Type == "text":
			texts = append(texts, converted.Text)
		default:
			media = append(media, *converted)
			texts = append(texts, "[attachment: see next message]")
		}
	}
	return strings.Join(texts, "\n"), media, nil
}

// r2cTools converts tools (function and custom ones, namespaces flattened)
// and tool_choice.
func r2cTools(in *responses.Request, out *openai.ChatRequest, p *Plan) error {
	defs, _, err := responsesToolDefs(in, p, nil)
	if err != nil {
		return err
	}
	for _, d := range defs {
		f := openai.Function{Name: d.name, Description: d.description, Parameters: d.params, Strict: d.strict}
		if f.Strict != nil && *f.Strict && !p.Caps.StrictTools {
			f.Strict = nil // schemas are still sent; strictness is the upstream's business
		}
		out.Tools = append(out.Tools, openai.Tool{Type: "function", Function: f})
	}
	c, err := responsesToolChoice(in.ToolChoice, p)
	if c == nil || err != nil {
		return err
	}
	if len(out.Tools) == 0 && c.mode != "none" {
		return nil // OpenAI rejects a tool_choice without tools
	}
	switch c.mode {
	case "tool":
		out.ToolChoice = mustJSON(map[string]any{"type": "function", "function": map[string]string{"name": c.name}})
	default:
		out.ToolChoice = mustJSON(c.mode)
	}
	return nil
}

// ResponsesBodyToChat translates a Responses request body into a Chat
// Completions body. A body that cannot be translated is a *RequestError.
func ResponsesBodyToChat(_ context.Context, body []byte, t Target) ([]byte, *Plan, error) {
	return bodyToBody(body, t, ResponsesToChat)
}
