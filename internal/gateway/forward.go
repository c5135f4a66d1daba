package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/tollgate/tollgate/internal/breaker"
	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/embeddings"
	"github.com/tollgate/tollgate/internal/outcome"
	"github.com/tollgate/tollgate/internal/provider"
	"github.com/tollgate/tollgate/internal/route"
)

// failure is an upstream attempt that failed before anything reached the
// client, in a way another attempt may fix: no answer (connect error,
// timeout), or an answer with a retryable status, its body kept so that it
// can still be relayed if no other attempt does better.
type failure struct {
	err        error               // no answer; the client's error if it stays the last
	resp       *http.Response      // the answer, body buffered
	tr         *dialect.Translator // resp came on the translation lane, through tr
	retryAfter time.Duration       // the upstream's retry-after, if any
}

func (f *failure) Error() string {
	if f.err != nil {
		return f.err.Error()
	}
	return "upstream status " + strconv.Itoa(f.resp.StatusCode)
}

// retryableStatus: 429, and every 5xx (529 overloaded included). Other
// 4xx are the request's fault and would fail anywhere.
func retryableStatus(code int) bool { return code == http.StatusTooManyRequests || code >= 500 }

// retryableSend classifies an error from send: a client that left is
// final; an upstream that could not be reached or timed out may be retried.
func retryableSend(x *exchange, err error) error {
	if x.clientGone {
		return err
	}
	return &failure{err: err}
}

// maxFailureBody bounds a buffered error answer.
const maxFailureBody = 1 << 20

// bufferFailure reads a retryable answer whole, so the connection is
// released and the answer can be relayed later if it stays the last. tr is
// the translator of the translation lane, nil on the pass-through lane.
func bufferFailure(resp *http.Response, tr *dialect.Translator) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxFailureBody))
	h := resp.Header.Clone()
	h.Del("Content-Length")
	f := &failure{tr: tr, resp: &http.Response{StatusCode: resp.StatusCode, Header: h,
		Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body))}}
	f.retryAfter = retryAfter(h)
	return f
}

// startFailure is a stream whose first event was a retryable error
// (overloaded, rate limited): body is already the client's JSON error.
func startFailure(resp *http.Response, status int, body []byte) error {
	h := resp.Header.Clone()
	h.Del("Content-Length")
	h.Set("Content-Type", "application/json")
	f := &failure{resp: &http.Response{StatusCode: status, Header: h,
		Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body))}}
	f.retryAfter = retryAfter(h)
	return f
}

// retryAfter reads retry-after-ms or retry-after (seconds).
func retryAfter(h http.Header) time.Duration {
	if ms, err := strconv.ParseInt(h.Get("Retry-After-Ms"), 10, 64); err == nil && ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	if s, err := strconv.ParseInt(h.Get("Retry-After"), 10, 64); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	return 0
}

// attemptHeaders are response headers an attempt may set; a new attempt
// starts without them.
var attemptHeaders = []string{"Tollgate-Cache-Breakpoints", "Tollgate-Dropped-Params", "Tollgate-Adjusted-Params", "Tollgate-Dropped-Betas", "Tollgate-Upstream-Request-Id", "Retry-After", "Retry-After-Ms"}

