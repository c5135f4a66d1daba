package translate

import (
	"context"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/gemini"
	"github.com/tollgate/tollgate/internal/jsonx"
)

// GeminiBodyToMessages translates a Gemini generateContent body (the
// model and whether to stream are in t, from the URL) into a Messages
// body. A body that cannot be translated is a *RequestError; when ctx
// ends first, the translation stops with ctx's error.
func GeminiBodyToMessages(ctx context.Context, body []byte, t Target) ([]byte, *Plan, error) {
	return geminiBodyTo(ctx, body, t, geminiToMessages)
}

const anthropicUpstream = "an Anthropic model"

// geminiToMessages translates a Gemini client's request for an Anthropic
// upstream: turns become messages, function calls tool_use blocks and
// their responses tool_result blocks; a thought signature tollgate sealed
// gives back Claude's thinking blocks, byte for byte, where they stood.
func geminiToMessages(ctx context.Context, in *gemini.Request, t Target) (*anthropic.MessagesRequest, *Plan, error) {
	p := newGeminiPlan(t)
	r, err := p.readGemini(ctx, in, anthropicUpstream)
	if err != nil {
		return nil, nil, err
	}
	out := &anthropic.MessagesRequest{Model: t.Model, Stream: t.Stream}
	g := &r.gen
	if out.MaxTokens, err = anthropicMaxTokens("generationConfig.maxOutputTokens", g.maxOut, t.Stream, p); err != nil {
		return nil, nil, err
	}
	if err := anthropicSampling(g.temperature, g.topP, out, p); err != nil {
		return nil, nil, err
	}
	out.TopK = g.topK
	for _, s := range g.stop {
		if strings.TrimSpace(s) == "" {
			p.drop("generationConfig.stopSequences") // Anthropic refuses white-space stop sequences
			continue
		}
		out.StopSequences = append(out.StopSequences, s)
	}
	if err := geminiAdvisory(g, r, p, anthropicUpstream, "presencePenalty", "frequencyPenalty", "seed", "labels"); err != nil {
		return nil, nil, err
	}
	for _, s := range r.system {
		out.System.Blocks = append(out.System.Blocks, anthropic.Block{Type: "text", Text: s})
	}
	if err := g2mTurns(r.turns, out, p); err != nil {
		return nil, nil, err
	}
	if err := g2mTools(r, out, p); err != nil {
		return nil, nil, err
	}
	switch g.format {
	case "json_object":
		anthropicFormat(jsontext.Value(`{"type":"object","additionalProperties":true,"properties":{}}`), false, out, p)
	case "json_schema":
		anthropicFormat(inputSchema(g.schema), true, out, p)
	}
	if err := g2mThinking(g.thinking, out, p); err != nil {
		return nil, nil, err
	}
	declareReferencedTools(out)
	return out, p, nil
}

// geminiAdvisory drops (and reports) the named generationConfig members
// and labels when the request has them: the upstream has no such setting.
func geminiAdvisory(g *gGen, r *gReq, p *Plan, upstream string, names ...string) error {
	for _, n := range names {
		present := false
		switch n {
		case "presencePenalty":
			present = g.presence != nil
		case "frequencyPenalty":
			present = g.frequency != nil
		case "seed":
			present = g.seed != nil
		case "topK":
			present = g.topK != nil
		case "stopSequences":
			present = len(g.stop) > 0
		case "labels":
			if len(r.labels) > 0 {
				if err := p.advisory("labels", upstream+" has no billing labels"); err != nil {
					return err
				}
			}
			continue
		}
		if present {
			if err := p.advisory("generationConfig."+n, upstream+" has no such setting"); err != nil {
				return err
			}
		}
	}
	return nil
}

// g2mTurns converts the conversation.
func g2mTurns(turns []gTurn, out *anthropic.MessagesRequest, p *Plan) error {
	var msgs []anthropic.Message
	for _, t := range turns {
		var blocks []anthropic.Block
		for _, it := range t.items {
			switch it.kind {
			case gText:
				blocks = append(blocks, anthropic.Block{Type: "text", Text: it.text})
			case gMedia:
				b, err := g2mMedia(it, p)
				if err != nil {
					return err
				}
				if b != nil {
					blocks = append(blocks, *b)
				}
			case gCall:
				blocks = append(blocks, anthropic.Block{Type: "tool_use", ID: sanitizeID(it.id), Name: p.upstreamToolName(it.name), Input: it.args})
			case gResult:
				res := anthropic.Block{Type: "tool_result", ToolUseID: sanitizeID(it.id), IsError: it.isError}
				if it.text != "" {
					res.Content = &anthropic.Content{Blocks: []anthropic.Block{{Type: "text", Text: it.text}}, FromString: len(it.media) == 0}
				}
				for _, m := range it.media {
					b, err := g2mMedia(m, p)
					if err != nil {
						return err
					}
					if b != nil {
						if res.Content == nil {
							res.Content = &anthropic.Content{}
						}
						res.Content.Blocks = append(res.Content.Blocks, *b)
					}
				}
				blocks = append(blocks, res)
			case gReasoning:
				var bs []anthropic.Block
				if len(it.sealed.Blocks) > 0 && jsonx.Unmarshal(it.sealed.Blocks, &bs) == nil {
					blocks = append(blocks, bs...)
				}
			}
		}
		role := "user"
		if t.model {
			role = "assistant"
			blocks = trimAssistantText(blocks)
		}
		msgs = appendBlocks(msgs, role, blocks)
	}
	if len(msgs) == 0 {
		return badRequest("contents", "contents: at least one turn with content is required")
	}
	msgs, err := tidyMessages(msgs)
	if err != nil {
		return badRequest("contents", "contents: %s", strings.TrimPrefix(err.Error(), "messages: "))
	}
	out.Messages = msgs
	return nil
}

