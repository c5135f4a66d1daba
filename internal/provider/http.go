package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tollgate/tollgate/internal/affinity"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/embeddings"
	"github.com/tollgate/tollgate/internal/h1client"
)

// ErrIdleTimeout is the cause of an exchange aborted because the upstream
// sent nothing for longer than its idle timeout.
var ErrIdleTimeout = errors.New("upstream idle timeout")

// errTotalTimeout is the cause of an exchange that outlived its total timeout.
var errTotalTimeout = errors.New("upstream total timeout")

var jsonContentType = []string{"application/json"}

// HTTPSpec is what distinguishes one HTTP API from another: its dialect,
// the path of each operation under base_url, and how the credential is
// sent.
type HTTPSpec struct {
	Dialect *dialect.Dialect
	// Paths are the operations the API serves, under base_url.
	Paths map[dialect.Op]string
	// Embeddings, when set, names the shape in which the API takes
	// embeddings requests for a model (dialect.Embed), when it is not
	// OpenAI's; nil from it: the model makes none.
	Embeddings func(model string) *embeddings.Wire
	// Auth returns the header that carries a credential, and its value.
	Auth func(key string) (name, value string)
	// Header, when set, adds the API's required headers to each request.
	Header func(h http.Header)

	// The hooks below let a cloud carry a dialect over its own transport
	// (see bedrock.go): the model in the URL, another body, a signature,
	// another framing of the answer.

	// URL, when set, builds each request's URL from base_url (parsed) and
	// the request, instead of Paths; ok false: the API does not serve the
	// operation.
	URL func(base *url.URL, r *Request) (u *url.URL, ok bool)
	// Body, when set, rewrites the dialect's body into the API's.
	Body func(r *Request) ([]byte, error)
	// Sign, when set, authenticates each request as sent (body is what it
	// carries), after Auth and Header. Its failure is the credential's
	// (Do returns it as an *AuthError).
	Sign func(ctx context.Context, req *http.Request, body []byte) error
	// Response, when set, turns the API's answer into the dialect's (its
	// error shapes into the dialect's envelope, its stream framing into
	// server-sent events).
	Response func(resp *http.Response, r *Request) *http.Response
	// Credentials, when set, says where a cloud's credentials come from
	// (check-config shows it).
	Credentials string
}

// HTTP is an upstream reached over HTTP that speaks its dialect as it is
// (the Anthropic Messages API, an OpenAI-compatible Chat Completions API).
// It is safe for concurrent use.
type HTTP struct {
	name     string
	spec     HTTPSpec
	authName string                  // the credential header, canonical
	urls     map[dialect.Op]*url.URL // shared, never modified
	base     *url.URL                // base_url, for spec.URL
	// keys are the credentials, used in turn; none for keyless upstreams.
	keys     []*poolKey
	next     atomic.Uint64
	rt       http.RoundTripper
	idle     time.Duration
	total    time.Duration
	closeIdl func()
}

var _ Provider = (*HTTP)(nil)

// TotalTimeout is the most one exchange may last; 0 is no limit.
func (h *HTTP) TotalTimeout() time.Duration { return h.total }

