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

// requestUsage adds what the request itself is billed by (the characters
// of a speech request), once the upstream has answered it.
func (c *call) requestUsage() {
	if c.ep == nil || c.ep.RequestUsage == nil || c.x.status < 200 || c.x.status > 299 {
		return
	}
	c.ep.RequestUsage(&c.x.usage, c.body)
	c.x.costed = false
}
