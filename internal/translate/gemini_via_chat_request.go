package translate

import (
	"context"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/gemini"
	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/jsonx"
)

// GeminiBodyToChat translates a Gemini generateContent body (the model
// and whether to stream are in t, from the URL) into a Chat Completions
// body. A body that cannot be translated is a *RequestError; when ctx
// ends first, the translation stops with ctx's error.
func GeminiBodyToChat(ctx context.Context, body []byte, t Target) ([]byte, *Plan, error) {
	return geminiBodyTo(ctx, body, t, geminiToChat)
}

const chatUpstream = "this model's upstream"

// geminiToChat translates a Gemini client's request for an
// OpenAI-compatible upstream: turns become messages, function calls an
// assistant message's tool calls and their responses tool messages;
// reasoning tollgate sealed into a thought signature goes back as
// reasoning_content to the upstreams that want it back (DeepSeek).
func geminiToChat(ctx context.Context, in *gemini.Request, t Target) (*openai.ChatRequest, *Plan, error) {
	p := newGeminiPlan(t)
	r, err := p.readGemini(ctx, in, chatUpstream)
	if err != nil {
		return nil, nil, err
	}
	out := &openai.ChatRequest{Model: t.Model, Stream: t.Stream}
	if t.Stream && !p.Caps.NoStreamUsage {
		// Gemini clients always get usage; ask for it.
		out.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	}
	g := &r.gen
	if g.maxOut != nil {
		if p.Caps.LegacyMaxTokens {
			out.MaxTokens = g.maxOut
		} else {
			out.MaxCompletionTokens = g.maxOut
		}
	}
	out.Temperature, out.TopP = g.temperature, g.topP
	if p.Caps.AcceptsTopK {
		out.TopK = g.topK
	} else if err := geminiAdvisory(g, r, p, chatUpstream, "topK"); err != nil {
		return nil, nil, err
	}
	if err := geminiAdvisory(g, r, p, chatUpstream, "labels"); err != nil {
		return nil, nil, err
	}
	if n := len(g.stop); n > 0 {
		if n > p.Caps.StopLimit() {
			return nil, nil, badRequest("generationConfig.stopSequences", "generationConfig.stopSequences: the upstream accepts at most %d stop sequences, got %d", p.Caps.StopLimit(), n)
		}
		out.Stop = openai.Strings{Values: g.stop, Set: true}
	}
	for _, m := range []struct {
		key string
		v   any
		set bool
	}{
		{"presence_penalty", g.presence, g.presence != nil},
		{"frequency_penalty", g.frequency, g.frequency != nil},
		{"seed", g.seed, g.seed != nil},
	} {
		if m.set {
			out.Extra = appendMember(out.Extra, m.key, mustJSON(m.v))
		}
	}
	if len(r.system) > 0 {
		out.Messages = append(out.Messages, openai.ChatMessage{Role: "system", Content: textContent(strings.Join(r.system, "\n\n"))})
	}
	if err := g2cTurns(r.turns, out, p); err != nil {
		return nil, nil, err
	}
	if err := g2cTools(r, out, p); err != nil {
		return nil, nil, err
	}
	switch g.format {
	case "json_object":
		out.ResponseFormat = jsontext.Value(`{"type":"json_object"}`)
	case "json_schema":
		out.ResponseFormat = mustJSON(map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "output", "schema": g.schema}})
	}
	if err := g2cThinking(g.thinking, out, p); err != nil {
		return nil, nil, err
	}
	return out, p, nil
}

// g2cTurns converts the conversation. A user turn's function responses
// come first, as tool messages right after the calls; a model turn is one
// assistant message, its calls that message's tool calls.
func g2cTurns(turns []gTurn, out *openai.ChatRequest, p *Plan) error {
	var asst g2cAssistant
	for _, t := range turns {
		if t.model {
			asst.add(t, p)
			continue
		}
		var parts []openai.Part
		for _, it := range t.items {
			switch it.kind {
			case gResult:
				out.Messages = asst.flush(out.Messages, p)
				text := it.text
				if it.isError && !strings.HasPrefix(text, "Error") {
					text = "Error: " + text // Chat Completions has no error flag
				}
				out.Messages = append(out.Messages, openai.ChatMessage{Role: "tool", ToolCallID: it.id, Content: textContent(text)})
				// Tool messages carry text only: the media the function
				// returned follow in the user message after them.
				for _, m := range it.media {
					part, err := g2cMedia(m, p)
					if err != nil {
						return err
					}
					if part != nil {
						parts = append(parts, *part)
					}
				}
			case gText:
				parts = append(parts, openai.Part{Type: "text", Text: it.text})
			case gMedia:
				part, err := g2cMedia(it, p)
				if err != nil {
					return err
				}
				if part != nil {
					parts = append(parts, *part)
				}
			}
		}
		if len(parts) > 0 {
			out.Messages = asst.flush(out.Messages, p)
		}
		switch {
		case len(parts) == 1 && parts[0].Type == "text":
			out.Messages = append(out.Messages, openai.ChatMessage{Role: "user", Content: textContent(parts[0].Text)})
		case len(parts) > 0:
			out.Messages = append(out.Messages, openai.ChatMessage{Role: "user", Content: openai.MessageContent{Parts: parts}})
		}
	}
	out.Messages = asst.flush(out.Messages, p)
	if n := len(out.Messages); n == 0 || n == 1 && out.Messages[0].Role == "system" {
		return badRequest("contents", "contents: at least one turn with content is required")
	}
	return nil
}

