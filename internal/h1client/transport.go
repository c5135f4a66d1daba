// Package h1client is a lean HTTP/1.1 client for plain http:// upstreams.
//
// An exchange runs entirely on the caller's goroutine: there is no read or
// write loop per connection, no per-connection write buffer, and the request
// head and an in-memory body leave in one writev. Idle keep-alive connections
// are pooled per host:port. Anything it does not serve (https, proxies,
// upgrades) goes to a fallback http.RoundTripper, so HTTP/2 upstreams keep
// working through net/http.
package h1client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http/httpguts"
)

const (
	defaultMaxIdlePerHost = 1024
	defaultIdleTimeout    = 90 * time.Second
	defaultReadBufferSize = 4096
	defaultUserAgent      = "Go-http-client/1.1"
)

// defaultDialer matches http.DefaultTransport's dialer.
var defaultDialer = &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}

// Transport is an http.RoundTripper speaking HTTP/1.1 over TCP to http:// URLs.
// Requests it does not serve (https, a proxy configured, Upgrade, CONNECT) go
// to Fallback.
//
// A Transport is safe for concurrent use and must not be copied after first
// use. Its fields must not change once it is in use.
type Transport struct {
	// DialContext dials the TCP connection; nil uses a net.Dialer with a 30s
	// timeout and 30s keep-alive, as http.DefaultTransport does.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)

	// Fallback serves the requests this Transport does not. When nil, such
	// requests fail.
	Fallback http.RoundTripper

	// Proxy is as http.Transport.Proxy: a request for which it returns a
	// non-nil URL goes to Fallback.
	Proxy func(*http.Request) (*url.URL, error)

	// MaxIdleConnsPerHost bounds the idle connections kept per host:port;
	// 0 means 1024.
	MaxIdleConnsPerHost int

	// IdleConnTimeout is how long a connection may stay idle before it is
	// closed; 0 means 90s. It is enforced by one timer per host, not per
	// connection, and again when a connection is checked out.
	IdleConnTimeout time.Duration

	// ResponseHeaderTimeout, if non-zero, bounds the time from the request
	// being written to the response head being read.
	ResponseHeaderTimeout time.Duration

	// ReadBufferSize is the size of each connection's read buffer; 0 means 4096.
	ReadBufferSize int

	pools sync.Map // host:port → *hostPool

	// readers holds the read buffers of connections waiting for a
	// response body's next bytes (*bufio.Reader, each of readBufferSize).
	readers sync.Pool
}

// timeoutError is returned when ResponseHeaderTimeout expires.
type timeoutError struct{ msg string }

func (e *timeoutError) Error() string   { return e.msg }
func (e *timeoutError) Timeout() bool   { return true }
func (e *timeoutError) Temporary() bool { return true }

var errHeaderTimeout net.Error = &timeoutError{"h1client: timeout awaiting response headers"}

func (t *Transport) maxIdlePerHost() int {
	if t.MaxIdleConnsPerHost > 0 {
		return t.MaxIdleConnsPerHost
	}
	return defaultMaxIdlePerHost
}

func (t *Transport) idleTimeout() time.Duration {
	if t.IdleConnTimeout > 0 {
		return t.IdleConnTimeout
	}
	return defaultIdleTimeout
}

func (t *Transport) readBufferSize() int {
	if t.ReadBufferSize > 0 {
		return t.ReadBufferSize
	}
	return defaultReadBufferSize
}

// CloseIdleConnections closes the idle connections of every host, and calls
// Fallback's CloseIdleConnections if it has one.
func (t *Transport) CloseIdleConnections() {
	t.pools.Range(func(_, v any) bool {
		v.(*hostPool).closeIdle()
		return true
	})
	if ci, ok := t.Fallback.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

// RoundTrip implements http.RoundTripper. As with any RoundTripper, the
// request body is always closed, also on error.
//
// Being single-goroutine, it differs from http.Transport in a few ways: the
// body is sent at once even with "Expect: 100-continue"; an answer that
// arrives while a large body is still being written is seen only once the
// write ends or fails (a server that answers early and hangs up is handled);
// a request body whose Read blocks is not interrupted by the context; and
// response trailers are read and dropped (Response.Trailer stays nil).
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil {
		closeReqBody(req)
		return nil, errors.New("h1client: nil Request.URL")
	}
	if req.Header == nil {
		closeReqBody(req)
		return nil, errors.New("h1client: nil Request.Header")
	}
	own, err := t.serves(req)
	if err != nil {
		closeReqBody(req)
		return nil, err
	}
	if !own {
		if t.Fallback == nil {
			closeReqBody(req)
			return nil, fmt.Errorf("h1client: no Fallback for %s request to %s://%s", valueOr(req.Method, "GET"), req.URL.Scheme, req.URL.Host)
		}
		return t.Fallback.RoundTrip(req)
	}
	return t.roundTrip(req)
}

