package translate

import (
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/api/responses"
	"github.com/tollgate/tollgate/internal/meter"
)

// What the two pairs for Responses clients (on Chat Completions and on
// Messages upstreams) share: how the client's tools are named upstream and
// back, the response object's echo of the request, and usage.

// rTool is how a Responses client named a tool: a function or custom tool,
// maybe inside a namespace.
type rTool struct {
	namespace, name string
	custom          bool
}

// responsesPlan is what a Responses client's request leaves for its answer.
type responsesPlan struct {
	req   *responses.Request
	tools map[string]rTool // upstream function name → the client's tool
}

// customSchema is the function schema a custom tool (free-text input) is
// offered under: one string member.
var customSchema = jsontext.Value(`{"type":"object","properties":{"input":{"type":"string","description":"The tool's input, as free text"}},"required":["input"],"additionalProperties":false}`)

// responsesToolName is the name a client tool goes by upstream: its own,
// or namespace__name for a tool inside a namespace, shortened when the
// upstream would refuse it. It is deterministic, so definitions and the
// calls in history agree, and the plan maps it back.
func (p *Plan) responsesToolName(t rTool) string {
	full := t.name
	if t.namespace != "" {
		full = t.namespace + "__" + t.name
	}
	up := p.upstreamToolName(full)
	if t.namespace != "" || t.custom || up != full {
		if p.rp.tools == nil {
			p.rp.tools = make(map[string]rTool)
		}
		p.rp.tools[up] = t
	}
	return up
}

// responsesTool is the client's tool an upstream function name stands for.
func (p *Plan) responsesTool(upstream string) rTool {
	if t, ok := p.rp.tools[upstream]; ok {
		return t
	}
	return rTool{name: p.clientToolName(upstream)}
}

// responsesUsage renders usage the Responses way: input_tokens counts every
// input token, cached ones included; output_tokens includes reasoning.
func responsesUsage(u meter.Usage) *responses.Usage {
	in := u.TotalInput()
	return &responses.Usage{
		InputTokens:         in,
		InputTokensDetails:  responses.InputTokensDetails{CachedTokens: u.CacheRead, CacheWriteTokens: u.CacheWrite5m + u.CacheWrite1h},
		OutputTokens:        u.Output,
		OutputTokensDetails: responses.OutputTokensDetails{ReasoningTokens: u.Reasoning},
		TotalTokens:         in + u.Output,
	}
}

// responseObject is the response the client gets, with the request's
// settings echoed as the Responses API does.
func (p *Plan) responseObject(id string, created int64, status string) responses.Response {
	req := p.rp.req
	r := responses.Response{
		ID: id, Object: "response", CreatedAt: created, Status: status, Model: p.ClientModel,
		Output: []responses.Item{}, ParallelToolCalls: true, Temperature: 1, TopP: 1, Truncation: "disabled",
		Store: req.Store == nil || *req.Store, ToolChoice: jsontext.Value(`"auto"`), Tools: req.Tools,
		Instructions: req.Instructions, MaxOutputTokens: req.MaxOutputTokens, Metadata: jsontext.Value(`{}`),
		Reasoning: &responses.Reasoning{}, Text: &responses.Text{Format: &responses.Format{Type: "text"}, Verbosity: "medium"},
	}
	if r.Tools == nil {
		r.Tools = []responses.Tool{}
	}
	if req.ParallelToolCalls != nil {
		r.ParallelToolCalls = *req.ParallelToolCalls
	}
	if req.Temperature != nil {
		r.Temperature = *req.Temperature
	}
	if req.TopP != nil {
		r.TopP = *req.TopP
	}
	if req.Truncation != "" {
		r.Truncation = req.Truncation
	}
	if len(req.ToolChoice) > 0 {
		r.ToolChoice = req.ToolChoice
	}
	if len(req.Metadata) > 0 && string(req.Metadata) != "null" {
		r.Metadata = req.Metadata
	}
	if req.Reasoning != nil {
		r.Reasoning = &responses.Reasoning{Effort: req.Reasoning.Effort, Summary: req.Reasoning.Summary}
	}
	if req.Text != nil {
		t := *req.Text
		if t.Format == nil {
			t.Format = r.Text.Format
		}
		if t.Verbosity == "" {
			t.Verbosity = "medium"
		}
		r.Text = &t
	}
	if req.PreviousResponseID != "" {
		r.PreviousResponseID = &req.PreviousResponseID
	}
	if u := req.User; u != "" {
		r.User = &u
	}
	return r
}

// newResponseID and the item id makers follow OpenAI's prefixes.
func newResponseID() string { return "resp_" + randomHex(24) }
func newItemID(prefix string) string {
	return prefix + "_" + randomHex(24)
}
