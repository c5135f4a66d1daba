package gateway

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/meter"
	"github.com/tollgate/tollgate/internal/provider"
	"github.com/tollgate/tollgate/internal/scrub"
	"github.com/tollgate/tollgate/internal/sse"
)

// The relay both lanes share: send a request upstream, and relay the
// answer to the client as it arrives, a whole body or event by event
// through a tap.

const (
	// relayBufSize is the read buffer of a whole answer: big reads for
	// big bodies.
	relayBufSize = 32 << 10
	// waitBufSize is the read buffer a stream waits on for its next
	// event, held for all of its life: a stream spends most of it waiting,
	// and thousands held open cost half a KiB each for it. Most events fit;
	// a read that fills it moves to a buffer of streamBufSize.
	waitBufSize = 512
	// streamBufSize is the read buffer of a stream while events flow,
	// borrowed from a pool and given back when the stream is idle again;
	// an event larger than it grows it.
	streamBufSize = 4 << 10
	// maxEventBytes bounds one SSE event (and a buffered JSON answer) from an
	// upstream; the official SDKs accept data lines up to 32 MiB.
	maxEventBytes = 32 << 20
)

var (
	relayBufPool  = sync.Pool{New: func() any { b := make([]byte, relayBufSize); return &b }}
	streamBufPool = sync.Pool{New: func() any { b := make([]byte, streamBufSize); return &b }}
	waitBufPool   = sync.Pool{New: func() any { b := make([]byte, waitBufSize); return &b }}
)

// credentialRefused reports an upstream status that refuses the gateway's
// own credential or account rather than the client's request.
func credentialRefused(status int) bool {
	return status == http.StatusUnauthorized || status == http.StatusForbidden || status == http.StatusPaymentRequired
}

// upstreamCredentialError answers an upstream's refusal of the gateway's
// credential or account, on either lane (the HTTP providers report a
// refused credential as a *provider.AuthError: upstreamAuthError). A 401
// would tell the client its own key is bad (and SDKs would not retry),
// and the upstream's text is not relayed: it names the provider account
// and quotes part of its key. The log and the ledger get that text.
func upstreamCredentialError(x *exchange, resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	return refusedCredential(x, resp.StatusCode, b)
}

// refusedCredential is upstreamCredentialError for an answer's status
// and body (or a stream's first event, as its dialect's error).
func refusedCredential(x *exchange, status int, body []byte) error {
	msg := fmt.Sprintf("the gateway could not authenticate to the upstream provider %q", x.provider)
	if status == http.StatusPaymentRequired {
		msg = fmt.Sprintf("upstream provider %q rejected the gateway's credential or account (status 402)", x.provider)
	}
	return credentialError(msg+"; the operator must fix its configuration",
		fmt.Errorf("upstream status %d: %s", status, dialect.Clip(string(bytes.TrimSpace(body)))))
}

// upstreamAuthError answers an exchange whose credential the upstream
// refused or that could not be obtained: the operator's to fix, never
// the client's.
func upstreamAuthError(x *exchange, ae *provider.AuthError) error {
	if ae.Fetch {
		return credentialError(fmt.Sprintf("the gateway could not obtain credentials for the upstream provider %q; the operator must fix its configuration", x.provider), ae)
	}
	x.upstreamStatus = ae.Status
	return credentialError(fmt.Sprintf("the gateway could not authenticate to the upstream provider %q; the operator must fix its configuration", x.provider), ae)
}

// credentialError is the one answer to every upstream credential failure:
// 502 upstream_auth_failed, not to be retried by the client.
func credentialError(msg string, cause error) *Error {
	return &Error{Status: http.StatusBadGateway, Kind: dialect.Upstream, Code: "upstream_auth_failed",
		Header: http.Header{"X-Should-Retry": {"false"}}, Message: msg, Err: cause}
}

// send performs the upstream exchange and records its status and time on
// x. The caller must call done when it has finished with resp.
func (g *Gateway) send(r *http.Request, x *exchange, p provider.Provider, req *provider.Request) (resp *http.Response, done func(), err error) {
	start := time.Now()
	x.sendStart, x.earlierWaits = start, x.upstream
	x.writeBy = time.Time{}
	if tt, ok := p.(interface{ TotalTimeout() time.Duration }); ok && tt.TotalTimeout() > 0 {
		// Past the exchange's total, a client that does not read is not
		// waited for; a second is left to write the stream's end.
		x.writeBy = start.Add(tt.TotalTimeout() + time.Second)
	}
	resp, err = p.Do(r.Context(), req)
	if err != nil {
		x.upstream += time.Since(start)
		return nil, nil, g.upstreamFailure(r, x, err)
	}
	x.upstreamStatus = resp.StatusCode
	return resp, func() {
		resp.Body.Close()
		x.upstream += time.Since(start) // every attempt's wait counts
	}, nil
}