// serves reports whether the request is one for plain HTTP/1.1 over TCP.
func (t *Transport) serves(req *http.Request) (bool, error) {
	if req.URL.Scheme != "http" || req.Method == http.MethodConnect {
		return false, nil
	}
	if len(req.Header["Upgrade"]) > 0 || httpguts.HeaderValuesContainsToken(req.Header["Connection"], "upgrade") {
		return false, nil
	}
	if t.Proxy != nil {
		u, err := t.Proxy(req)
		if err != nil {
			return false, fmt.Errorf("h1client: proxy: %w", err)
		}
		if u != nil {
			return false, nil
		}
	}
	return true, nil
}

func (t *Transport) roundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if req.URL.Host == "" {
		closeReqBody(req)
		return nil, errors.New("h1client: no Host in request URL")
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	host = removeZone(strings.TrimSuffix(host, ":"))
	if !httpguts.ValidHostHeader(host) {
		closeReqBody(req)
		return nil, fmt.Errorf("h1client: invalid Host header %q", host)
	}
	method := valueOr(req.Method, http.MethodGet)
	if !httpguts.ValidHeaderFieldName(method) { // a method is a token, as a field name is
		closeReqBody(req)
		return nil, fmt.Errorf("h1client: invalid method %q", method)
	}
	uri := req.URL.RequestURI()
	if strings.ContainsAny(uri, " \r\n") {
		closeReqBody(req)
		return nil, fmt.Errorf("h1client: invalid request URI %q", uri)
	}
	hasClose := httpguts.HeaderValuesContainsToken(req.Header["Connection"], "close")

	ob, err := prepareBody(req, method)
	if err != nil {
		closeReqBody(req)
		return nil, err
	}
	hp := headPool.Get().(*[]byte)
	defer putHead(hp)
	head, err := appendHead((*hp)[:0], req, method, uri, host, &ob, req.Close && !hasClose)
	*hp = head[:0]
	if err != nil {
		ob.close()
		return nil, err
	}

	p := t.pool(hostPort(req.URL))
	for attempt := 0; ; attempt++ {
		c, err := p.get(ctx, attempt > 0)
		if err != nil {
			ob.close()
			return nil, err
		}
		resp, retry, err := t.exchange(ctx, req, c, head, &ob, req.Close || hasClose)
		if err == nil {
			return resp, nil
		}
		// A reused connection may have been closed by the server just as we
		// sent on it; one retry on a fresh connection, never more.
		if !retry || attempt > 0 || ob.rewind(req) != nil {
			ob.close()
			return nil, err
		}
	}
}

// exchange sends the request on c and reads the response head. retry reports
// that the failure happened on a reused connection before any byte of the
// response, with a request that may be sent again.
func (t *Transport) exchange(ctx context.Context, req *http.Request, c *conn, head []byte, ob *outBody, reqClose bool) (resp *http.Response, retry bool, err error) {
	var stop func() bool
	if ctx.Done() != nil {
		// Cancellation moves the deadline into the past, which unblocks any
		// read or write on c; no goroutine waits on the context.
		stop = context.AfterFunc(ctx, c.abort)
	}
	if ctx.Err() != nil {
		abandon(c, stop)
		return nil, false, ctxError(ctx, "write request")
	}
	n, srcErr, err := c.writeRequest(head, ob, req.Trailer)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			err = ctxError(ctx, "write request")
		case srcErr:
		case n >= int64(len(head)) && peerGone(err):
			// The server may have answered (say 413) and hung up before
			// taking the whole body: hand that answer back if it is there.
			resp, readAny, rerr := t.readResponse(ctx, req, c, stop, true)
			if rerr == nil {
				ob.close()
				return resp, false, nil
			}
			return nil, c.reused && !readAny && replayable(req, ob), fmt.Errorf("h1client: write request: %w", err)
		default:
			retry = c.reused && (n == 0 || replayable(req, ob))
			err = fmt.Errorf("h1client: write request: %w", err)
		}
		abandon(c, stop)
		return nil, retry, err
	}
	ob.close()
	resp, readAny, err := t.readResponse(ctx, req, c, stop, reqClose)
	if err != nil {
		var ne net.Error
		timedOut := errors.As(err, &ne) && ne.Timeout()
		return nil, c.reused && !readAny && !timedOut && ctx.Err() == nil && replayable(req, ob), err
	}
	return resp, false, nil
}