// g2cAssistant gathers model turns into one assistant message: their
// text joined as the model wrote it, their calls, and the reasoning
// sealed in their signatures for upstreams that want it back.
// Consecutive model turns make one message, gathered here before it is
// written: merged into the message one turn at a time, the text would be
// copied again at every turn.
type g2cAssistant struct {
	text, reasoning strings.Builder
	calls           []openai.ToolCall
}

func (a *g2cAssistant) add(t gTurn, p *Plan) {
	for _, it := range t.items {
		switch it.kind {
		case gText:
			a.text.WriteString(it.text)
		case gCall:
			a.calls = append(a.calls, openai.ToolCall{ID: it.id, Type: "function",
				Function: openai.FunctionCall{Name: p.upstreamToolName(it.name), Arguments: string(it.args)}})
		case gReasoning:
			a.reasoning.WriteString(sealedText(it.sealed))
		}
	}
}

// flush writes the message gathered, if it has anything, before the
// messages that follow it.
func (a *g2cAssistant) flush(msgs []openai.ChatMessage, p *Plan) []openai.ChatMessage {
	msgs = appendAssistant(msgs, a.text.String(), a.reasoning.String(), a.calls, p)
	a.text.Reset()
	a.reasoning.Reset()
	a.calls = nil
	return msgs
}

// sealedText is the reasoning text sealed reasoning holds: its text, or
// the text of Claude's thinking blocks.
func sealedText(sr sealedReasoning) string {
	if sr.Text != "" {
		return sr.Text
	}
	var blocks []anthropic.Block
	if len(sr.Blocks) == 0 || jsonx.Unmarshal(sr.Blocks, &blocks) != nil {
		return ""
	}
	var b strings.Builder
	for _, tb := range blocks {
		b.WriteString(tb.Thinking)
	}
	return b.String()
}

// g2cMedia converts inline or referenced data: images as image_url parts,
// PDFs as file parts where the upstream takes them.
func g2cMedia(it gItem, p *Plan) (*openai.Part, error) {
	mt := geminiMediaType(it.part)
	d, f := it.part.InlineData, it.part.FileData
	switch {
	case f != nil && !webURL(f.FileURI):
		return nil, p.contract(it.path, googleFileRefusal)
	case strings.HasPrefix(mt, "image/") && d != nil:
		return &openai.Part{Type: "image_url", ImageURL: &openai.ImageURL{URL: "data:" + mt + ";base64," + d.Data}}, nil
	case strings.HasPrefix(mt, "image/"):
		return &openai.Part{Type: "image_url", ImageURL: &openai.ImageURL{URL: f.FileURI}}, nil
	case mt == "application/pdf" && d != nil && p.Caps.FileParts:
		return &openai.Part{Type: "file", File: &openai.File{FileData: "data:application/pdf;base64," + d.Data, Filename: "document.pdf"}}, nil
	}
	return nil, p.contract(it.path, "media of type "+quoteType(mt)+" cannot be sent to this model's upstream")
}

// g2cTools converts function declarations and functionCallingConfig;
// the tools Gemini runs itself have no counterpart in Chat Completions.
func g2cTools(r *gReq, out *openai.ChatRequest, p *Plan) error {
	for _, f := range r.funcs {
		if r.choice.allowed(f.name) {
			out.Tools = append(out.Tools, openai.Tool{Type: "function", Function: openai.Function{Name: p.upstreamToolName(f.name),
				Description: f.description, Parameters: inputSchema(f.schema)}})
		}
	}
	for _, s := range r.server {
		if err := p.advisoryAt(s.path, s.name, "Gemini's "+s.name+" tool has no counterpart on "+chatUpstream); err != nil {
			return err
		}
	}
	c := r.choice
	if c == nil || len(out.Tools) == 0 && c.mode != "none" {
		return nil // OpenAI refuses a tool_choice without tools
	}
	switch {
	case c.mode == "none":
		out.ToolChoice = jsontext.Value(`"none"`)
	case c.forced() != "":
		out.ToolChoice = mustJSON(map[string]any{"type": "function", "function": map[string]string{"name": p.upstreamToolName(c.forced())}})
	case c.mode == "any":
		out.ToolChoice = jsontext.Value(`"required"`)
	default:
		out.ToolChoice = jsontext.Value(`"auto"`)
	}
	return nil
}

// g2cThinking maps thinkingConfig to the upstream's reasoning dialect: a
// level as the effort, a budget as the effort it buckets into, -1 or
// includeThoughts alone as the upstream's default, 0 as off where the
// upstream can turn reasoning off.
func g2cThinking(t gThinking, out *openai.ChatRequest, p *Plan) error {
	switch {
	case t.param == "":
		return nil
	case t.off:
		if p.Caps.Reasoning == ReasoningDeepSeek {
			out.Thinking = jsontext.Value(`{"type":"disabled"}`)
		} else if p.Caps.AcceptsReasoningNone && p.Caps.Reasoning == ReasoningOpenAI {
			out.ReasoningEffort = "none"
		}
		return nil
	case t.dynamic:
		if p.Caps.Reasoning == ReasoningDeepSeek {
			out.Thinking = jsontext.Value(`{"type":"enabled"}`)
		}
		return nil // the upstream's default effort
	}
	return chatEffort(out, t.effort, t.param, p)
}
