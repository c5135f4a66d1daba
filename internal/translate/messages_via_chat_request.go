package translate

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/jsonx"
)

// MessagesToChat translates an Anthropic Messages request into a Chat
// Completions request for an OpenAI-compatible upstream serving
// upstreamModel. The Plan carries what the response side needs.
func MessagesToChat(in *anthropic.MessagesRequest, upstreamModel string, caps Caps, policy Policy, signer *Signer) (*openai.ChatRequest, *Plan, error) {
	p := &Plan{AnswerModel: upstreamModel, Stream: in.Stream, Caps: caps, policy: policy, signer: signer}
	out := &openai.ChatRequest{Model: upstreamModel, Stream: in.Stream}

	if err := m2cTopLevel(in, out, p); err != nil {
		return nil, nil, err
	}
	msgs, err := m2cMessages(in, p)
	if err != nil {
		return nil, nil, err
	}
	out.Messages = msgs
	if err := m2cTools(in, out, p); err != nil {
		return nil, nil, err
	}
	if err := m2cThinking(in, out, p); err != nil {
		return nil, nil, err
	}
	return out, p, nil
}

func m2cTopLevel(in *anthropic.MessagesRequest, out *openai.ChatRequest, p *Plan) error {
	if err := positiveBound("max_tokens", &in.MaxTokens); err != nil {
		return err
	}
	// Both sides count reasoning inside the output limit: copy as is.
	mt := in.MaxTokens
	if p.Caps.LegacyMaxTokens {
		out.MaxTokens = &mt
	} else {
		out.MaxCompletionTokens = &mt
	}
	if in.Stream && !p.Caps.NoStreamUsage {
		// Anthropic clients always get usage; ask for it.
		out.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	}
	if n := len(in.StopSequences); n > 0 {
		if n > p.Caps.StopLimit() {
			return badRequest("stop_sequences", "stop_sequences: the upstream accepts at most %d stop sequences, got %d", p.Caps.StopLimit(), n)
		}
		out.Stop = openai.Strings{Values: in.StopSequences, Set: true}
	}
	out.Temperature = in.Temperature // Anthropic's 0–1 is within OpenAI's 0–2: never rescale
	out.TopP = in.TopP
	if in.TopK != nil {
		if p.Caps.AcceptsTopK {
			out.TopK = in.TopK
		} else if err := p.advisory("top_k", "the upstream has no top_k"); err != nil {
			return err
		}
	}
	if in.Metadata != nil && in.Metadata.UserID != "" {
		out.User = in.Metadata.UserID
	}
	if !emptyJSON(in.MCPServers) {
		if err := p.contract("mcp_servers", "MCP servers run on Anthropic's side and cannot be used with this model's upstream"); err != nil {
			return err
		}
	}
	if !emptyJSON(in.Container) {
		if err := p.contract("container", "code-execution containers run on Anthropic's side and cannot be used with this model's upstream"); err != nil {
			return err
		}
	} else if len(in.Container) > 0 && string(in.Container) != "null" {
		p.drop("container") // an empty container asks for nothing
	}
	if err := anthropicAccountMembers(in, p, "this model's upstream"); err != nil {
		return err
	}
	if format := outputFormat(in); len(format) > 0 {
		rf, err := m2cResponseFormat(format)
		if err != nil {
			return err
		}
		out.ResponseFormat = rf
	}
	return unknownMembers(in.Extra, "", p)
}

// anthropicAccountMembers drops (or, strictly, refuses) the members that
// only Anthropic's service reads, and checks output_config's.
func anthropicAccountMembers(in *anthropic.MessagesRequest, p *Plan, upstream string) error {
	for _, a := range []struct {
		param   string
		present bool
	}{
		{"service_tier", in.ServiceTier != ""}, {"inference_geo", in.InferenceGeo != ""},
		{"cache_control", len(in.CacheControl) > 0}, {"context_management", len(in.ContextMgmt) > 0},
	} {
		if a.present {
			if err := p.advisory(a.param, "not supported by "+upstream); err != nil {
				return err
			}
		}
	}
	if in.OutputConfig != nil {
		return unknownMembers(in.OutputConfig.Extra, "output_config.", p)
	}
	return nil
}

