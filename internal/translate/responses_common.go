package translate

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/api/responses"
	"github.com/tollgate/tollgate/internal/jsonx"
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
	// continues is the response the request continues, expanded into
	// its input by the gateway (Target.Continues): the answer names it
	// as the client did.
	continues string
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
		ID: id, Object: "response", CreatedAt: created, Status: status, Model: p.AnswerModel,
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
	if id := cmp.Or(p.rp.continues, req.PreviousResponseID); id != "" {
		r.PreviousResponseID = &id
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

// rDef is a client's function or custom tool as offered upstream.
type rDef struct {
	name        string // the upstream name
	description string
	params      jsontext.Value // a JSON schema, never empty
	strict      *bool
}

// responsesToolDefs flattens the request's function and custom tools,
// those inside namespaces too, into the definitions offered upstream. A
// custom tool becomes a function with one string member. Hosted tools run
// on OpenAI's side: unless mapped (not nil) takes one, giving it an
// equivalent upstream, they are reported (dropped; refused under strict),
// and hosted names the dropped types, for tool_choice.
func responsesToolDefs(in *responses.Request, p *Plan, mapped func(responses.Tool) bool) (defs []rDef, hosted map[string]bool, err error) {
	add := func(t responses.Tool, namespace, path string) error {
		if err := requiredToolName(path+".name", t.Name); err != nil {
			return err
		}
		rt := rTool{namespace: namespace, name: t.Name, custom: t.Type == "custom"}
		d := rDef{name: p.responsesToolName(rt), description: t.Description, params: t.Parameters, strict: t.Strict}
		if rt.custom {
			d.params, d.strict = customSchema, nil
			if d.description == "" {
				d.description = "Takes free-text input."
			}
		}
		if len(d.params) == 0 || string(d.params) == "null" {
			d.params = jsontext.Value(`{"type":"object","properties":{}}`)
		}
		defs = append(defs, d)
		return nil
	}
	for i, t := range in.Tools {
		path := pathAt("", "tools", i)
		switch t.Type {
		case "function", "custom":
			if err := add(t, "", path); err != nil {
				return nil, nil, err
			}
		case "namespace":
			for j, nt := range t.Tools {
				npath := pathAt(path, "tools", j)
				if nt.Type != "function" && nt.Type != "custom" {
					if err := p.advisory(npath, fmt.Sprintf("tools of type %q inside a namespace cannot be offered to this model's upstream", nt.Type)); err != nil {
						return nil, nil, err
					}
					continue
				}
				if err := add(nt, t.Name, npath); err != nil {
					return nil, nil, err
				}
			}
		default:
			if mapped != nil && mapped(t) {
				continue
			}
			if hosted == nil {
				hosted = map[string]bool{}
			}
			hosted[t.Type] = true
			if err := p.advisory("tools."+t.Type, "hosted tools run on OpenAI's side; this model's upstream cannot call them"); err != nil {
				return nil, nil, err
			}
		}
	}
	return defs, hosted, nil
}

// rChoice is a tool_choice: mode auto, none or required, or tool (name
// is then the upstream name of the forced tool).
type rChoice struct {
	mode, name string
	restricted bool // allowed_tools: the client meant only some tools
}

// responsesToolChoice reads tool_choice; nil when the request has none.
func responsesToolChoice(tc jsontext.Value, p *Plan) (*rChoice, error) {
	if len(tc) == 0 || string(tc) == "null" {
		return nil, nil
	}
	if tc.Kind() == '"' {
		var s string
		jsonx.Unmarshal(tc, &s)
		switch s {
		case "auto", "none", "required":
			return &rChoice{mode: s}, nil
		}
		return nil, badRequest("tool_choice", "tool_choice: unknown value %q", s)
	}
	var c struct {
		Type      string `json:"type"`
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
		Mode      string `json:"mode"`
	}
	if err := jsonx.Unmarshal(tc, &c); err != nil {
		return nil, explained("tool_choice", err)
	}
	switch c.Type {
	case "function", "custom":
		if c.Name == "" {
			return nil, badRequest("tool_choice.name", "tool_choice.name: required")
		}
		return &rChoice{mode: "tool", name: p.responsesToolName(rTool{namespace: c.Namespace, name: c.Name, custom: c.Type == "custom"})}, nil
	case "allowed_tools":
		// The restriction has no counterpart upstream: every tool is offered.
		if err := p.advisory("tool_choice.tools", "the upstream cannot restrict a request to some of its tools"); err != nil {
			return nil, err
		}
		mode := "auto"
		if c.Mode == "required" {
			mode = "required"
		}
		return &rChoice{mode: mode, restricted: true}, nil
	case "":
		return nil, badRequest("tool_choice.type", "tool_choice.type: required")
	}
	return nil, p.contract("tool_choice", fmt.Sprintf("the forced tool %q runs on OpenAI's side and cannot be used with this model's upstream", c.Type))
}

// responsesAdvisoryMembers reports the members no translated upstream
// carries (dropped; refused under strict), then unknown ones. keep names
// members the caller translates itself.
func responsesAdvisoryMembers(in *responses.Request, p *Plan, keep ...string) error {
	for _, a := range []struct {
		param   string
		present bool
	}{
		{"max_tool_calls", in.MaxToolCalls != nil}, {"top_logprobs", in.TopLogprobs != nil && *in.TopLogprobs > 0},
		{"service_tier", in.ServiceTier != "" && in.ServiceTier != "auto" && in.ServiceTier != "default"},
		{"truncation", in.Truncation == "auto"}, {"metadata", !emptyJSON(in.Metadata)},
		{"prompt_cache_key", in.PromptCacheKey != ""}, {"stream_options", !emptyJSON(in.StreamOptions)},
	} {
		if a.present && !slices.Contains(keep, a.param) {
			why, ok := responsesAdvisories[a.param]
			if !ok {
				why = "not supported by this model's upstream"
			}
			if err := p.advisory(a.param, why); err != nil {
				return err
			}
		}
	}
	return responsesUnknown(in.Extra, p)
}

// responsesOtherItem handles the input items neither translator converts:
// an item_reference needs a stored conversation (400); a hosted tool's
// call and result ran on OpenAI's side and are left out (reported); any
// other type is a contract the upstream cannot keep.
func responsesOtherItem(path string, it responses.Item, p *Plan) error {
	switch {
	case it.Type == "item_reference":
		return badRequest(path, "%s: item references need a stored conversation, which this model's upstream does not keep; send the items themselves", path)
	case strings.HasSuffix(it.Type, "_call") || strings.HasSuffix(it.Type, "_call_output") || strings.HasPrefix(it.Type, "mcp_"):
		p.drop(it.Type)
		return nil
	}
	return p.contract(path, fmt.Sprintf("input items of type %q cannot be sent to this model's upstream", it.Type))
}
