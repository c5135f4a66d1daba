package gateway

import (
	"io"
	"net/http"

	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/meter"
	"github.com/tollgate/tollgate/internal/provider"
	"github.com/tollgate/tollgate/internal/route"
)

// passthrough sends the request to target t, which speaks the client's
// dialect, with the client's bytes and only the model rewritten (and what
// the dialect's Prepare changes), and relays the answer as it arrives.
// When the attempt fails in a way another attempt may fix, before anything
// has reached the client, it returns a *failure instead.
func (g *Gateway) passthrough(c *call, t *route.Target) error {
	x, d := c.x, c.x.dialect
	x.lane = "passthrough"
	req := &provider.Request{
		Op: c.op, Dialect: d, Model: t.Model, Stream: c.s.Stream,
		Header: upstreamHeader(c.r, d.ForwardHeaders), Affinity: c.stickyKey(),
		Log: g.log, ID: x.id,
	}
	filterBetas(req.Header, d.BetaHeader, t.AllowBetas, c.w.Header())
	// Only "model" changes: the upstream gets every other byte the client
	// sent (all of them when the model is in the URL, which the provider
	// makes).
	req.Body = provider.Body{c.body}
	if c.s.InBody() {
		req.Body = provider.Body{c.body[:c.s.ModelStart], t.QuotedModel, c.body[c.s.ModelEnd:]}
	}
	if x.body != nil {
		req.Hold = x.body.hold // the transport may read it after the handler ends
	}
	var up *upload
	if c.form != nil {
		up = &upload{r: c.form.Body("model", t.Model)}
		req.Body, req.Upload, req.UploadType = nil, up, c.form.ContentType()
		req.UploadLength = c.form.Len()
	}
	hideUsage := false
	if d.Prepare != nil && (c.op == dialect.Generate || c.op == dialect.Complete) {
		// Only chat and completions take stream_options.
		p, err := d.Prepare(c.body, c.s, req.Body.Bytes)
		if err != nil {
			return &Error{Status: http.StatusInternalServerError, Kind: dialect.Internal, Message: "internal error preparing the upstream request", Err: err}
		}
		if p.Body != nil {
			req.Body, req.Hold = provider.Body{p.Body}, nil
		}
		if p.Dropped != "" {
			c.w.Header().Set("Tollgate-Dropped-Params", p.Dropped)
		}
		hideUsage = p.HideUsage
	}
	if err := c.passthroughCache(d, req); err != nil {
		return err
	}

	units := c.requestUnits()
	resp, done, err := g.send(c.r, x, t.Provider, req)
	if ferr := up.failed(); ferr != nil {
		// The client's form failed on its way (too large, malformed, the
		// client gone): its answer, whatever the upstream did meanwhile.
		if err == nil {
			done()
		}
		return g.formError(x, ferr)
	}
	if err != nil {
		return retryableSend(x, err)
	}
	defer done()

	switch {
	case retryableStatus(resp.StatusCode):
		return bufferFailure(resp, nil)
	case credentialRefused(resp.StatusCode):
		return upstreamCredentialError(x, resp)
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return g.relayBody(c.w, x, resp, nil) // upstream errors are relayed as they are
	case c.op != dialect.CountTokens && isEventStream(resp.Header):
		// A stream the dialect's hook reads (to keep it for a later
		// request) needs the request at its end; any other is done with
		// it once it began.
		x.bodyFreeOnStart = !c.keepsAnswer()
		tap := c.streaming(d.NewTap(hideUsage))
		defer c.streamEnded()
		defer c.addUnits(units)
		return g.relayStream(c.w, c.r, x, resp, c.frame(tap))
	case c.op == dialect.CountTokens:
		return g.relayBody(c.w, x, resp, nil)
	case c.op == dialect.Embed:
		// Relayed as it comes, unkept (a batch's vectors run to tens of
		// megabytes): usage is read from the answer's ends; an answer
		// without it is counted locally.
		ends := &answerEnds{ReadCloser: resp.Body}
		resp.Body = ends
		x.usage = meter.Usage{} // an earlier attempt's are in c.embedSpent
		defer func() {
			if x.status == http.StatusOK {
				ends.usage(&x.usage)
				c.embedUsage()
			}
			x.usage.Input += c.embedSpent
			x.costed = false
		}()
		return g.relayBody(c.w, x, resp, nil)
	case c.keepsAnswer():
		return g.relayKept(c, resp, d.Usage)
	default:
		defer c.addUnits(units)
		return g.relayBody(c.w, x, resp, c.answerUsage(d))
	}
}

// relayKept relays a whole answer the dialect's hook reads: read whole,
// handed to the hook, then written, so that a client continuing at once
// finds it kept.
func (g *Gateway) relayKept(c *call, resp *http.Response, usage func(*meter.Usage, []byte)) error {
	x := c.x
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxUpstreamBody))
	if err != nil {
		return &failure{err: g.upstreamFailureAfterStatus(x, err)}
	}
	usage(&x.usage, body)
	body = c.answered(body, false)
	h := c.w.Header()
	copyResponseHeader(h, resp.Header, x.limitHeaders)
	return g.writeBody(c.w, x, resp.StatusCode, body)
}