// NewHTTP builds an HTTP provider for p that speaks spec's API.
func NewHTTP(p config.Provider, spec HTTPSpec) (*HTTP, error) {
	h := &HTTP{
		name:  p.Name,
		spec:  spec,
		idle:  p.Timeouts.Idle,
		total: p.Timeouts.Total,
		urls:  make(map[dialect.Op]*url.URL),
	}
	base := strings.TrimRight(p.BaseURL, "/")
	if spec.URL != nil {
		u, err := url.Parse(base)
		if err != nil {
			return nil, fmt.Errorf("provider %q: base_url: %w", p.Name, err)
		}
		h.base = u
	}
	for op, path := range spec.Paths {
		u, err := url.Parse(base + path)
		if err != nil {
			return nil, fmt.Errorf("provider %q: base_url: %w", p.Name, err)
		}
		h.urls[op] = u
	}
	secrets := p.APIKeys
	if len(secrets) == 0 && p.APIKey != "" {
		secrets = []string{p.APIKey}
	}
	for _, k := range secrets {
		name, v := spec.Auth(k)
		h.authName = http.CanonicalHeaderKey(name)
		// A key ranks by its place in the pool: the secret itself must not
		// be hashed into anything observable.
		h.keys = append(h.keys, &poolKey{header: []string{v}, id: affinity.ID(p.Name + "#" + strconv.Itoa(len(h.keys)))})
	}
	dialer := &net.Dialer{Timeout: p.Timeouts.Connect, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   1024, // the default of 2 would reconnect under any concurrency
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   p.Timeouts.Connect,
		ResponseHeaderTimeout: p.Timeouts.FirstByte,
		ExpectContinueTimeout: time.Second,
		// The gateway reads and relays raw bytes; a transparent gunzip would
		// hide them from the usage tap and change what the client gets.
		DisableCompression: true,
	}
	var rt http.RoundTripper = tr
	if p.HTTPClient != config.HTTPClientStd {
		// http:// upstreams over the lean HTTP/1.1 client: one goroutine
		// per exchange (the caller's) and no buffers of its own beyond a
		// read buffer per connection, where Go's holds two goroutines and
		// two buffers per connection for as long as a stream lasts.
		// https:// (HTTP/2) and proxied requests go to Go's.
		rt = &h1client.Transport{
			DialContext:           dialer.DialContext,
			Fallback:              tr,
			Proxy:                 http.ProxyFromEnvironment,
			MaxIdleConnsPerHost:   1024,
			IdleConnTimeout:       90 * time.Second,
			ResponseHeaderTimeout: p.Timeouts.FirstByte,
		}
	}
	// The RoundTripper itself, not an http.Client: redirects are not
	// followed (a 3xx is the upstream's answer), there is no client-wide
	// timeout (it would kill long streams; timeouts are per phase), and
	// the client's frames would deepen every stream's goroutine stack.
	h.rt = rt
	h.closeIdl = rt.(interface{ CloseIdleConnections() }).CloseIdleConnections
	return h, nil
}

// Name implements Provider.
func (h *HTTP) Name() string { return h.name }

// Dialect implements Provider.
func (h *HTTP) Dialect() *dialect.Dialect { return h.spec.Dialect }

// Credentials says where the provider's credentials come from, for a
// cloud that finds them itself; "" for the others.
func (h *HTTP) Credentials() string { return h.spec.Credentials }

// CloseIdleConnections closes pooled upstream connections.
func (h *HTTP) CloseIdleConnections() { h.closeIdl() }

// Serves implements Server: the operations its URLs name.
func (h *HTTP) Serves(op dialect.Op) bool {
	if h.spec.URL != nil {
		_, ok := h.spec.URL(h.base, &Request{Op: op, Dialect: h.spec.Dialect, Model: "model"})
		return ok
	}
	_, ok := h.urls[op]
	return ok
}

// EmbedWire implements Embedder.
func (h *HTTP) EmbedWire(model string) *embeddings.Wire {
	if h.spec.Embeddings == nil {
		return nil
	}
	return h.spec.Embeddings(model)
}