// trimAssistantText leaves out white-space-only text of a model turn
// (Anthropic refuses empty text blocks).
func trimAssistantText(blocks []anthropic.Block) []anthropic.Block {
	kept := blocks[:0]
	for _, b := range blocks {
		if b.Type != "text" || strings.TrimSpace(b.Text) != "" {
			kept = append(kept, b)
		}
	}
	return kept
}

// g2mMedia converts inline or referenced data: images, and PDFs as
// documents.
func g2mMedia(it gItem, p *Plan) (*anthropic.Block, error) {
	mt := geminiMediaType(it.part)
	kind := "image"
	switch {
	case mt == "application/pdf":
		kind = "document"
	case !anthropicImageTypes[mt]:
		return nil, p.contract(it.path, "media of type "+quoteType(mt)+" cannot be sent to an Anthropic model, which takes images (JPEG, PNG, GIF, WebP) and PDFs")
	}
	if d := it.part.InlineData; d != nil {
		return &anthropic.Block{Type: kind, Source: &anthropic.Source{Type: "base64", MediaType: mt, Data: d.Data}}, nil
	}
	uri := it.part.FileData.FileURI
	if !webURL(uri) {
		return nil, p.contract(it.path, googleFileRefusal)
	}
	if kind == "image" && p.Caps.NoURLImages {
		return nil, p.contract(it.path, "this model's upstream takes inline (base64) images only")
	}
	return &anthropic.Block{Type: kind, Source: &anthropic.Source{Type: "url", URL: uri}}, nil
}

func quoteType(mt string) string {
	if mt == "" {
		return "(unknown)"
	}
	return `"` + mt + `"`
}

// g2mTools converts function declarations, the tools Gemini runs itself
// that the upstream runs too (Google Search as Anthropic's web search),
// and functionCallingConfig.
func g2mTools(r *gReq, out *anthropic.MessagesRequest, p *Plan) error {
	for _, f := range r.funcs {
		if !r.choice.allowed(f.name) {
			continue
		}
		out.Tools = append(out.Tools, anthropic.Tool{Name: p.upstreamToolName(f.name), Description: f.description, InputSchema: inputSchema(f.schema)})
	}
	for _, s := range r.server {
		if s.name == "googleSearch" && p.Caps.WebSearch {
			out.Tools = append(out.Tools, anthropic.Tool{Type: "web_search_20250305", Name: "web_search"})
			continue
		}
		if err := p.advisoryAt(s.path, s.name, "Gemini's "+s.name+" tool has no counterpart on "+anthropicUpstream); err != nil {
			return err
		}
	}
	c := r.choice
	if c == nil {
		return nil
	}
	var tc *anthropic.ToolChoice
	switch {
	case c.mode == "none":
		tc = &anthropic.ToolChoice{Type: "none"} // tools are kept: history may use them
	case c.forced() != "":
		tc = &anthropic.ToolChoice{Type: "tool", Name: p.upstreamToolName(c.forced())}
	case c.mode == "any":
		tc = &anthropic.ToolChoice{Type: "any"}
	default:
		tc = &anthropic.ToolChoice{Type: "auto"}
	}
	if len(out.Tools) == 0 && tc.Type != "none" {
		return nil // Anthropic refuses a tool choice without tools
	}
	out.ToolChoice = tc
	return nil
}

// g2mThinking maps thinkingConfig to Claude's thinking: a level as an
// effort, a budget as that budget (on models with budgets; else as the
// effort it buckets into), -1 or includeThoughts alone as the model's
// own choice (adaptive thinking without an effort, or a medium budget).
func g2mThinking(t gThinking, out *anthropic.MessagesRequest, p *Plan) error {
	if t.off || t.param == "" {
		return nil
	}
	effort := t.effort
	if t.dynamic {
		effort = "medium"
	}
	if unsignedToolLoop(out.Messages) && p.Caps.Thinking != ThinkingNone {
		// Claude refuses thinking when the turn it continues used tools
		// without its thinking (the history came from another model, or
		// the client lost the signature): this request goes without.
		return p.advisory(t.param, "the model turn these function responses answer carries no thinking of this model, which it needs to think")
	}
	if err := anthropicEffort(effort, t.param, out, p); err != nil {
		return err
	}
	switch th := out.Thinking; {
	case th == nil:
	case th.Type == "adaptive" && t.dynamic:
		oc := out.OutputConfig
		oc.Effort = ""
		if len(oc.Format) == 0 && len(oc.Extra) == 0 {
			out.OutputConfig = nil
		}
	case th.Type == "enabled" && t.budget > 0:
		b := max(t.budget, 1024) // Anthropic's least budget
		if b != t.budget {
			p.adjust(t.param)
		}
		th.BudgetTokens = b
		if out.MaxTokens <= b {
			out.MaxTokens = b + max(out.MaxTokens, 1024)
			p.adjust("generationConfig.maxOutputTokens")
		}
	}
	return nil
}

// unsignedToolLoop reports whether the conversation ends in tool results
// answering an assistant message that does not start with thinking.
func unsignedToolLoop(msgs []anthropic.Message) bool {
	n := len(msgs)
	if n < 2 || msgs[n-1].Role != "user" || msgs[n-2].Role != "assistant" {
		return false
	}
	user, asst := msgs[n-1].Content.Blocks, msgs[n-2].Content.Blocks
	if len(user) == 0 || user[0].Type != "tool_result" || len(asst) == 0 {
		return false
	}
	return asst[0].Type != "thinking" && asst[0].Type != "redacted_thinking"
}
