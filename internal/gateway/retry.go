package gateway

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"github.com/tollgate/tollgate/internal/breaker"
	"github.com/tollgate/tollgate/internal/provider"
	"github.com/tollgate/tollgate/internal/route"
)

// failure is an upstream attempt that failed before anything reached the
// client, in a way another attempt may fix: no answer (connect error,
// timeout), or an answer with a retryable status, its body kept so that it
// can still be relayed if no other attempt does better.
type failure struct {
	err        error          // no answer; the client's error if it stays the last
	resp       *http.Response // the answer, body buffered
	translated bool           // resp came on the translation lane
	retryAfter time.Duration  // the upstream's retry-after, if any
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
// released and the answer can be relayed later if it stays the last.
func bufferFailure(resp *http.Response, translated bool) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxFailureBody))
	h := resp.Header.Clone()
	h.Del("Content-Length")
	f := &failure{translated: translated, resp: &http.Response{StatusCode: resp.StatusCode, Header: h,
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
var attemptHeaders = []string{"Tollgate-Dropped-Params", "Tollgate-Adjusted-Params", "Tollgate-Upstream-Request-Id", "Retry-After", "Retry-After-Ms"}

// Backoff between attempts on a target that already failed this request.
const (
	backoffBase = 100 * time.Millisecond
	backoffMax  = 2 * time.Second
)

// forward sends the request to the model's targets in the order of its
// plan until one answers: failures before the first byte reaches the
// client (no connection, a timeout, 429, 5xx) move on to the next target,
// within the model's max_attempts and retry_deadline. A target whose
// circuit breaker is open is skipped without a network call, unless no
// target is left to try: then the open ones are tried too, rather than
// refusing while attempts remain. Once the
// answer has begun, it is never retried. If every attempt fails, the last
// failure is what the client gets.
func (g *Gateway) forward(w http.ResponseWriter, r *http.Request, x *exchange, m *route.Model, body []byte, s scanned, ep provider.Endpoint) error {
	plan := m.Plan()
	deadline := x.start.Add(m.RetryDeadline)
	var last *failure
	var waitUntil []time.Time // per place in the plan: not before, after a retry-after
	attempts, skipped, forced := 0, 0, false
	// tried marks the targets this request has tried. After a pass, those
	// it skipped because their breaker is open, but which answered well in
	// the breaker's window, are tried before any is tried again: a flaky
	// target is a better bet than one that has just failed this request,
	// and a dead one is not asked.
	var tried []bool
	untried := false
	for k := 0; attempts < m.MaxAttempts && k < 4*len(plan)*m.MaxAttempts; k++ {
		i := k % len(plan)
		t := plan[i]
		if i == 0 && k > 0 {
			untried = false
			for j := range tried {
				untried = untried || !tried[j] && plan[j].Breaker.Recovering()
			}
		}
		if untried && (tried[i] || !t.Breaker.Recovering()) {
			continue // a second pass: targets not yet tried that still often work
		}
		if skipped >= len(plan) {
			// A whole turn and nothing could be tried: every breaker is
			// open (or past the deadline). Rather than give up while
			// attempts remain, try the targets anyway, as a probe would.
			if forced || time.Now().After(deadline) {
				break
			}
			forced, skipped = true, 0
		}
		allowed := t.Breaker.Allow()
		if !allowed && !forced && !untried {
			skipped++
			continue
		}
		if attempts > 0 {
			wait := time.Duration(0)
			if k >= len(plan) { // the plan again: back off
				wait = rand.N(min(backoffBase<<(k/len(plan)-1), backoffMax))
			}
			if waitUntil != nil {
				wait = max(wait, time.Until(waitUntil[i]))
			}
			if time.Now().Add(wait).After(deadline) {
				if allowed {
					t.Breaker.Done(breaker.Ignore)
				}
				skipped++
				continue // this target cannot be tried in time; perhaps another can
			}
			if wait > 0 && !sleep(r, wait) {
				if allowed {
					t.Breaker.Done(breaker.Ignore)
				}
				x.clientGone = true
				return errors.New("client went away while waiting to retry")
			}
			for _, h := range attemptHeaders {
				w.Header().Del(h)
			}
			x.retries++
		}
		skipped = 0
		attempts++
		if len(plan) > 1 {
			if tried == nil {
				tried = make([]bool, len(plan))
			}
			tried[i] = true
		}
		began, waited := time.Now(), x.upstream
		x.upstreamStatus, x.target = 0, &plan[i]
		err := g.attempt(w, r, x, m, t, body, s, ep, allowed, began, waited)
		f, ok := err.(*failure)
		if !ok {
			v := verdict(x, err)
			if allowed {
				t.Breaker.Done(v)
			}
			errText := ""
			if v == breaker.Failure {
				errText = firstError(err, x.err)
			}
			x.addAttempt(attempt{t.Name, x.upstreamStatus, errText, attemptTime(began, waited, x.upstream)})
			return err
		}
		x.addAttempt(attempt{t.Name, x.upstreamStatus, f.Error(), attemptTime(began, waited, x.upstream)})
		if allowed {
			if f.resp != nil && f.resp.StatusCode == http.StatusTooManyRequests {
				t.Breaker.Done(breaker.Ignore) // busy, not broken: retry-after and key pools deal with it
			} else {
				t.Breaker.Done(breaker.Failure)
			}
		}
		last = f
		if f.retryAfter > 0 {
			if waitUntil == nil {
				waitUntil = make([]time.Time, len(plan))
			}
			waitUntil[i] = time.Now().Add(f.retryAfter)
		}
	}
	if last.err != nil {
		return last.err
	}
	if last.translated {
		return g.translatedError(w, x, last.resp)
	}
	return g.relayBody(w, x, last.resp, false)
}

// attempt sends the request to one target on the lane that fits. If the
// answer is cut after it began (the relay aborts the response), the
// attempt is still recorded and the breaker told, before the abort goes on.
func (g *Gateway) attempt(w http.ResponseWriter, r *http.Request, x *exchange, m *route.Model, t route.Target, body []byte, s scanned, ep provider.Endpoint, allowed bool, began time.Time, waited time.Duration) error {
	defer func() {
		if p := recover(); p != nil {
			if allowed {
				t.Breaker.Done(breaker.Failure)
			}
			x.addAttempt(attempt{t.Name, x.upstreamStatus, firstError(x.err, fmt.Errorf("aborted: %v", p)), attemptTime(began, waited, x.upstream)})
			panic(p)
		}
	}()
	if t.Provider.Speaks(x.dialect) {
		return g.passthrough(w, r, x, m, t, body, s, ep)
	}
	return g.translated(w, r, x, m, t, body, s, ep)
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