// upstreamFailure turns a failed exchange (no response) into the client's error.
func (g *Gateway) upstreamFailure(r *http.Request, x *exchange, err error) error {
	if shuttingDown(r) {
		return shutdownError(err)
	}
	if r.Context().Err() != nil {
		x.clientGone = true
		return fmt.Errorf("client went away: %w", err)
	}
	if ae, ok := errors.AsType[*provider.AuthError](err); ok {
		return upstreamAuthError(x, ae)
	}
	if provider.IsTimeout(err) {
		return &Error{Status: http.StatusGatewayTimeout, Kind: dialect.Timeout, Err: err,
			Message: fmt.Sprintf("upstream provider %q did not answer in time", x.provider)}
	}
	return &Error{Status: http.StatusBadGateway, Kind: dialect.Upstream, Err: err,
		Message: fmt.Sprintf("upstream provider %q could not be reached", x.provider)}
}

func isEventStream(h http.Header) bool {
	ct := h.Get("Content-Type")
	if !strings.HasPrefix(ct, "text/event-stream") {
		return false
	}
	mt, _, _ := mime.ParseMediaType(ct)
	return mt == "text/event-stream"
}

// relayBody relays a whole (non-stream) answer as it arrives. With usage
// set it keeps the bytes and reads usage from the finished JSON with it.
func (g *Gateway) relayBody(w http.ResponseWriter, x *exchange, resp *http.Response, usage func(*meter.Usage, []byte)) error {
	meter := usage != nil
	bp := relayBufPool.Get().(*[]byte)
	buf := (*bp)[:0]
	defer func() {
		if cap(buf) == relayBufSize {
			*bp = buf[:relayBufSize]
			relayBufPool.Put(bp)
		}
	}()
	// Read what fits in the buffer before answering (most answers whole):
	// an upstream that fails this early has sent the client nothing, and
	// another target can still be tried.
	eof := false
	for len(buf) < cap(buf) {
		n, rerr := resp.Body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if rerr == io.EOF {
			eof = true
			break
		}
		if rerr != nil {
			return &failure{err: g.upstreamFailureAfterStatus(x, rerr)}
		}
	}
	h := w.Header()
	copyResponseHeader(h, resp.Header, x.limitHeaders)
	if resp.ContentLength >= 0 {
		h.Set("Content-Length", strconv.FormatInt(resp.ContentLength, 10))
	}
	x.status, x.firstByte = resp.StatusCode, time.Since(x.start)
	g.answerHeaders(h, x)
	rc := http.NewResponseController(w)
	x.writeDeadline(rc)
	w.WriteHeader(resp.StatusCode)
	if _, err := w.Write(buf); err != nil {
		x.clientGone = true
		return fmt.Errorf("writing to client: %w", err)
	}
	if !meter {
		buf = buf[:0]
	}
	for !eof {
		if len(buf) == cap(buf) {
			if !meter || cap(buf) >= maxEventBytes {
				buf = buf[:0] // keep relaying, stop keeping
				meter = false
			} else {
				buf = append(buf, 0)[:len(buf)]
			}
		}
		n, rerr := resp.Body.Read(buf[len(buf):cap(buf)])
		if n > 0 {
			x.writeDeadline(rc)
			if _, err := w.Write(buf[len(buf) : len(buf)+n]); err != nil {
				x.clientGone = true
				return fmt.Errorf("writing to client: %w", err)
			}
			buf = buf[:len(buf)+n]
			if !meter {
				buf = buf[:0]
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			// The status is out; all that is left is to cut the response so
			// the client cannot take a truncated body for a whole one.
			x.err = fmt.Errorf("upstream body interrupted: %w", rerr)
			panic(http.ErrAbortHandler)
		}
	}
	if meter {
		usage(&x.usage, buf)
	}
	return nil
}

// relayStream relays an SSE answer event by event, flushing as events
// arrive, with tap reading usage on the way. The status is not sent until
// the first event has arrived and is not an error: until then a failure is
// still an ordinary JSON error response. After that, a cut, failed or idle
// upstream ends the stream with a protocol error event, never with a
// made-up normal ending.
func (g *Gateway) relayStream(w http.ResponseWriter, r *http.Request, x *exchange, resp *http.Response, tap dialect.Tap) error {
	var sb streamBuf
	defer sb.close()
	buf := sb.wait()
	rc := http.NewResponseController(w)
	committed := false
	var ka *keepalive // keep-alive pings, for taps that can make them
	n := 0
	filled := false // the last read filled the room it was given: more is likely at hand
	for {
		if n == 0 && !filled {
			buf = sb.wait() // between events: wait for the next on the small buffer
		}
		if n == len(buf) && len(buf) >= maxEventBytes {
			return g.endStream(w, rc, r, x, tap, committed, errEventTooLarge)
		}
		if n == len(buf) || filled && len(buf) < streamBufSize {
			buf = sb.grow(buf, n) // an event larger than the buffer, or events flowing
		}
		nr, rerr := resp.Body.Read(buf[n:])
		filled = nr == len(buf)-n
		n += nr
		if !committed {
			ev, found := firstDataEvent(buf[:n])
			if !found && rerr == nil {
				continue
			}
			if found {
				if status, body, isErr := tap.StartError(ev); isErr {
					// body may be ev's bytes, whose buffer goes back to
					// its pool on return; a failure is read after that.
					body = bytes.Clone(body)
					// P4: an error as the first event becomes a JSON error,
					// or, if it is one another target may not have, a retry.
					x.usage = tap.Usage()
					switch {
					case credentialRefused(status): // an authentication_error event: not the client's key
						return refusedCredential(x, status, body)
					case retryableStatus(status):
						return startFailure(resp, status, body)
					}
					return g.writeUpstreamError(w, x, resp, status, body)
				}
			}
			if !found {
				return g.endStream(w, rc, r, x, tap, false, rerr)
			}
			h := w.Header()
			copyResponseHeader(h, resp.Header, x.limitHeaders)
			if f, ok := tap.(dialect.Framer); ok {
				h.Set("Content-Type", f.ContentType())
			}
			h.Set("Cache-Control", "no-cache")
			h.Set("X-Accel-Buffering", "no") // tell buffering proxies in front not to hold events
			x.status, x.firstByte = resp.StatusCode, time.Since(x.start)
			g.answerHeaders(h, x)
			w.WriteHeader(resp.StatusCode)
			committed = true
			x.relayed = &relayed{}
			if g.metrics != nil {
				g.metrics.StreamStarted()
				defer g.metrics.StreamEnded()
			}
			if p, ok := tap.(pinger); ok {
				ka = startKeepalive(w, rc, p.ping(), x.writeDeadline)
				defer ka.close()
			}
		}
		ka.lock()
		x.writeDeadline(rc)
		consumed, err := writeEvents(w, buf[:n], tap, x.relayed)
		if x.bodyFreeOnStart && consumed > 0 {
			x.bodyFreeOnStart = false // decided on the first whole events
			g.releaseBodyIfReported(x, tap.Usage())
		}
		if err == nil && consumed > 0 {
			rc.Flush()
		}
		ka.unlock()
		if err != nil {
			x.clientGone = true
			x.usage = tap.Usage()
			return fmt.Errorf("writing to client: %w", err)
		}
		if consumed > 0 {
			n = copy(buf, buf[consumed:n])
		}
		if rerr != nil {
			ka.close() // the end of the stream is written alone
			ka = nil
			return g.endStream(w, rc, r, x, tap, true, rerr)
		}
	}
}

// streamBuf is a stream's read buffer: a small one to wait on, for all of
// the stream's life, and a bigger one borrowed while events flow.
type streamBuf struct {
	small, pooled *[]byte
}

// wait returns the small buffer, giving back any bigger one.
func (s *streamBuf) wait() []byte {
	if s.pooled != nil {
		streamBufPool.Put(s.pooled)
		s.pooled = nil
	}
	if s.small == nil {
		s.small = waitBufPool.Get().(*[]byte)
	}
	return *s.small
}

// grow returns a bigger buffer than buf, the pooled one or one twice its
// size, beginning with buf's first n bytes.
func (s *streamBuf) grow(buf []byte, n int) []byte {
	var nb []byte
	if len(buf) < streamBufSize {
		s.pooled = streamBufPool.Get().(*[]byte)
		nb = *s.pooled
	} else {
		nb = make([]byte, 2*len(buf))
	}
	copy(nb, buf[:n])
	if s.pooled != nil && len(buf) >= streamBufSize {
		streamBufPool.Put(s.pooled) // buf was the pooled buffer: it is copied
		s.pooled = nil
	}
	return nb
}

// close gives back both buffers; the stream reads no more.
func (s *streamBuf) close() {
	s.wait()
	waitBufPool.Put(s.small)
	s.small = nil
}

// releaseBodyIfReported gives the request body back, and its part of the
// buffer budget, when the stream's first events carry the prompt's usage
// (an Anthropic message_start does): a stream may last minutes, and an
// agent's request is 50–200 KB. Without that usage the body stays, for
// the estimate should the stream end before its usage.
func (g *Gateway) releaseBodyIfReported(x *exchange, u meter.Usage) {
	if x.body == nil || u.TotalInput() == 0 {
		return
	}
	x.body.release()
	x.body, x.reqBody = nil, nil
	g.buffered.release(x)
}

var (
	errEventTooLarge     = errors.New("upstream event larger than 32 MiB")
	errStreamEndedEarly  = errors.New("upstream stream ended before its final event")
	errNoEventBeforeStop = errors.New("upstream closed the stream before sending any event")
)

// endStream ends a stream whose upstream body ended (io.EOF) or failed.
// Before the status is sent a failure is a JSON error; after, the tap
// writes what ends the stream: nothing more after a normal end, else a
// protocol error event.
func (g *Gateway) endStream(w http.ResponseWriter, rc *http.ResponseController, r *http.Request, x *exchange, tap dialect.Tap, committed bool, cause error) error {
	x.usage = tap.Usage()
	if r.Context().Err() != nil && !shuttingDown(r) {
		x.clientGone = true
		return fmt.Errorf("client went away: %w", cause)
	}
	eof := cause == io.EOF
	msg := "upstream stream interrupted"
	switch {
	case shuttingDown(r):
		if !committed {
			return shutdownError(cause)
		}
		cause, msg = ErrShuttingDown, "the gateway is shutting down and ended this stream after its drain time"
	case eof && committed:
		cause = errStreamEndedEarly
		msg = "upstream stream ended before its final event"
	case eof:
		cause = errNoEventBeforeStop
		msg = "upstream closed the stream before sending any event"
	case cause == errEventTooLarge:
		msg = "upstream sent an event larger than 32 MiB"
	case errors.Is(cause, provider.ErrIdleTimeout):
		msg = "upstream sent nothing for longer than its idle timeout"
	case provider.IsTimeout(cause):
		msg = "upstream stream timed out"
	}
	if !committed {
		k, status := dialect.Upstream, http.StatusBadGateway
		if provider.IsTimeout(cause) {
			k, status = dialect.Timeout, http.StatusGatewayTimeout
		}
		return &Error{Status: status, Kind: k, Message: msg + " (provider " + strconv.Quote(x.provider) + ")", Err: cause}
	}
	tail, clean := tap.Close(eof, msg)
	x.usage = tap.Usage()
	if !clean {
		x.err = cause
	}
	if len(tail) > 0 {
		x.writeDeadline(rc)
		if _, err := w.Write(tail); err != nil {
			x.clientGone = true
		}
		rc.Flush()
	}
	return nil
}

// writeUpstreamError answers with an upstream error that arrived as the
// first stream event, as an ordinary JSON error response.
func (g *Gateway) writeUpstreamError(w http.ResponseWriter, x *exchange, resp *http.Response, status int, body []byte) error {
	if clean := scrub.Bytes(body); !bytes.Equal(clean, body) {
		// It named the operator's account: the log keeps its words.
		g.log.Warn("upstream error event scrubbed for the client", "request_id", x.id, "upstream_error", string(body))
		body = clean
	}
	h := w.Header()
	copyResponseHeader(h, resp.Header, x.limitHeaders)
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	x.status, x.firstByte = status, time.Since(x.start)
	x.err = fmt.Errorf("upstream stream began with an error event (status %d)", status)
	g.answerHeaders(h, x)
	w.WriteHeader(status)
	w.Write(body)
	return nil
}

// firstDataEvent returns the first complete event in b that carries data.
func firstDataEvent(b []byte) ([]byte, bool) {
	for len(b) > 0 {
		k := sse.Split(b)
		if k == 0 {
			return nil, false
		}
		if hasDataField(b[:k]) {
			return b[:k], true
		}
		b = b[k:]
	}
	return nil, false
}

// writeEvents passes the complete events at the start of b through tap and
// writes what it keeps, in as few writes as possible, noting each in rel.
// It returns how many bytes of b it consumed.
func writeEvents(w io.Writer, b []byte, tap dialect.Tap, rel *relayed) (int, error) {
	consumed, from := 0, 0
	for {
		k := sse.Split(b[consumed:])
		if k == 0 {
			break
		}
		ev := b[consumed : consumed+k]
		rel.add(ev)
		if out := tap.Feed(ev); !sameBytes(out, ev) {
			if consumed > from {
				if _, err := w.Write(b[from:consumed]); err != nil {
					return consumed, err
				}
			}
			if len(out) > 0 {
				if _, err := w.Write(out); err != nil {
					return consumed, err
				}
			}
			from = consumed + k
		}
		consumed += k
	}
	if consumed > from {
		if _, err := w.Write(b[from:consumed]); err != nil {
			return consumed, err
		}
	}
	return consumed, nil
}

func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// hasDataField reports whether an event has a data line.
func hasDataField(ev []byte) bool {
	var f sse.Fields
	f.Parse(ev)
	return f.Data != nil
}