// emptyJSON reports whether a raw member is absent or asks for nothing:
// null, "", [] or {}.
func emptyJSON(v jsontext.Value) bool {
	switch strings.TrimSpace(string(v)) {
	case "", "null", `""`, "[]", "{}":
		return true
	}
	return false
}

func outputFormat(in *anthropic.MessagesRequest) jsontext.Value {
	if in.OutputConfig != nil && len(in.OutputConfig.Format) > 0 {
		return in.OutputConfig.Format
	}
	return in.OutputFormat
}

// m2cResponseFormat maps output_config.format {type: json_schema, schema}
// to response_format.
func m2cResponseFormat(format jsontext.Value) (jsontext.Value, error) {
	var f struct {
		Type   string         `json:"type"`
		Schema jsontext.Value `json:"schema"`
	}
	if err := jsonx.Unmarshal(format, &f); err != nil || f.Type != "json_schema" || len(f.Schema) == 0 {
		return nil, badRequest("output_config.format", "output_config.format: expected {\"type\":\"json_schema\",\"schema\":{…}}")
	}
	return jsonx.Marshal(map[string]any{
		"type":        "json_schema",
		"json_schema": map[string]any{"name": "output", "schema": f.Schema, "strict": true},
	})
}

// knownMembers are request members of current Anthropic clients that have
// no Chat Completions counterpart, with why they are not sent. They are
// advisory: dropped and reported (refused under PolicyStrict).
var knownMembers = map[string]string{
	"speed":                     "fast mode is an Anthropic inference option",
	"diagnostics":               "prompt-cache diagnostics come from Anthropic's cache",
	"fallbacks":                 "fallback models are chosen by tollgate's routing, not by the upstream",
	"fallback_credit_token":     "fallback models are chosen by tollgate's routing, not by the upstream",
	"compaction":                "server-side compaction runs on Anthropic's side",
	"output_config.task_budget": "task budgets are an Anthropic agent-loop option",
}

// transportMembers name the API version and beta features in the body
// (the Bedrock and Vertex spellings, or SDK beta paths): like the
// anthropic-beta header they are dropped and reported, never refused.
var transportMembers = map[string]bool{"anthropic_version": true, "anthropic_beta": true, "betas": true}

// unknownMembers reports members (of the request, or of the object whose
// path is prefix) that the translator does not carry.
func unknownMembers(extra jsontext.Value, prefix string, p *Plan) error {
	return eachMember(extra, func(k string) error {
		k = prefix + k
		if transportMembers[k] {
			p.drop(k)
			return nil
		}
		why, ok := knownMembers[k]
		if !ok {
			why = "unknown parameter, not translated"
		}
		return p.advisory(k, why)
	})
}

// eachMember calls f with the names of the members in extra (members a
// wire type does not name), in order, until f fails.
func eachMember(extra jsontext.Value, f func(name string) error) error {
	if len(extra) == 0 {
		return nil
	}
	var m map[string]jsontext.Value
	if err := jsonx.Unmarshal(extra, &m); err != nil {
		return nil
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if err := f(k); err != nil {
			return err
		}
	}
	return nil
}

