package gateway

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tollgate/tollgate/internal/clock"
	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/provider"
	"github.com/tollgate/tollgate/internal/route"
	"github.com/tollgate/tollgate/internal/tokens"
	"github.com/tollgate/tollgate/internal/translate"
)

// maxUpstreamBody bounds a non-streaming upstream answer the translation
// lane reads whole.
const maxUpstreamBody = 32 << 20

// translated serves a request whose target speaks another dialect: the
// body is translated by the pair's translator, sent, and the answer
// translated back.
func (g *Gateway) translated(c *call, t *route.Target) error {
	x, w := c.x, c.w
	x.lane = "translated"
	up := t.Provider.Dialect()
	// The upstream's id belongs to the other protocol (it goes in
	// tollgate-upstream-request-id); the client's own header gets ours.
	w.Header()[x.dialect.RequestIDHeader] = []string{x.id}
	tr := dialect.For(x.dialect, up)
	if c.op == dialect.CountTokens {
		if tr != nil && up.ReadTokenCount != nil {
			return g.countTokensUpstream(c, t, tr)
		}
		return g.countTokensEstimate(c)
	}
	if c.op != dialect.Generate {
		// An operation no translator speaks (a compaction): only a target
		// of the client's own protocol serves it.
		return &Error{Status: http.StatusNotImplemented, Kind: dialect.NotImplemented, Param: "model",
			Message: fmt.Sprintf("%s is served only by upstreams that speak the %s protocol, and model %q is served by a %s upstream; compact the conversation on the client (ask the model for a summary) instead",
				dialect.Clip(c.r.URL.Path), x.dialect, c.m.Name, up)}
	}
	if tr == nil {
		return &Error{Status: http.StatusNotImplemented, Kind: dialect.NotImplemented, Param: "model",
			Message: fmt.Sprintf("model %q is served by a %s upstream, and this gateway cannot translate %s requests into %s ones", c.m.Name, up, x.dialect, up)}
	}
	b, plan, err := g.translateRequest(c, t, tr, c.body)
	if err != nil {
		return err
	}
	plan.InputEstimate = estimateTokens(c.body)
	req := &provider.Request{Op: dialect.Generate, Dialect: up, Model: t.Model, Stream: c.s.Stream,
		Body: provider.Body{b}, Header: upstreamHeader(c.r, nil), Affinity: c.stickyKey(),
		Log: g.log, ID: c.x.id}
	placedHeader(w.Header(), plan)
	if d := plan.Dropped(); len(d) > 0 {
		w.Header().Set("Tollgate-Dropped-Params", strings.Join(d, ","))
	}
	if a := plan.Adjusted(); len(a) > 0 {
		w.Header().Set("Tollgate-Adjusted-Params", strings.Join(a, ","))
	}

	resp, done, err := g.send(c.r, x, t.Provider, req)
	if err != nil {
		return retryableSend(x, err)
	}
	defer done()
	keepUpstreamIDs(w.Header(), resp.Header, up)

	if failed, err := g.translatedFailure(c, resp, tr); failed {
		return err
	}
	switch {
	case isEventStream(resp.Header):
		resp.Header = http.Header{"Content-Type": {"text/event-stream"}}
		tap := c.streaming(&scrubbingTap{Tap: tr.Stream(plan, clock.Now().Unix()), log: g.log, id: x.id})
		defer c.streamEnded()
		if ping := x.dialect.Ping; ping != nil {
			// The client expects keep-alive events the upstream may not send.
			tap = &pingingTap{tap, ping}
		}
		// As on the pass-through lane: the translated request has left and
		// the plan holds copies, so only an answer the dialect's hook
		// reads needs the client's body at the end (and the estimate, until the
		// upstream reports the prompt's usage).
		x.bodyFreeOnStart = !c.keepsAnswer()
		return g.relayStream(w, c.r, x, resp, c.frame(tap))
	default:
		return g.translatedBody(c, resp, plan, tr)
	}
}

// translateRequest translates a client body for target t: a body the
// pair cannot translate is the client's 400. A translation cut short by
// the request's end (the client left, or the drain time ran out) answers
// as a wait for a retry does.
func (g *Gateway) translateRequest(c *call, t *route.Target, tr *dialect.Translator, body []byte) ([]byte, *translate.Plan, error) {
	ctx := c.r.Context()
	b, plan, err := tr.Request(ctx, body, translate.Target{Model: t.Model, Caps: c.m.Caps, Policy: c.m.Policy, Signer: g.signer, Cache: c.translatedCache(),
		Stream: c.s.Stream, Continues: c.continues})
	if err != nil {
		var re *translate.RequestError
		if errors.As(err, &re) {
			return nil, nil, &Error{Status: http.StatusBadRequest, Kind: dialect.InvalidRequest, Param: re.Param, Message: re.Message}
		}
		if ctx.Err() != nil {
			if c.x.shuttingDown() {
				return nil, nil, shutdownError(context.Cause(ctx))
			}
			c.x.clientGone = true
			return nil, nil, fmt.Errorf("client went away while the request was translated: %w", err)
		}
		return nil, nil, &Error{Status: http.StatusInternalServerError, Kind: dialect.Internal, Message: "internal error preparing the upstream request", Err: err}
	}
	return b, plan, nil
}

