package translate

import (
	"context"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/api/gemini"
	"github.com/tollgate/tollgate/internal/api/responses"
	"github.com/tollgate/tollgate/internal/jsonx"
)

// GeminiBodyToResponses translates a Gemini generateContent body (the
// model and whether to stream are in t, from the URL) into a Responses
// body. A body that cannot be translated is a *RequestError; when ctx
// ends first, the translation stops with ctx's error.
func GeminiBodyToResponses(ctx context.Context, body []byte, t Target) ([]byte, *Plan, error) {
	return geminiBodyTo(ctx, body, t, geminiToResponses)
}

const responsesUpstream = "a Responses upstream"

// geminiToResponses translates a Gemini client's request for an upstream
// served through the Responses API: turns become input items, function
// calls function_call items and their responses function_call_output
// items; a thought signature tollgate sealed gives back the upstream's
// reasoning item where it stood. Nothing is kept upstream (store: false).
func geminiToResponses(ctx context.Context, in *gemini.Request, t Target) (*responses.Request, *Plan, error) {
	p := newGeminiPlan(t)
	r, err := p.readGemini(ctx, in, responsesUpstream)
	if err != nil {
		return nil, nil, err
	}
	g := &r.gen
	if n := g.maxOut; n != nil && *n < minOutputTokens {
		least := int64(minOutputTokens)
		g.maxOut = &least
		p.adjust("generationConfig.maxOutputTokens")
	}
	out := newResponsesRequest(t.Model, t.Stream, g.maxOut, p)
	out.Temperature, out.TopP = g.temperature, g.topP
	if err := geminiAdvisory(g, r, p, responsesUpstream, "topK", "stopSequences", "presencePenalty", "frequencyPenalty", "seed"); err != nil {
		return nil, nil, err
	}
	if err := g2rLabels(r.labels, out, p); err != nil {
		return nil, nil, err
	}
	if len(r.system) > 0 {
		instructions := strings.Join(r.system, "\n\n")
		out.Instructions = &instructions
	}
	if err := g2rTurns(r.turns, out, p); err != nil {
		return nil, nil, err
	}
	if err := g2rTools(r, out, p); err != nil {
		return nil, nil, err
	}
	switch g.format {
	case "json_object":
		out.Text = &responses.Text{Format: &responses.Format{Type: "json_object"}}
	case "json_schema":
		out.Text = &responses.Text{Format: &responses.Format{Type: "json_schema", Name: "output", Schema: g.schema}}
	}
	g2rThinking(g.thinking, out, p)
	return out, p, nil
}

// g2rLabels sends labels as metadata, which holds at most 16 of them,
// keys of 64 bytes and values of 512 at most.
func g2rLabels(labels map[string]string, out *responses.Request, p *Plan) error {
	if len(labels) == 0 {
		return nil
	}
	fits := len(labels) <= 16
	for k, v := range labels {
		fits = fits && len(k) <= 64 && len(v) <= 512
	}
	if !fits {
		return p.advisory("labels", "more labels, or longer ones, than a Responses upstream's metadata holds")
	}
	out.Metadata = mustJSON(labels)
	return nil
}

// g2rTurns converts the conversation into input items, in order.
func g2rTurns(turns []gTurn, out *responses.Request, p *Plan) error {
	items := out.Input.Items
	for _, t := range turns {
		var parts []responses.Part
		role, textType := "user", "input_text"
		if t.model {
			role, textType = "assistant", "output_text"
		}
		flush := func() {
			if len(parts) > 0 {
				items = append(items, responses.Item{Type: "message", Role: role, Content: responses.Content{Parts: parts}})
				parts = nil
			}
		}
		for _, it := range t.items {
			switch it.kind {
			case gText:
				parts = append(parts, responses.Part{Type: textType, Text: it.text})
			case gMedia:
				part, err := g2rMedia(it, p)
				if err != nil {
					return err
				}
				if part != nil {
					parts = append(parts, *part)
				}
			case gCall:
				flush()
				args := string(it.args)
				items = append(items, responses.Item{Type: "function_call", CallID: it.id, Name: p.upstreamToolName(it.name), Arguments: &args})
			case gResult:
				flush()
				text := it.text
				if it.isError && !strings.HasPrefix(text, "Error") {
					text = "Error: " + text // the Responses API has no error flag
				}
				output := responses.Content{IsString: true, Text: text}
				if len(it.media) > 0 {
					output = responses.Content{}
					if text != "" {
						output.Parts = append(output.Parts, responses.Part{Type: "input_text", Text: text})
					}
					for _, m := range it.media {
						part, err := g2rMedia(m, p)
						if err != nil {
							return err
						}
						if part != nil {
							output.Parts = append(output.Parts, *part)
						}
					}
				}
				items = append(items, responses.Item{Type: "function_call_output", CallID: it.id, Output: output})
			case gReasoning:
				var ri responses.Item
				if len(it.sealed.Item) > 0 && jsonx.Unmarshal(it.sealed.Item, &ri) == nil && ri.Type == "reasoning" {
					flush()
					items = append(items, ri)
				}
			}
		}
		flush()
	}
	if len(items) == 0 {
		return badRequest("contents", "contents: at least one turn with content is required")
	}
	out.Input.Items = items
	return nil
}