// m2cMessages converts system and messages (§1.3).
func m2cMessages(in *anthropic.MessagesRequest, p *Plan) ([]openai.ChatMessage, error) {
	var out []openai.ChatMessage
	if sys := in.System.Blocks; len(sys) > 0 {
		var texts []string
		for _, b := range sys {
			if len(b.CacheControl) > 0 {
				if err := p.advisory("cache_control", "the upstream has no prompt-cache breakpoints"); err != nil {
					return nil, err
				}
			}
			if b.Text != "" {
				texts = append(texts, b.Text)
			}
		}
		if len(texts) > 0 {
			// Separate blocks stay separate paragraphs rather than glued sentences.
			out = append(out, openai.ChatMessage{Role: "system", Content: textContent(strings.Join(texts, "\n\n"))})
		}
	}
	// System messages that arrive while an assistant turn waits for its
	// tool results: OpenAI needs the tool messages right after the calls,
	// so these follow the results.
	var held []openai.ChatMessage
	first, firstBlock, err := compactedFrom(in.Messages)
	if err != nil {
		return nil, err
	}
	for i, m := range in.Messages {
		if i < first {
			continue
		}
		if i == first {
			m.Content.Blocks = m.Content.Blocks[firstBlock:]
		}
		if err := messageMembers(i, m, p); err != nil {
			return nil, err
		}
		var err error
		switch m.Role {
		case "user":
			out, err = m2cUserMessage(out, i, m.Content.Blocks, held, p)
			held = nil
		case "assistant":
			out = append(out, held...)
			held = nil
			off := 0 // the first blocks of a compacted message were left out
			if i == first {
				off = firstBlock
			}
			out, err = m2cAssistantMessage(out, i, off, m.Content.Blocks, p)
		case "system":
			var sm *openai.ChatMessage
			sm, err = m2cSystemMessage(in.Messages, i, p)
			switch {
			case sm == nil:
			case awaitingToolResults(out):
				held = append(held, *sm)
			default:
				out = append(out, *sm)
			}
		default:
			err = badRequest(fmt.Sprintf("messages[%d].role", i), "messages[%d].role: must be user, assistant or system, got %q", i, m.Role)
		}
		if err != nil {
			return nil, err
		}
	}
	out = append(out, held...)
	if n := len(in.Messages); n > 0 && in.Messages[n-1].Role == "assistant" {
		// Chat Completions cannot continue a prefilled answer; the turn is
		// sent as history.
		p.drop("assistant_prefill")
	}
	if p.Caps.LeadingSystemOnly {
		out = foldSystemMessages(out)
	}
	return out, nil
}

// compactedFrom finds where the conversation starts: at its last
// compaction block, whose summary replaces everything before it (as
// Anthropic does), or at the beginning. A compaction whose summary is
// encrypted only cannot be read by another model and is refused.
func compactedFrom(msgs []anthropic.Message) (int, int, error) {
	for i := len(msgs) - 1; i >= 0; i-- {
		blocks := msgs[i].Content.Blocks
		for j := len(blocks) - 1; j >= 0; j-- {
			b := blocks[j]
			if b.Type != "compaction" || msgs[i].Role != "assistant" {
				continue
			}
			if b.Content == nil || len(b.Content.Blocks) == 0 {
				path := fmt.Sprintf("messages[%d].content[%d]", i, j)
				return 0, 0, badRequest(path, "%s: a compaction block without its summary text cannot be sent to this model's upstream", path)
			}
			return i, j, nil
		}
	}
	return 0, 0, nil
}

func textContent(s string) openai.MessageContent {
	return openai.MessageContent{IsString: true, Text: s}
}

// m2cUserMessage converts a user turn: its tool results first, then the
// held system messages, then the rest of its content.
func m2cUserMessage(out []openai.ChatMessage, i int, blocks []anthropic.Block, held []openai.ChatMessage, p *Plan) ([]openai.ChatMessage, error) {
	// Tool results first: OpenAI needs tool messages right after the
	// assistant message that made the calls.
	var carried []openai.Part // images from tool results, sent in one user message after them
	for j, b := range blocks {
		if b.Type != "tool_result" {
			continue
		}
		path := fmt.Sprintf("messages[%d].content[%d]", i, j)
		if err := requiredCallID(path+".tool_use_id", b.ToolUseID, "of the tool_use block this result answers"); err != nil {
			return nil, err
		}
		text, media, err := toolResultContent(b, path, p)
		if err != nil {
			return nil, err
		}
		carried = append(carried, media...)
		out = append(out, openai.ChatMessage{Role: "tool", ToolCallID: b.ToolUseID, Content: textContent(text)})
	}
	if len(carried) > 0 {
		out = appendUser(out, carried)
	}
	out = append(out, held...)
	var parts []openai.Part
	for j, b := range blocks {
		path := func() string { return fmt.Sprintf("messages[%d].content[%d]", i, j) } // only errors need it
		if len(b.CacheControl) > 0 {
			if err := p.advisory("cache_control", "the upstream has no prompt-cache breakpoints"); err != nil {
				return nil, err
			}
		}
		switch b.Type {
		case "tool_result":
		case "text":
			if b.Text != "" {
				parts = append(parts, openai.Part{Type: "text", Text: b.Text})
			}
		case "image", "document", "search_result":
			more, err := blockParts(b, path(), p)
			if err != nil {
				return nil, err
			}
			parts = append(parts, more...)
		case "container_upload":
			if err := p.contract(path(), "files uploaded to Anthropic's code-execution container cannot be used with this model's upstream"); err != nil {
				return nil, err
			}
		case "tool_addition", "tool_removal":
			if err := p.contract(path(), toolChangeRefusal); err != nil {
				return nil, err
			}
		default:
			if err := p.contract(path(), fmt.Sprintf("content blocks of type %q cannot be sent to this model's upstream", b.Type)); err != nil {
				return nil, err
			}
		}
	}
	if len(parts) > 0 {
		out = appendUser(out, parts)
	}
	return out, nil
}

