package gateway

import (
	"errors"
	"net/http"

	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/route"
)

// A dialect's request-lifecycle hook (dialect.Lifecycle), when it has one:
// it begins each request's turn, picks each attempt's body, gives the
// conversation's affinity, sees the answer, and serves routes of its own.

// begin starts the request's turn with its dialect's hook, which may
// replace the body (and scan) the limits, routing and attempts read.
func (g *Gateway) begin(c *call) error {
	h := g.hooks[c.x.dialect]
	if h == nil {
		return nil
	}
	x := c.x
	r := dialect.TurnRequest{Op: c.op, Body: c.body, Scan: c.s, Owner: x.owner(), Model: x.routed, RequestID: x.id}
	t, err := h.Begin(c.r.Context(), &r)
	if err != nil {
		return refusal(err)
	}
	c.turn, c.body, c.s = t, r.Body, r.Scan
	x.sessionTurn, _ = t.(dialect.SessionTurn)
	return nil
}

// attemptBody sets the body an attempt on target t sends.
func (c *call) attemptBody(t *route.Target, passthrough bool) error {
	if c.turn == nil {
		return nil
	}
	a, err := c.turn.Attempt(dialect.AttemptTarget{Name: t.Name, Passthrough: passthrough,
		ForwardUnknownIDs: t.ForwardUnknownResponseIDs, Affinity: c.key})
	if err != nil {
		return refusal(err)
	}
	c.body, c.s, c.continues = a.Body, a.Scan, a.Continues
	return nil
}

// keepsAnswer reports whether the turn reads the answer (and the request
// body is held until the answer ends).
func (c *call) keepsAnswer() bool { return c.turn != nil && c.turn.Keeps() }

// answered hands a whole answer to the turn, which returns what the
// client gets. events: it is a whole event stream.
func (c *call) answered(body []byte, events bool) []byte {
	if !c.keepsAnswer() {
		return body
	}
	return c.turn.Answer(body, events)
}

// streaming wraps a stream's tap for the turn.
func (c *call) streaming(tap dialect.Tap) dialect.Tap {
	if !c.keepsAnswer() {
		return tap
	}
	return c.turn.Stream(tap)
}

// streamEnded tells the turn the stream is over.
func (c *call) streamEnded() {
	if c.keepsAnswer() {
		c.turn.Ended()
	}
}

// hookRoute serves a route of a dialect's hook.
func (g *Gateway) hookRoute(rt dialect.Route) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, x *exchange) error {
		status, body, err := rt.Serve(r, x.owner())
		if err != nil {
			return refusal(err)
		}
		return g.writeBody(w, x, status, body)
	}
}

// owner is the request's tenant: who owns what it stores and what is
// derived from it (prompt-cache keys, sticky routing). A virtual key is
// its own tenant (the key's id); a person signed in without a key is
// theirs (their user id, which no key id equals); the master key is the
// operator's "".
func (x *exchange) owner() string {
	switch {
	case x.key != nil:
		return x.key.Tenant()
	case x.person != nil:
		return x.person.UserID
	}
	return ""
}

// refusal turns a hook's *dialect.Refusal into the gateway's answer; other
// errors are left as they are (an internal error).
func refusal(err error) error {
	var r *dialect.Refusal
	if !errors.As(err, &r) {
		return err
	}
	return &Error{Status: r.Status, Kind: r.Kind, Message: r.Message, Param: r.Param, Code: r.Code, Header: r.Header, Err: r.Err}
}