// g2rMedia converts inline or referenced data: images and files (PDFs).
func g2rMedia(it gItem, p *Plan) (*responses.Part, error) {
	mt := geminiMediaType(it.part)
	d, f := it.part.InlineData, it.part.FileData
	if f != nil && !webURL(f.FileURI) {
		return nil, p.contract(it.path, googleFileRefusal)
	}
	switch {
	case strings.HasPrefix(mt, "image/") && d != nil:
		return &responses.Part{Type: "input_image", ImageURL: "data:" + mt + ";base64," + d.Data, Detail: "auto"}, nil
	case strings.HasPrefix(mt, "image/"):
		return &responses.Part{Type: "input_image", ImageURL: f.FileURI, Detail: "auto"}, nil
	case mt == "application/pdf" && d != nil:
		return &responses.Part{Type: "input_file", FileData: "data:application/pdf;base64," + d.Data, Filename: "document.pdf"}, nil
	case mt == "application/pdf":
		return &responses.Part{Type: "input_file", FileURL: f.FileURI}, nil
	}
	return nil, p.contract(it.path, "media of type "+quoteType(mt)+" cannot be sent to "+responsesUpstream)
}

// g2rTools converts function declarations, Google Search as the hosted
// web search where the upstream runs it, and functionCallingConfig.
func g2rTools(r *gReq, out *responses.Request, p *Plan) error {
	for _, f := range r.funcs {
		if r.choice.allowed(f.name) {
			out.Tools = append(out.Tools, responses.Tool{Type: "function", Name: p.upstreamToolName(f.name), Description: f.description,
				Parameters: inputSchema(f.schema)})
		}
	}
	for _, s := range r.server {
		if s.name == "googleSearch" && p.Caps.WebSearch {
			out.Tools = append(out.Tools, responses.Tool{Type: "web_search"})
			continue
		}
		if err := p.advisoryAt(s.path, s.name, "Gemini's "+s.name+" tool has no counterpart on "+responsesUpstream); err != nil {
			return err
		}
	}
	c := r.choice
	if c == nil || len(out.Tools) == 0 && c.mode != "none" {
		return nil
	}
	switch {
	case c.mode == "none":
		out.ToolChoice = jsontext.Value(`"none"`)
	case c.forced() != "":
		out.ToolChoice = mustJSON(map[string]string{"type": "function", "name": p.upstreamToolName(c.forced())})
	case c.mode == "any":
		out.ToolChoice = jsontext.Value(`"required"`)
	default:
		out.ToolChoice = jsontext.Value(`"auto"`)
	}
	return nil
}

// g2rThinking maps thinkingConfig to a reasoning effort, asking for the
// encrypted reasoning that the answer seals into a thought signature (so
// it comes back on the next turn), and for summaries when the client
// wants thoughts.
func g2rThinking(t gThinking, out *responses.Request, p *Plan) {
	effort := t.effort
	switch {
	case t.param == "" || t.off:
		return
	case t.dynamic:
		effort = "medium"
	}
	out.Reasoning = &responses.Reasoning{Effort: effort}
	if p.geminiThoughts {
		out.Reasoning.Summary = "auto"
	}
	out.Include = []string{"reasoning.encrypted_content"}
}