// toolChangeRefusal is why mid-conversation tool changes are refused: Chat
// Completions tools apply to the whole request.
const toolChangeRefusal = "mid-conversation tool changes (tool_addition, tool_removal) cannot be expressed to this model's upstream"

// appendUser adds parts as a user message, merged into a directly
// preceding user message (some chat templates require alternation).
func appendUser(out []openai.ChatMessage, parts []openai.Part) []openai.ChatMessage {
	if n := len(out); n > 0 && out[n-1].Role == "user" {
		prev := &out[n-1]
		if prev.Content.IsString {
			prev.Content = openai.MessageContent{Parts: []openai.Part{{Type: "text", Text: prev.Content.Text}}}
		}
		prev.Content.Parts = append(prev.Content.Parts, parts...)
		return out
	}
	if len(parts) == 1 && parts[0].Type == "text" {
		return append(out, openai.ChatMessage{Role: "user", Content: textContent(parts[0].Text)})
	}
	return append(out, openai.ChatMessage{Role: "user", Content: openai.MessageContent{Parts: parts}})
}

// toolResultContent flattens a tool_result into the text of a tool message.
// Images and PDFs cannot travel in a tool message, so they come back as
// parts for a user message that follows, with a placeholder in the text.
func toolResultContent(b anthropic.Block, path string, p *Plan) (string, []openai.Part, error) {
	var texts []string
	var media []openai.Part
	if b.Content != nil {
		for k, c := range b.Content.Blocks {
			cpath := pathAt(path, "content", k)
			switch c.Type {
			case "text":
				texts = append(texts, c.Text)
			case "image", "document", "search_result":
				parts, err := blockParts(c, cpath, p)
				if err != nil {
					return "", nil, err
				}
				for _, part := range parts {
					switch part.Type {
					case "text":
						texts = append(texts, part.Text)
					case "file":
						media = append(media, part)
						texts = append(texts, "[document omitted: see next message]")
					default:
						media = append(media, part)
						texts = append(texts, "[image omitted: see next message]")
					}
				}
			case "tool_reference":
				// Loads a deferred tool; every tool is sent upstream already.
				if err := p.advisory("tool_reference", "the upstream gets every tool from the start"); err != nil {
					return "", nil, err
				}
			default:
				if err := p.contract(path, fmt.Sprintf("tool results with %q content cannot be sent to this model's upstream", c.Type)); err != nil {
					return "", nil, err
				}
			}
		}
	}
	text := strings.Join(texts, "\n")
	if b.IsError && !strings.HasPrefix(text, "Error") {
		// OpenAI has no error flag on tool results: say it in the text.
		text = "Error: " + text
	}
	return text, media, nil
}

