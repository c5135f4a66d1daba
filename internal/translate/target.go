package translate

import (
	"context"

	"github.com/tollgate/tollgate/internal/jsonx"
)

// Each pair's <Client>BodyTo<Upstream> (in its _request.go file) and
// <Upstream>AnswerTo<Client> (in its _answer.go file) take and return wire
// bytes: they are what the dialect package registers for the pair. ctx is
// the request's; those whose work is not bounded by the body's size alone
// (the Gemini ones inline schema references) stop when it ends.

// Target is what a request translation knows of where the request goes.
type Target struct {
	Model  string // the upstream model id
	Caps   Caps
	Policy Policy
	Signer *Signer
	Cache  Cache
	// Stream: the client asked for a stream, for a protocol that says so
	// outside the body (Gemini's URL names the operation); the
	// translators of the others read the body's stream member.
	Stream bool
	// Continues is the id of the stored answer the request continues,
	// when the gateway expanded that conversation into the body in place
	// of the reference to it: answers that name the answer they continue
	// (a Responses response's previous_response_id) name it.
	Continues string
}

// withContext gives a translator that takes the request's context the
// shape bodyToBody calls, bound to ctx.
func withContext[In, Out any](ctx context.Context, f func(context.Context, *In, string, Caps, Policy, *Signer) (Out, *Plan, error)) func(*In, string, Caps, Policy, *Signer) (Out, *Plan, error) {
	return func(in *In, model string, caps Caps, policy Policy, signer *Signer) (Out, *Plan, error) {
		return f(ctx, in, model, caps, policy, signer)
	}
}

// bodyToBody decodes a client body into In, translates it with f and
// encodes the result.
func bodyToBody[In, Out any](body []byte, t Target, f func(*In, string, Caps, Policy, *Signer) (Out, *Plan, error)) ([]byte, *Plan, error) {
	in := new(In)
	if err := decode(body, in); err != nil {
		path, msg := jsonx.Explain(err)
		return nil, nil, &RequestError{Param: path, Message: msg}
	}
	out, p, err := f(in, t.Model, t.Caps, t.Policy, t.Signer)
	if err != nil {
		return nil, nil, err
	}
	cacheHints(out, t.Cache, p)
	if p.rp != nil && t.Continues != "" {
		p.rp.continues = t.Continues
	}
	b, err := encode(out)
	return b, p, err
}