// readResponse reads the response head from c and wires the body to the
// connection's lifetime. readAny reports whether any response byte arrived.
// On error c is closed.
func (t *Transport) readResponse(ctx context.Context, req *http.Request, c *conn, stop func() bool, noReuse bool) (resp *http.Response, readAny bool, err error) {
	rht := t.ResponseHeaderTimeout
	if rht > 0 {
		c.nc.SetReadDeadline(time.Now().Add(rht))
	}
	// Checked after setting the deadline: a cancellation that already moved
	// the deadline would otherwise be overwritten.
	if ctx.Err() != nil {
		abandon(c, stop)
		return nil, false, ctxError(ctx, "await response")
	}
	c.waitReadable() // a model may think for a while before its first byte
	if _, err := c.br.Peek(1); err != nil {
		abandon(c, stop)
		if err == io.EOF {
			err = errServerClosed
		} else {
			err = fmt.Errorf("h1client: read response: %w", err)
		}
		return nil, false, headReadError(ctx, err, rht > 0)
	}
	b, err := readResponse(&c.src, c.br, &c.tp, valueOr(req.Method, http.MethodGet))
	if rht > 0 {
		c.nc.SetReadDeadline(time.Time{})
	}
	if err != nil {
		abandon(c, stop)
		return nil, true, headReadError(ctx, err, rht > 0)
	}
	if ctx.Err() != nil {
		abandon(c, stop)
		return nil, true, ctxError(ctx, "read response")
	}
	b.resp.Request = req
	b.c, b.ctx, b.stop = c, ctx, stop
	if noReuse {
		b.reuse = false
	}
	if b.kind == kindNone {
		b.state.Store(stateDone)
		b.release(true)
		b.resp.Body = http.NoBody
	} else {
		b.resp.Body = b
	}
	return &b.resp, true, nil
}

func headReadError(ctx context.Context, err error, rht bool) error {
	if ctx.Err() != nil {
		return ctxError(ctx, "read response")
	}
	if rht && errors.Is(err, os.ErrDeadlineExceeded) {
		return errHeaderTimeout
	}
	return err
}

// abandon ends an exchange that failed before a response was handed out.
func abandon(c *conn, stop func() bool) {
	if stop != nil {
		stop()
	}
	c.close()
}

func ctxError(ctx context.Context, op string) error {
	return fmt.Errorf("h1client: %s: %w", op, ctx.Err())
}

// replayable mirrors net/http: the body can be produced again and the method
// is idempotent or the request carries an idempotency key.
func replayable(req *http.Request, ob *outBody) bool {
	if !ob.rewindable(req) {
		return false
	}
	switch valueOr(req.Method, http.MethodGet) {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	_, k1 := req.Header["Idempotency-Key"]
	_, k2 := req.Header["X-Idempotency-Key"]
	return k1 || k2
}

func (t *Transport) pool(key string) *hostPool {
	if v, ok := t.pools.Load(key); ok {
		return v.(*hostPool)
	}
	v, _ := t.pools.LoadOrStore(key, &hostPool{t: t, key: key})
	return v.(*hostPool)
}

// hostPort is the dial address and pool key: host:port with the port made explicit.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	return net.JoinHostPort(u.Hostname(), "80")
}

// removeZone drops an IPv6 zone from a Host header value: it means nothing to
// the server.
func removeZone(host string) string {
	if !strings.HasPrefix(host, "[") {
		return host
	}
	i := strings.LastIndex(host, "]")
	if i < 0 {
		return host
	}
	j := strings.LastIndex(host[:i], "%")
	if j < 0 {
		return host
	}
	return host[:j] + host[i:]
}

func valueOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func closeReqBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}