// blockParts converts an image, document or search_result block to
// content parts.
func blockParts(b anthropic.Block, path string, p *Plan) ([]openai.Part, error) {
	if b.Type != "image" && citationsOn(b.Citations) {
		// The answer would carry no citations blocks.
		if err := p.advisory("citations", "the upstream does not cite sources"); err != nil {
			return nil, err
		}
	}
	s := b.Source
	switch {
	case b.Type == "search_result":
		if text := searchResultText(b); text != "" {
			return []openai.Part{{Type: "text", Text: text}}, nil
		}
		return nil, nil
	case s == nil:
		return nil, badRequest(path, "%s: %s block without a source", path, b.Type)
	case b.Type == "image" && s.Type == "base64":
		return []openai.Part{{Type: "image_url", ImageURL: &openai.ImageURL{URL: "data:" + s.MediaType + ";base64," + s.Data}}}, nil
	case b.Type == "image" && s.Type == "url":
		return []openai.Part{{Type: "image_url", ImageURL: &openai.ImageURL{URL: s.URL}}}, nil
	case b.Type == "document" && s.Type == "text":
		if s.Data == "" {
			return nil, nil
		}
		return []openai.Part{{Type: "text", Text: s.Data}}, nil
	case b.Type == "document" && s.Type == "content":
		// A document made of blocks: its text and images, in order.
		var out []openai.Part
		if s.Content != nil {
			for k, c := range s.Content.Blocks {
				cpath := fmt.Sprintf("%s.source.content[%d]", path, k)
				switch c.Type {
				case "text":
					if c.Text != "" {
						out = append(out, openai.Part{Type: "text", Text: c.Text})
					}
				case "image":
					more, err := blockParts(c, cpath, p)
					if err != nil {
						return nil, err
					}
					out = append(out, more...)
				default:
					if err := p.contract(cpath, fmt.Sprintf("document content of type %q cannot be sent to this model's upstream", c.Type)); err != nil {
						return nil, err
					}
				}
			}
		}
		return out, nil
	case b.Type == "document" && s.Type == "base64" && s.MediaType == "application/pdf":
		if !p.Caps.FileParts {
			return nil, p.contract(path, "PDF documents are not supported by this model's upstream")
		}
		name := b.Title
		if name == "" {
			name = "document.pdf"
		}
		return []openai.Part{{Type: "file", File: &openai.File{Filename: name, FileData: "data:application/pdf;base64," + s.Data}}}, nil
	case s.Type == "file":
		return nil, p.contract(path, fmt.Sprintf("%s blocks from the Files API (file_id) refer to Anthropic's file store and cannot be sent to this model's upstream", b.Type))
	default:
		return nil, p.contract(path, fmt.Sprintf("%s sources of type %q cannot be sent to this model's upstream", b.Type, s.Type))
	}
}

// citationsOn reports whether a document or search_result asks for
// citations ({"enabled": true}).
func citationsOn(c jsontext.Value) bool {
	var v struct {
		Enabled bool `json:"enabled"`
	}
	return len(c) > 0 && c.Kind() == '{' && jsonx.Unmarshal(c, &v) == nil && v.Enabled
}

// searchResultText renders a search_result as text: its title and source
// on the first lines, then its content.
func searchResultText(b anthropic.Block) string {
	var head []string
	if b.Title != "" {
		head = append(head, b.Title)
	}
	if b.Source != nil && b.Source.Ref != "" {
		head = append(head, b.Source.Ref)
	}
	var body []string
	if b.Content != nil {
		for _, c := range b.Content.Blocks {
			if c.Type == "text" && c.Text != "" {
				body = append(body, c.Text)
			}
		}
	}
	parts := slices.DeleteFunc([]string{strings.Join(head, "\n"), strings.Join(body, "\n\n")}, func(s string) bool { return s == "" })
	return strings.Join(parts, "\n\n")
}

