package translate

import (
	"fmt"

	"github.com/tollgate/tollgate/internal/jsonx"
)

// Plan is what a request translation decided that the response side must
// know: names to restore, which modes are on, what was dropped. It is made
// per request and is not safe for concurrent use.
type Plan struct {
	// AnswerModel is the model answers name: the upstream model the request
	// was sent to, as on the pass-through lane, where the upstream's answer
	// is relayed as it is.
	AnswerModel string
	// Stream is whether the client asked for a stream.
	Stream bool
	// IncludeUsage: the OpenAI client asked for a usage chunk.
	IncludeUsage bool
	// JSONTool: structured output was emulated with a forced tool whose
	// input is the answer.
	JSONTool bool
	// Caps of the target.
	Caps Caps
	// InputEstimate is a local estimate of the prompt's tokens, shown in
	// message_start until the upstream's exact count arrives.
	InputEstimate int64
	// CacheBreakpoints is how many prompt-cache breakpoints tollgate
	// added, when it placed them (PlacedBreakpoints).
	CacheBreakpoints  int
	PlacedBreakpoints bool

	toolNames map[string]string // upstream tool name → client tool name
	rp        *responsesPlan    // a Responses client's request, for its answer
	// geminiThoughts: a Gemini client asked for thought parts
	// (thinkingConfig.includeThoughts); signatures are sent either way.
	geminiThoughts bool
	dropped        []string
	adjusted       []string
	// listed holds what dropped and adjusted list (keyed "d"+name and
	// "a"+name): a request may name many members, and each look-up in
	// the lists would cost their length.
	listed map[string]bool
	policy Policy
	signer *Signer

	// work counts the items of a client's request read where a request
	// could make the reading costly (many parts, calls, properties): the
	// tests check that it grows linearly with the request. Every
	// ctxStride-th item, the reading looks at the request's context.
	work int

	// The bound of the request's schemas with their $refs inlined
	// (geminiSchema): the bytes of the schemas converted so far, and
	// what they grew to.
	schemaSize, schemaGrown int
}

// Dropped lists the request parameters that were not sent upstream.
func (p *Plan) Dropped() []string { return p.dropped }

// Adjusted lists the request parameters whose value was changed.
func (p *Plan) Adjusted() []string { return p.adjusted }

func (p *Plan) drop(param string) { p.dropped = p.list(p.dropped, "d", param) }

func (p *Plan) adjust(param string) { p.adjusted = p.list(p.adjusted, "a", param) }

// list appends param to list (dropped, or adjusted: kind) unless it is
// there already.
func (p *Plan) list(list []string, kind, param string) []string {
	if p.listed == nil {
		p.listed = map[string]bool{}
	}
	if p.listed[kind+param] {
		return list
	}
	p.listed[kind+param] = true
	return append(list, param)
}

// advisory handles an advisory parameter that cannot be sent upstream:
// dropped and reported, or refused under PolicyStrict.
func (p *Plan) advisory(param, why string) error {
	if p.policy == PolicyStrict {
		return &RequestError{Param: param, Message: fmt.Sprintf("%s: %s", param, why)}
	}
	p.drop(param)
	return nil
}

// advisoryAt is advisory for a member inside the request: a refusal names
// its path, the report its name.
func (p *Plan) advisoryAt(path, param, why string) error {
	if p.policy == PolicyStrict {
		return &RequestError{Param: path, Message: fmt.Sprintf("%s: %s", path, why)}
	}
	p.drop(param)
	return nil
}

// contract handles a parameter whose loss would change what the client
// gets: refused, or dropped and reported under PolicyLenient.
func (p *Plan) contract(param, why string) error {
	if p.policy == PolicyLenient {
		p.drop(param)
		return nil
	}
	return &RequestError{Param: param, Message: fmt.Sprintf("%s: %s", param, why)}
}

// clientToolName restores a tool name shortened for the upstream.
func (p *Plan) clientToolName(upstream string) string {
	if n, ok := p.toolNames[upstream]; ok {
		return n
	}
	return upstream
}

// RequestError is a client request that cannot be translated (HTTP 400).
type RequestError struct {
	Param   string
	Message string
}

func (e *RequestError) Error() string { return e.Message }

func badRequest(param, format string, args ...any) error {
	return &RequestError{Param: param, Message: fmt.Sprintf(format, args...)}
}

// explained refuses a member (at param) that does not decode, saying
// where and what is accepted in the API's terms.
func explained(param string, err error) error {
	path, msg := jsonx.ExplainAt(param, err)
	return &RequestError{Param: path, Message: msg}
}
