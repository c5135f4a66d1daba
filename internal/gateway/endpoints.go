package gateway

import (
	"fmt"
	"net/http"

	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/meter"
	"github.com/tollgate/tollgate/internal/provider"
)

// The endpoints that only an upstream of the client's own protocol serves
// (dialect.Op.PassThroughOnly: OpenAI's completions, moderations, images,
// audio, rerank): no translator speaks them, so every target of the model
// must take them as the client sent them.

// checkPassTargets refuses a request to such an endpoint for a model with
// a target that does not serve it, before any upstream is asked.
func (g *Gateway) checkPassTargets(c *call, path string) error {
	for i := range c.m.Targets {
		t := &c.m.Targets[i]
		if !provider.Speaks(t.Provider, c.x.dialect) || !provider.Serves(t.Provider, c.op) {
			return &Error{Status: http.StatusBadRequest, Kind: dialect.InvalidRequest, Param: "model", Code: "endpoint_not_served",
				Message: fmt.Sprintf("model %q cannot serve %s: its target %q does not (a provider serves it by its type, or by its endpoints setting)", c.m.Name, path, t.Name)}
		}
	}
	return nil
}

// answerUsage is the reader of a whole answer's usage: the endpoint's own,
// the dialect's, or none for an answer that is not JSON (audio).
func (c *call) answerUsage(d *dialect.Dialect) func(*meter.Usage, []byte) {
	switch {
	case c.ep == nil:
		return d.Usage
	case c.ep.Unmetered:
		return nil
	case c.ep.Usage != nil:
		return c.ep.Usage
	}
	return d.Usage
}

// requestUnits reads what the request itself is billed by (the
// characters of a speech request), before it is sent: a stream may let
// the body go once it begins.
func (c *call) requestUnits() (u meter.Usage) {
	if c.ep != nil && c.ep.RequestUsage != nil && c.body != nil {
		c.ep.RequestUsage(&u, c.body)
	}
	return u
}

// addUnits adds the request's own units (requestUnits) to the usage of
// an answer that succeeded. An answer of a billed endpoint that reported
// nothing (a transcription as text, SRT or VTT) leaves its cost unknown,
// not 0.
func (c *call) addUnits(u meter.Usage) {
	x := c.x
	if x.status < 200 || x.status > 299 {
		return
	}
	x.costed = false
	if u.Units > 0 {
		x.usage.Units, x.usage.Unit = u.Units, u.Unit
	}
	if x.usage.IsZero() && c.op.PassThroughOnly() && c.op != dialect.Moderate {
		x.unmetered = true
	}
}