// Do implements Provider.
func (h *HTTP) Do(ctx context.Context, r *Request) (*http.Response, error) {
	u, ok := h.urls[r.Op]
	if h.spec.URL != nil {
		u, ok = h.spec.URL(h.base, r)
	}
	if !ok {
		return nil, fmt.Errorf("provider %q does not serve this operation", h.name)
	}
	src := &bodySource{r: r}
	contentLength := r.Body.Len()
	var raw []byte
	if r.Upload != nil {
		if h.spec.Body != nil || h.spec.Sign != nil {
			return nil, fmt.Errorf("provider %q cannot send a streamed upload", h.name) // its body is signed or rebuilt
		}
		src.upload, contentLength = r.Upload, r.UploadLength
	} else if h.spec.Body != nil {
		b, err := h.spec.Body(r)
		if err != nil {
			return nil, err
		}
		raw, contentLength = b, int64(len(b))
		src.raw, src.spec = b, true
	} else if h.spec.Sign != nil {
		raw = r.Body.Bytes()
	}
	ctx, cancel := context.WithCancelCause(ctx)
	stopTotal := func() bool { return false }
	if h.total > 0 {
		t := time.AfterFunc(h.total, func() { cancel(errTotalTimeout) })
		stopTotal = t.Stop
	}
	hdr := r.Header
	switch {
	case hdr == nil:
		hdr = make(http.Header, 4)
	case h.spec.Sign != nil:
		hdr = hdr.Clone() // a signer may change it; a retry starts from the client's
	}
	// Canonical keys assigned directly: no per-request canonicalisation.
	hdr["Content-Type"] = jsonContentType
	if r.Upload != nil {
		hdr["Content-Type"] = []string{r.UploadType}
	}
	key := h.pick(r.Affinity)
	if key != nil {
		hdr[h.authName] = key.header
	}
	if h.spec.Header != nil {
		h.spec.Header(hdr)
	}
	req := (&http.Request{
		Method: http.MethodPost, URL: u, Host: u.Host,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: hdr, Body: src.open(), ContentLength: contentLength, GetBody: src.getBody,
	}).WithContext(ctx)
	if h.spec.Sign != nil {
		if err := h.spec.Sign(ctx, req, raw); err != nil {
			req.Body.Close()
			stopTotal()
			cancel(nil)
			return nil, &AuthError{Provider: h.name, Fetch: true, Err: err}
		}
	}
	resp, err := h.rt.RoundTrip(req)
	src.drop()
	if err != nil {
		err = &url.Error{Op: "Post", URL: u.Redacted(), Err: err} // as http.Client says it
		stopTotal()
		if cause := context.Cause(ctx); cause == errTotalTimeout {
			err = &TimeoutError{Phase: "total", Err: err}
		}
		cancel(nil)
		return nil, err
	}
	if resp.StatusCode == http.StatusTooManyRequests && key != nil && len(h.keys) > 1 {
		key.rest(resp.Header)
	}
	resp.Body = newIdleBody(resp.Body, h.idle, ctx, cancel, stopTotal)
	if h.spec.Response != nil {
		resp = h.spec.Response(resp, r)
	}
	if resp.StatusCode >= 400 {
		return h.upstreamError(resp, r)
	}
	return resp, nil
}

// poolKey is one credential of a provider's pool.
type poolKey struct {
	header []string     // the credential header's value, built once
	id     uint64       // its identity in rendezvous rankings
	until  atomic.Int64 // unix nanoseconds before which it rests, after a 429 (system clock: a rest is a duration, not a date)
}

// Key pool timings: a key answered with 429 rests for the answer's
// retry-after, or keyRest without one, at most keyRestMax.
const (
	keyRest    = 30 * time.Second
	keyRestMax = 10 * time.Minute
)

func (k *poolKey) rest(h http.Header) {
	d := keyRest
	if s, err := strconv.Atoi(h.Get("Retry-After")); err == nil && s > 0 {
		d = min(time.Duration(s)*time.Second, keyRestMax)
	}
	k.until.Store(time.Now().Add(d).UnixNano())
}

// pick returns the next key in turn that is not resting, or for a
// conversation (k not 0) the key that ranks first for it among those not
// resting; when all rest, the one whose rest ends first (the upstream
// decides).
func (h *HTTP) pick(k affinity.Key) *poolKey {
	switch len(h.keys) {
	case 0:
		return nil
	case 1:
		return h.keys[0]
	}
	now := time.Now().UnixNano()
	if k != 0 {
		var best *poolKey
		bestScore := -1.0
		for _, key := range h.keys {
			if key.until.Load() > now {
				continue
			}
			if s := affinity.Score(k, key.id, 1); s > bestScore {
				best, bestScore = key, s
			}
		}
		if best != nil {
			return best
		}
	}
	start := h.next.Add(1)
	var soonest *poolKey
	for i := range uint64(len(h.keys)) {
		k := h.keys[(start+i)%uint64(len(h.keys))]
		until := k.until.Load()
		if until <= now {
			if i > 0 {
				h.next.Add(i) // the next turn starts after this key, so resting keys do not skew the rotation
			}
			return k
		}
		if soonest == nil || until < soonest.until.Load() {
			soonest = k
		}
	}
	return soonest
}