// forward sends the request to the model's targets, in the order the
// route's picker chooses, until one answers: failures before the first
// byte reaches the client (no connection, a timeout, 429, 5xx) move on to
// the next target. Once the answer has begun, it is never retried. If
// every attempt fails, the last failure is what the client gets.
func (g *Gateway) forward(c *call) error {
	x := c.x
	c.key = c.routingKey()
	c.pick = c.m.Pick(x.start, c.key)
	p := &c.pick
	var last *failure
	for {
		if last != nil && c.form != nil {
			break // a form streamed to one target cannot be sent to another
		}
		t, wait, ok := p.Next()
		if !ok {
			break
		}
		if wait > 0 && !sleep(c.r, wait) {
			p.Abandon()
			if x.shuttingDown() {
				return shutdownError(context.Cause(x.ctx))
			}
			x.clientGone = true
			return errors.New("client went away while waiting to retry")
		}
		if p.Attempts() > 1 {
			for _, h := range attemptHeaders {
				c.w.Header().Del(h)
			}
			x.retries++
		}
		began, waited := time.Now(), x.upstream
		x.upstreamStatus, x.target = 0, t
		err := g.attempt(c, p, t, began, waited)
		f, isFailure := err.(*failure)
		if !isFailure {
			v := verdict(x, err)
			p.Done(v, 0)
			errText := ""
			if v == breaker.Failure {
				errText = firstError(err, x.err)
			}
			x.addAttempt(outcome.Attempt{Target: t.Name, Status: x.upstreamStatus, Error: errText, Time: attemptTime(began, waited, x.upstream)})
			return err
		}
		x.addAttempt(outcome.Attempt{Target: t.Name, Status: x.upstreamStatus, Error: f.Error(), Time: attemptTime(began, waited, x.upstream)})
		v := breaker.Failure
		if f.resp != nil && f.resp.StatusCode == http.StatusTooManyRequests {
			v = breaker.Ignore // busy, not broken: retry-after and key pools deal with it
		}
		p.Done(v, f.retryAfter)
		last = f
	}
	if last == nil { // every breaker open, and no time left to try one anyway
		return &Error{Status: http.StatusServiceUnavailable, Kind: dialect.Unavailable, Header: http.Header{"Retry-After": {"1"}},
			Message: fmt.Sprintf("no target of model %q can be tried now", c.m.Name)}
	}
	if last.err != nil {
		return last.err
	}
	if last.tr != nil {
		return g.translatedError(c, last.resp, last.tr)
	}
	return g.relayBody(c.w, x, last.resp, nil)
}

// attempt sends the request to one target on the lane that fits. If the
// answer is cut after it began (the relay aborts the response), the
// attempt is still recorded and the breaker told, before the abort goes on.
func (g *Gateway) attempt(c *call, p *route.Picker, t *route.Target, began time.Time, waited time.Duration) error {
	x := c.x
	defer func() {
		if r := recover(); r != nil {
			p.Done(breaker.Failure, 0)
			x.addAttempt(outcome.Attempt{Target: t.Name, Status: x.upstreamStatus, Error: firstError(x.err, fmt.Errorf("aborted: %v", r)), Time: attemptTime(began, waited, x.upstream)})
			panic(r)
		}
	}()
	x.provider, x.upstreamModel, x.prices = t.Provider.Name(), t.Model, t.Prices
	speaks := provider.Speaks(t.Provider, x.dialect)
	if c.op == dialect.Embed {
		var wire *embeddings.Wire
		if speaks, wire = embedRoute(t); wire != nil { // readEmbed checked every target
			return g.embedTranslated(c, t, wire)
		}
	}
	if err := c.attemptBody(t, speaks); err != nil {
		return err
	}
	if speaks {
		x.upDialect = x.dialect
		return g.passthrough(c, t)
	}
	x.upDialect = t.Provider.Dialect()
	return g.translated(c, t)
}

// verdict judges an attempt that was not retried: a failure if the
// upstream broke (a stream cut, a 5xx the gateway answered for it), no
// verdict if the client left, else a success (4xx answers included: the
// target works).
func verdict(x *exchange, err error) breaker.Outcome {
	switch {
	case x.clientGone:
		return breaker.Ignore
	case err != nil && gatewayStatus(err) >= 500:
		return breaker.Failure
	case x.err != nil && x.status > 0 && x.status < 400:
		return breaker.Failure // the answer began, then the upstream failed
	}
	return breaker.Success
}

// gatewayStatus is the status of an error the gateway answers itself, 0
// for others. (Kept apart so the success path does not allocate.)
func gatewayStatus(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// attemptTime is an attempt's upstream time when it was measured (the
// exchange's total grew), else the wall time since it began.
func attemptTime(began time.Time, before, after time.Duration) time.Duration {
	if after > before {
		return after - before
	}
	return time.Since(began)
}

func firstError(errs ...error) string {
	for _, e := range errs {
		if e != nil {
			return e.Error()
		}
	}
	return ""
}

// sleep waits d, or until the client leaves (false).
func sleep(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}