// m2cAssistantMessage converts an assistant turn whose blocks start at
// index off of messages[i].content.
func m2cAssistantMessage(out []openai.ChatMessage, i, off int, blocks []anthropic.Block, p *Plan) ([]openai.ChatMessage, error) {
	var text strings.Builder
	var reasoning strings.Builder
	m := openai.ChatMessage{Role: "assistant"}
	for j, b := range blocks {
		switch b.Type {
		case "text":
			text.WriteString(b.Text) // joined with "": the model's own bytes
		case "tool_use":
			idPath := fmt.Sprintf("messages[%d].content[%d].id", i, off+j)
			if err := requiredCallID(idPath, b.ID, "that the tool_result answering this call names"); err != nil {
				return nil, err
			}
			args := string(b.Input)
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			m.ToolCalls = append(m.ToolCalls, openai.ToolCall{
				ID: b.ID, Type: "function",
				Function: openai.FunctionCall{Name: p.upstreamToolName(b.Name), Arguments: args},
			})
		case "thinking":
			reasoning.WriteString(b.Thinking)
		case "compaction":
			// The summary that stands for the conversation before it
			// (m2cMessages left that out).
			if b.Content != nil {
				for _, c := range b.Content.Blocks {
					text.WriteString(c.Text)
				}
			}
		case "redacted_thinking", "server_tool_use", "web_search_tool_result", "web_fetch_tool_result",
			"code_execution_tool_result", "bash_code_execution_tool_result", "text_editor_code_execution_tool_result",
			"tool_search_tool_result", "advisor_tool_result", "mcp_tool_use", "mcp_tool_result", "mcp_tool_listing",
			"container_upload", "fallback":
			// Produced and consumed on Anthropic's side: nothing upstream can use.
			p.drop(b.Type)
		case "tool_addition", "tool_removal":
			if err := p.contract(pathAt("", "messages", i), toolChangeRefusal); err != nil {
				return nil, err
			}
		default:
			if err := p.contract(pathAt("", "messages", i), fmt.Sprintf("assistant content blocks of type %q cannot be sent to this model's upstream", b.Type)); err != nil {
				return nil, err
			}
		}
	}
	return appendAssistant(out, text.String(), reasoning.String(), m.ToolCalls, p), nil
}

// appendAssistant adds an assistant message of text (null when there is
// none), tool calls, and reasoning for the upstreams that want it back;
// merged into a directly preceding assistant message (after that
// message's own), and left out when it has nothing.
func appendAssistant(out []openai.ChatMessage, text, reasoning string, calls []openai.ToolCall, p *Plan) []openai.ChatMessage {
	m := openai.ChatMessage{Role: "assistant", ToolCalls: calls}
	if text != "" {
		m.Content = textContent(text)
	} else {
		m.Content = openai.MessageContent{Null: true} // never "": it would come back as an empty text block
	}
	if reasoning != "" && p.Caps.Reasoning == ReasoningDeepSeek {
		// DeepSeek's thinking mode refuses tool-call turns without their reasoning.
		m.ReasoningContent = reasoning
	}
	if text == "" && len(m.ToolCalls) == 0 && m.ReasoningContent == "" {
		return out
	}
	if n := len(out); n > 0 && out[n-1].Role == "assistant" {
		prev := &out[n-1]
		if !m.Content.Null {
			if prev.Content.Null {
				prev.Content = m.Content
			} else {
				prev.Content.Text += m.Content.Text
			}
		}
		prev.ToolCalls = append(prev.ToolCalls, m.ToolCalls...)
		prev.ReasoningContent += m.ReasoningContent
		return out
	}
	return append(out, m)
}

// m2cTools converts tools and tool_choice (§1.5).
func m2cTools(in *anthropic.MessagesRequest, out *openai.ChatRequest, p *Plan) error {
	var unsent []string // names of tools the upstream does not get
	for i, t := range in.Tools {
		path := pathAt("", "tools", i)
		if t.Type == "" || t.Type == "custom" {
			if err := requiredToolName(path+".name", t.Name); err != nil {
				return err
			}
		}
		def, why := functionFor(t)
		if def == nil {
			unsent = append(unsent, t.Name)
			if err := p.advisory(path, why); err != nil {
				return err
			}
			continue
		}
		if len(t.AllowedCallers) > 0 && !slices.Contains(t.AllowedCallers, "direct") {
			unsent = append(unsent, t.Name)
			if err := p.advisory(path, "a tool callable only from Anthropic's code execution cannot be used with this model's upstream"); err != nil {
				return err
			}
			continue
		}
		for _, h := range []struct {
			param, why string
			present    bool
		}{
			{"cache_control", "the upstream has no prompt-cache breakpoints", len(t.CacheControl) > 0},
			{"defer_loading", "the upstream gets every tool from the start", t.DeferLoading},
			{"input_examples", "the upstream has no tool input examples", !emptyJSON(t.InputExamples)},
		} {
			if h.present {
				if err := p.advisory(h.param, h.why); err != nil {
					return err
				}
			}
		}
		def.Name = p.upstreamToolName(def.Name)
		out.Tools = append(out.Tools, openai.Tool{Type: "function", Function: *def})
	}
	tc := in.ToolChoice
	if tc == nil {
		return nil
	}
	var choice string
	switch tc.Type {
	case "auto", "":
		choice = `"auto"`
	case "any":
		choice = `"required"`
	case "none":
		choice = `"none"`
	case "tool":
		if err := requiredToolName("tool_choice.name", tc.Name); err != nil {
			return err
		}
		if slices.Contains(unsent, tc.Name) {
			return p.contract("tool_choice", fmt.Sprintf("forced tool %q cannot be used with this model's upstream", tc.Name))
		}
		name, _ := jsonx.Marshal(p.upstreamToolName(tc.Name))
		choice = `{"type":"function","function":{"name":` + string(name) + `}}`
	default:
		return badRequest("tool_choice.type", "tool_choice.type: unknown value %q", tc.Type)
	}
	if len(out.Tools) == 0 && tc.Type != "none" {
		return nil // OpenAI rejects a tool_choice without tools
	}
	out.ToolChoice = jsontext.Value(choice)
	if tc.DisableParallelToolUse && len(out.Tools) > 0 {
		f := false
		out.ParallelToolCalls = &f
	}
	return nil
}