// TimeoutError is an upstream exchange that ran out of time in one phase.
type TimeoutError struct {
	Phase string // "connect", "first_byte", "idle" or "total"
	Err   error
}

func (e *TimeoutError) Error() string {
	if e.Err == ErrIdleTimeout {
		return ErrIdleTimeout.Error()
	}
	return "upstream " + e.Phase + " timeout: " + e.Err.Error()
}
func (e *TimeoutError) Unwrap() error { return e.Err }
func (e *TimeoutError) Timeout() bool { return true }

// IsTimeout reports whether err means the upstream took too long.
func IsTimeout(err error) bool {
	var ne interface{ Timeout() bool }
	return errors.Is(err, ErrIdleTimeout) || errors.Is(err, context.DeadlineExceeded) ||
		(errors.As(err, &ne) && ne.Timeout())
}

// idleBody aborts the exchange when no bytes arrive for the idle timeout.
// Reads only record their time; the timer checks it when it fires and
// re-arms for the rest, so a stream of small reads costs no timer work.
type idleBody struct {
	body      io.ReadCloser
	idle      time.Duration
	timer     *time.Timer
	start     time.Time
	last      atomic.Int64 // time of the last read, as time.Since(start)
	ctx       context.Context
	cancel    context.CancelCauseFunc
	stopTotal func() bool
	once      sync.Once
}

func newIdleBody(body io.ReadCloser, idle time.Duration, ctx context.Context, cancel context.CancelCauseFunc, stopTotal func() bool) *idleBody {
	b := &idleBody{body: body, idle: idle, ctx: ctx, cancel: cancel, stopTotal: stopTotal, start: time.Now()}
	if idle > 0 {
		b.timer = time.AfterFunc(idle, b.check)
	}
	return b
}

// check runs when the timer fires: abort if the last read is older than
// the idle timeout, else wait for the remainder.
func (b *idleBody) check() {
	silent := time.Since(b.start) - time.Duration(b.last.Load())
	if silent >= b.idle {
		b.cancel(ErrIdleTimeout)
		return
	}
	b.timer.Reset(b.idle - silent)
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	if b.timer != nil && n > 0 {
		b.last.Store(int64(time.Since(b.start)))
	}
	if err != nil && !errors.Is(err, io.EOF) {
		switch context.Cause(b.ctx) {
		case ErrIdleTimeout:
			err = &TimeoutError{Phase: "idle", Err: ErrIdleTimeout}
		case errTotalTimeout:
			err = &TimeoutError{Phase: "total", Err: err}
		}
	}
	return n, err
}

func (b *idleBody) Close() error {
	err := b.body.Close()
	b.once.Do(func() {
		if b.timer != nil {
			b.timer.Stop()
		}
		b.stopTotal()
		b.cancel(nil)
	})
	return err
}

// bodySource opens the readers of one upstream request's body: the first,
// and any GetBody makes for a retry. Only RoundTrip reads them; once it has
// returned, drop lets go of the bytes, which the response would otherwise
// keep through resp.Request for as long as a stream lasts (a translated
// agent turn is a 100 KB body of its own).
type bodySource struct {
	r      *Request
	raw    []byte // the body the spec built, when spec
	spec   bool
	upload io.Reader // a body that can be read once
}

var errBodyDropped = errors.New("the request body was let go after the exchange")

func (s *bodySource) open() io.ReadCloser {
	switch {
	case s.upload != nil:
		return io.NopCloser(s.upload)
	case s.spec:
		return h1client.NewBody(s.raw)
	case s.r != nil:
		return s.r.newReader()
	}
	return http.NoBody
}

func (s *bodySource) getBody() (io.ReadCloser, error) {
	if s.r == nil || s.upload != nil { // an upload is read once
		return nil, errBodyDropped
	}
	return s.open(), nil
}

func (s *bodySource) drop() { s.r, s.raw, s.spec, s.upload = nil, nil, false, nil }