// translatedFailure handles an upstream answer that is not a success: a
// status another target may retry, a refused credential, or an error
// translated into the client's envelope. failed is false for a success.
func (g *Gateway) translatedFailure(c *call, resp *http.Response, tr *dialect.Translator) (failed bool, err error) {
	switch {
	case retryableStatus(resp.StatusCode):
		return true, bufferFailure(resp, tr)
	case credentialRefused(resp.StatusCode):
		return true, upstreamCredentialError(c.x, resp)
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return true, g.translatedError(c, resp, tr)
	}
	return false, nil
}

// keepUpstreamIDs exposes the upstream's request id under tollgate's name;
// its own headers belong to the other protocol and are not relayed.
func keepUpstreamIDs(dst, src http.Header, up *dialect.Dialect) {
	if id := src[up.RequestIDHeader]; len(id) > 0 && id[0] != "" {
		dst.Set("Tollgate-Upstream-Request-Id", id[0])
	}
	for _, k := range []string{"Retry-After", "Retry-After-Ms"} {
		if v := src.Get(k); v != "" {
			dst.Set(k, v)
		}
	}
}

// translatedError maps an upstream error into the client's envelope and
// status (TRANSLATION.md §4.2, §4.3).
func (g *Gateway) translatedError(c *call, resp *http.Response, tr *dialect.Translator) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	status, out, noRetry := tr.Error(resp.StatusCode, body)
	if noRetry {
		c.w.Header().Set("X-Should-Retry", "false")
	}
	c.x.err = fmt.Errorf("upstream status %d", resp.StatusCode)
	return g.writeBody(c.w, c.x, status, out)
}

// translatedBody translates a whole (non-stream) answer.
func (g *Gateway) translatedBody(c *call, resp *http.Response, plan *translate.Plan, tr *dialect.Translator) error {
	x, w := c.x, c.w
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxUpstreamBody))
	if err != nil {
		// Nothing was sent yet: another target may answer.
		return &failure{err: g.upstreamFailureAfterStatus(x, err)}
	}
	out, stream, u, err := tr.Response(body, plan, clock.Now().Unix())
	x.usage = u
	if err != nil {
		var ue *translate.UpstreamError
		if errors.As(err, &ue) {
			return badUpstream(x, ue.Message, cmp.Or(ue.Err, err))
		}
		return err
	}
	if plan.Stream {
		stream = c.answered(stream, true)
		// The upstream answered a stream request with one object: the
		// client still gets the stream it asked for.
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		if c.addr != nil && c.addr.Frame != nil {
			var ct string
			stream, ct = dialect.Reframe(c.addr.Frame, stream)
			h.Set("Content-Type", ct)
		}
		h.Set("Cache-Control", "no-cache")
		x.status, x.firstByte = http.StatusOK, time.Since(x.start)
		g.answerHeaders(h, x)
		w.WriteHeader(http.StatusOK)
		if _, err := w.Write(stream); err != nil {
			x.clientGone = true
		}
		return nil
	}
	return g.writeBody(w, x, http.StatusOK, c.answered(out, false))
}

func (g *Gateway) upstreamFailureAfterStatus(x *exchange, err error) error {
	if x.shuttingDown() {
		return shutdownError(err)
	}
	if provider.IsTimeout(err) {
		return &Error{Status: http.StatusGatewayTimeout, Kind: dialect.Timeout, Err: err,
			Message: fmt.Sprintf("upstream provider %q did not finish its answer in time", x.provider)}
	}
	return &Error{Status: http.StatusBadGateway, Kind: dialect.Upstream, Err: err,
		Message: fmt.Sprintf("upstream provider %q failed while answering", x.provider)}
}

func badUpstream(x *exchange, msg string, err error) error {
	return &Error{Status: http.StatusBadGateway, Kind: dialect.Upstream, Err: err,
		Message: fmt.Sprintf("%s (provider %q)", msg, x.provider)}
}