// m2cThinking maps thinking and output_config.effort to the upstream's
// reasoning dialect (§1.8.2).
func m2cThinking(in *anthropic.MessagesRequest, out *openai.ChatRequest, p *Plan) error {
	effort := ""
	if in.OutputConfig != nil {
		effort = in.OutputConfig.Effort
	}
	t := in.Thinking
	switch {
	case t == nil && effort == "":
		return nil
	case t != nil && t.Type == "disabled":
		if p.Caps.Reasoning == ReasoningDeepSeek {
			out.Thinking = jsontext.Value(`{"type":"disabled"}`)
			return nil
		}
		if p.Caps.AcceptsReasoningNone && p.Caps.Reasoning == ReasoningOpenAI {
			out.ReasoningEffort = "none"
		}
		return nil
	case t != nil && t.Type == "enabled":
		effort = budgetEffort(t.BudgetTokens)
	case t != nil && t.Type == "adaptive" && effort == "":
		if p.Caps.Reasoning == ReasoningDeepSeek {
			out.Thinking = jsontext.Value(`{"type":"enabled"}`)
		}
		return nil // the upstream's default effort
	case t != nil && t.Type != "adaptive":
		return badRequest("thinking.type", "thinking.type: unknown value %q", t.Type)
	}
	return chatEffort(out, effort, "thinking", p)
}

// chatEffort asks an OpenAI-compatible upstream for a reasoning effort in
// its own dialect; param names the client's member when the upstream has
// no reasoning control.
func chatEffort(out *openai.ChatRequest, effort, param string, p *Plan) error {
	if effort == "max" || effort == "xhigh" {
		effort = "high"
		if p.Caps.AcceptsXHigh {
			effort = "xhigh"
		}
	}
	switch p.Caps.Reasoning {
	case ReasoningOpenAI:
		out.ReasoningEffort = effort
	case ReasoningDeepSeek:
		out.Thinking = jsontext.Value(`{"type":"enabled"}`)
	case ReasoningOpenRouter:
		out.Reasoning, _ = jsonx.Marshal(map[string]string{"effort": effort})
	case ReasoningQwen:
		on := true
		out.EnableThinking = &on
	case ReasoningNone:
		return p.advisory(param, "this model's upstream has no reasoning control")
	}
	return nil
}

// budgetEffort buckets a thinking budget into an effort level; the buckets
// invert the budgets chosen for reasoning_effort (chat_via_messages_request.go).
func budgetEffort(budget int64) string {
	switch {
	case budget <= 1024:
		return "low"
	case budget <= 8192:
		return "medium"
	case budget <= 24576:
		return "high"
	default:
		return "xhigh"
	}
}

// MessagesBodyToChat translates a Messages request body into a Chat
// Completions body. A body that cannot be translated is a *RequestError.
func MessagesBodyToChat(_ context.Context, body []byte, t Target) ([]byte, *Plan, error) {
	return bodyToBody(body, t, MessagesToChat)
}