func (g *Gateway) writeBody(w http.ResponseWriter, x *exchange, status int, body []byte) error {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	x.status, x.firstByte = status, time.Since(x.start)
	g.answerHeaders(h, x)
	w.WriteHeader(status)
	if _, err := w.Write(body); err != nil {
		x.clientGone = true
	}
	return nil
}

// pingingTap is a translator's stream machine whose client gets
// keep-alive events while the upstream is silent.
type pingingTap struct {
	dialect.Tap
	event []byte
}

func (t *pingingTap) ping() []byte { return t.event }

// countTokensUpstream answers count_tokens with the upstream's own count
// of the translated prompt (Gemini's countTokens).
func (g *Gateway) countTokensUpstream(c *call, t *route.Target, tr *dialect.Translator) error {
	x, up := c.x, t.Provider.Dialect()
	body, err := countPrompt(x.dialect, c.body)
	if err != nil {
		return err
	}
	b, _, err := g.translateRequest(c, t, tr, body)
	if err != nil {
		return err
	}
	req := &provider.Request{Op: dialect.CountTokens, Dialect: up, Model: t.Model, Body: provider.Body{b}, Header: upstreamHeader(c.r, nil), Affinity: c.stickyKey(),
		Log: g.log, ID: c.x.id}
	resp, done, err := g.send(c.r, x, t.Provider, req)
	if err != nil {
		return retryableSend(x, err)
	}
	defer done()
	keepUpstreamIDs(c.w.Header(), resp.Header, up)
	if failed, err := g.translatedFailure(c, resp, tr); failed {
		return err
	}
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return &failure{err: g.upstreamFailureAfterStatus(x, err)}
	}
	n, ok := up.ReadTokenCount(answer)
	if !ok {
		return badUpstream(x, "upstream answered count_tokens without a token count", nil)
	}
	return g.writeBody(c.w, x, http.StatusOK, x.dialect.TokenCount(n))
}

// countTokensEstimate answers count_tokens for models whose upstream has no
// such endpoint with a local count (an offline tokenizer), flagged as an
// estimate in a response header.
//
// Counting takes a core: bodies over maxCountBody are refused, at most one
// count per core runs at once (others wait their turn, or until their
// client leaves), and counting stops when the client leaves.
func (g *Gateway) countTokensEstimate(c *call) error {
	x := c.x
	if len(c.body) > maxCountBody {
		return newError(http.StatusRequestEntityTooLarge, dialect.TooLarge, fmt.Sprintf(
			"count_tokens: the request body is %d bytes; this model's tokens are counted by the gateway, for bodies of at most %d bytes", len(c.body), maxCountBody))
	}
	body, err := countPrompt(x.dialect, c.body)
	if err != nil {
		return err
	}
	if err := counting.acquire(c.r.Context()); err != nil {
		x.clientGone = true
		return fmt.Errorf("client went away waiting to count: %w", err)
	}
	n := tokens.Counter{Context: c.r.Context()}
	x.dialect.CountPrompt(&n, body)
	counting.release()
	if err := n.Err(); err != nil {
		x.clientGone = true
		return fmt.Errorf("client went away while counting: %w", err)
	}
	c.w.Header().Set("Tollgate-Token-Count", "estimate")
	return g.writeBody(c.w, x, http.StatusOK, x.dialect.TokenCount(n.Tokens()))
}

// countPrompt is the Generate request whose prompt a count body asks
// about (the dialect's CountRequest, which may unwrap it), refused as a
// Generate request is when it holds no conversation.
func countPrompt(d *dialect.Dialect, body []byte) ([]byte, error) {
	if f := d.CountRequest; f != nil {
		var err error
		if body, err = f(body); err != nil {
			return nil, &Error{Status: http.StatusBadRequest, Kind: dialect.InvalidRequest, Message: "count_tokens: the request body is not a JSON object", Err: err}
		}
	}
	conv := d.Fields.Conversation
	if conv == "" {
		return body, nil
	}
	s, err := dialect.Scan(body, &dialect.Fields{Conversation: conv, ConversationString: d.Fields.ConversationString})
	if err != nil {
		return nil, scanRefusal(err)
	}
	if err := needConversation(conv, s.Conversation); err != nil {
		return nil, err
	}
	return body, nil
}

// maxCountBody bounds the bodies counted locally. Counting is linear:
// under a second of a core for the worst text of this size (random
// lower-case letters, which merge slowest), some tens of milliseconds
// for prose.
const maxCountBody = 4 << 20

// estimateTokens is a rough prompt size: about four bytes a token for the
// text of a JSON body.
func estimateTokens(body []byte) int64 { return int64(len(body)+3) / 4 }
