// Package gateway serves the data plane: /v1/messages,
// /v1/messages/count_tokens, /v1/chat/completions and /v1/models. It is the
// only package that joins authentication, routing, providers and metering.
//
// A request is read (size-limited), authenticated, scanned once (validating
// its JSON and reading model and stream without decoding the rest), routed
// to a target, and sent on the lane that fits: when the target speaks the
// client's dialect, the pass-through lane forwards the client's bytes with
// only the model rewritten and relays the answer as it arrives.
package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/tollgate/tollgate/internal/accesslog"
	"github.com/tollgate/tollgate/internal/auth"
	"github.com/tollgate/tollgate/internal/clock"
	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/metrics"
	"github.com/tollgate/tollgate/internal/outcome"
	"github.com/tollgate/tollgate/internal/route"
	"github.com/tollgate/tollgate/internal/tracing"
	"github.com/tollgate/tollgate/internal/translate"
)

// Options configure a Gateway.
type Options struct {
	Routes       *route.Table
	Auth         *auth.Authenticator
	MaxBodyBytes int64
	// MaxBufferedBytes bounds the request bodies held at once, across
	// requests; 0 is DefaultMaxBufferedBytes(MaxBodyBytes).
	MaxBufferedBytes int64
	// Logger receives the gateway's log records (and each request's line
	// when RequestLog is nil).
	Logger *slog.Logger
	// RequestLog, when set, receives each request's line as JSON, encoded
	// without slog (see accesslog for a buffered writer).
	RequestLog io.Writer
	// AccessLog decides which requests get a line (logging.access); nil
	// logs every request.
	AccessLog *accesslog.Policy
	// Signer signs thinking that OpenAI-compatible upstreams return to
	// Anthropic clients; replicas must share its key.
	Signer *translate.Signer
	// Ledger, when set, receives one record per request.
	Ledger Ledger
	// Limits, when Limits.Limiter is set, enforces rate limits and budgets.
	Limits Limits
	// NoTargetHeader and NoOverheadHeader leave tollgate-target and
	// tollgate-overhead-ms out of answers.
	NoTargetHeader, NoOverheadHeader bool
	// Metrics, when set, receives every request's outcome.
	Metrics *metrics.Requests
	// Tracer, when set, receives a span per request.
	Tracer trace.Tracer
	// Lifecycles are the request-lifecycle hooks of the dialects that
	// have one (stored state their requests continue, and the routes
	// that read it), attached here because they need what exists only at
	// run time.
	Lifecycles map[*dialect.Dialect]dialect.Lifecycle
	// ConsoleURL, when set, is where a browser that opens / is sent.
	ConsoleURL string
}

// Ledger takes the record of each request's outcome. It must not keep o,
// and should not block.
type Ledger interface {
	Record(o *outcome.Request)
}

// Gateway is the data-plane handler. It is safe for concurrent use.
type Gateway struct {
	// gen holds the route table and the limits, which a reload replaces
	// (Swap); each request reads it once, when it starts.
	gen     atomic.Pointer[generation]
	auth    *auth.Authenticator
	maxBody int64
	// buffered is what all request bodies held at once may take.
	buffered *bufferBudget
	log      *slog.Logger
	reqLog   io.Writer
	access   *accesslog.Policy
	ledger   Ledger
	signer   *translate.Signer

	targetHeader, overheadHeader bool
	metrics                      *metrics.Requests
	tracer                       trace.Tracer
	started                      time.Time

	hooks   map[*dialect.Dialect]dialect.Lifecycle // Options.Lifecycles
	console string                                 // Options.ConsoleURL
}

// New returns a Gateway.
func New(o Options) *Gateway {
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Signer == nil {
		o.Signer = translate.NewSigner([]byte("tollgate"))
	}
	if o.MaxBufferedBytes <= 0 {
		o.MaxBufferedBytes = DefaultMaxBufferedBytes(o.MaxBodyBytes)
	}
	g := &Gateway{buffered: &bufferBudget{limit: o.MaxBufferedBytes}, auth: o.Auth, maxBody: o.MaxBodyBytes, log: o.Logger, reqLog: o.RequestLog, access: o.AccessLog, ledger: o.Ledger, signer: o.Signer,
		targetHeader: !o.NoTargetHeader, overheadHeader: !o.NoOverheadHeader, metrics: o.Metrics, tracer: o.Tracer, started: clock.Now(),
		hooks: o.Lifecycles, console: o.ConsoleURL}
	g.gen.Store(newGeneration(o.Routes, o.Limits))
	return g
}

// handlerFunc is a data-plane handler: it returns an error instead of
// writing one, and the adapter renders it in the client's dialect.
type handlerFunc func(w http.ResponseWriter, r *http.Request, x *exchange) error

// Handler returns the HTTP handler for every data-plane route: the
// endpoints of every registered dialect, and the routes they share.
func (g *Gateway) Handler() http.Handler {
	mux := http.NewServeMux()
	for _, d := range dialect.All() {
		for _, ep := range d.Endpoints {
			h := g.modelEndpoint(ep)
			if ep.Multipart {
				h = g.formEndpoint(ep)
			}
			mux.Handle(ep.Path, g.endpoint(d, http.MethodPost, h))
		}
	}
	for d, h := range g.hooks {
		for _, rt := range h.Routes() {
			mux.Handle(rt.Pattern, g.endpoint(d, "", g.hookRoute(rt)))
		}
	}
	mux.Handle("/v1/models", g.endpoint(nil, http.MethodGet, g.listModels))
	// A URL-addressed protocol names the model and operation under its
	// model routes (which may be the shared /v1/models).
	getModel := g.endpoint(nil, http.MethodGet, g.getModel)
	routes, by := addressedRoutes()
	for _, rt := range routes {
		if rt == "/v1/models" {
			// Shared: the dialect addresses the requests it claims; the
			// others keep GET of a model in their own protocol.
			mux.Handle(rt+"/{id...}", claimed(by[rt], g.endpoint(by[rt], "", g.addressed(by[rt])), getModel))
			continue
		}
		mux.Handle(rt, g.endpoint(nil, http.MethodGet, g.listModels))
		mux.Handle(rt+"/{id...}", g.endpoint(nil, "", g.addressed(by[rt])))
	}
	if by["/v1/models"] == nil {
		mux.Handle("/v1/models/{id...}", getModel)
	}
	mux.Handle("/healthz", WithRequestID(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":"ok"}` + "\n"))
	})))
	mux.Handle("/", g.endpoint(nil, "", func(w http.ResponseWriter, r *http.Request, x *exchange) error {
		return noEndpoint(r)
	}))
	return mux
}

// endpoint adapts a handlerFunc: it assigns the request id, checks the
// method and the key, renders a returned error, and logs the exchange.
// A nil dialect means "decide per request" (dialect.ForRequest); an empty
// method means any method.
func (g *Gateway) endpoint(d *dialect.Dialect, method string, h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gen := g.acquire()
		defer gen.release() // after finish (deferred below): settling uses its limits
		x := &exchange{id: newRequestID(), dialect: d, start: time.Now(), ctx: r.Context(), gen: gen}
		if x.dialect == nil {
			x.dialect = dialect.ForRequest(r)
		}
		w.Header()["Tollgate-Request-Id"] = []string{x.id}
		defer func() {
			x.estimateUsage() // while the request body is still held
			x.relayed.release()
			if x.body != nil {
				x.body.release()
			}
			g.buffered.release(x)
			p := recover()
			if p == nil {
				g.finish(r, x)
				return
			}
			if p == http.ErrAbortHandler {
				// The relay cut a response whose upstream failed after the
				// status was sent; net/http closes the connection quietly.
				if x.err == nil {
					x.err = errors.New("response aborted")
				}
				g.finish(r, x)
				panic(p)
			}
			// A bug: keep serving, answer 500 if nothing was sent yet, and
			// log the stack, never the client's body.
			x.err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
			if x.status == 0 && !x.clientGone {
				x.status = http.StatusInternalServerError
				writeError(w, x.dialect, x.id, &Error{Status: http.StatusInternalServerError, Kind: dialect.Internal, Message: "internal error"})
			}
			g.finish(r, x)
		}()
		err := g.serve(w, r, x, method, h)
		if err == nil {
			return
		}
		if x.err == nil {
			x.err = err
		}
		if x.status != 0 || x.clientGone {
			return // the response is already under way, or nobody is listening
		}
		var e *Error
		if !errors.As(err, &e) {
			e = &Error{Status: http.StatusInternalServerError, Kind: dialect.Internal, Message: "internal error", Err: err}
		}
		x.status = e.Status
		x.errType = e.Kind.String()
		unread := !x.bodyRead && r.ContentLength != 0
		if unread {
			// Refused before its body was read (no key, a wrong method): close
			// the connection rather than let net/http read the rest of the
			// body, before and after answering, which a client sending a byte
			// every few seconds makes last as long as it likes, holding a
			// connection without ever showing a key.
			w.Header().Set("Connection", "close")
		}
		writeError(w, x.dialect, x.id, e)
		if unread {
			rc := http.NewResponseController(w)
			rc.Flush()
			rc.SetReadDeadline(time.Now()) // ends the read of the body at once
		}
	})
}

// finish ends every request the same way: one log line and one ledger
// record, whatever happened (rejected, failed, disconnected or served),
// made from one outcome along with its metrics and span.
func (g *Gateway) finish(r *http.Request, x *exchange) {
	g.settle(x)
	o := x.outcome(r)
	if g.access.Keep(o) {
		accesslog.Log(r.Context(), g.log, g.reqLog, o)
	}
	if g.metrics != nil {
		q := metrics.Request{
			Model: o.Routed, Provider: o.Provider, Lane: o.Lane, Status: o.Status, Stream: o.Stream,
			Latency: o.Latency, FirstByte: o.FirstByte, Upstream: o.Upstream, Overhead: o.Overhead(),
			Retries: o.Retries, Input: o.Usage.Input, CacheRead: o.Usage.CacheRead,
			CacheWrite: o.Usage.CacheWrite5m + o.Usage.CacheWrite1h, Output: o.Usage.Output,
			CostNano: o.Cost, CostKnown: o.CostKnown,
			CacheSavingsNano: o.ReadSavings, CacheWritePremiumNano: o.WritePremium,
		}
		if x.person != nil {
			q.Person, q.Team = true, x.person.Team
		}
		g.metrics.Observe(q)
	}
	if g.tracer != nil {
		tracing.Span(g.tracer, r.Header, o)
	}
	if g.ledger != nil && !x.unrecorded {
		g.ledger.Record(o)
	}
	*o = outcome.Request{} // no references kept
	outcomes.Put(o)
}

func (g *Gateway) serve(w http.ResponseWriter, r *http.Request, x *exchange, method string, h handlerFunc) error {
	if !isAPIPath(r.URL.Path) {
		return g.notAPI(w, r, x)
	}
	if method != "" && r.Method != method {
		e := newError(http.StatusMethodNotAllowed, dialect.MethodNotAllowed,
			"method "+r.Method+" is not allowed on "+r.URL.Path+"; use "+method)
		e.Header = http.Header{"Allow": {method}}
		return e
	}
	p, err := g.auth.CheckFrom(r, auth.Places{Headers: x.dialect.KeyHeaders, Query: x.dialect.KeyQuery})
	if err != nil {
		if ctx := r.Context(); ctx.Err() != nil {
			// The client left while its key was checked (an HTTP/2 stream
			// reset): nobody is listening for a refusal.
			x.clientGone = true
			return fmt.Errorf("the client left during authentication: %w", context.Cause(ctx))
		}
		return authError(err)
	}
	x.key, x.person, x.authed = p.Key, p.Person, true
	return h(w, r, x)
}

// notAPI answers a path outside the API (every endpoint is under /v1/):
// a browser's / or /favicon.ico, a scanner's guesses. Nothing there needs
// a key, so none is asked for: a browser's GET / goes to the console
// (when there is one), anything else gets 404. Such requests are logged
// but left out of the ledger: they are not usage, and a browser left open
// on the gateway would otherwise fill it.
func (g *Gateway) notAPI(w http.ResponseWriter, r *http.Request, x *exchange) error {
	x.unrecorded = true
	if r.URL.Path == "/" && (r.Method == http.MethodGet || r.Method == http.MethodHead) && g.console != "" &&
		strings.Contains(r.Header.Get("Accept"), "text/html") {
		x.status = http.StatusFound
		http.Redirect(w, r, g.console, http.StatusFound)
		return nil
	}
	return noEndpoint(r)
}

func noEndpoint(r *http.Request) error {
	return newError(http.StatusNotFound, dialect.NotFound, "no such endpoint: "+dialect.Clip(r.Method+" "+r.URL.Path))
}

// authError renders a refusal of auth.Check. The client sees one message
// per status (an unknown, revoked and expired key all read "invalid API
// key"); the log and the ledger get the reason.
func authError(err error) *Error {
	status := auth.Status(err)
	e := &Error{Status: status, Kind: dialect.Authentication, Message: err.Error(), Err: errors.New(auth.Reason(err))}
	switch status {
	case http.StatusBadRequest:
		e.Kind = dialect.InvalidRequest
	case http.StatusTooManyRequests:
		e.Kind = dialect.RateLimit
		if d, ok := auth.RetryAfter(err); ok && d > 0 {
			e.Header = http.Header{"Retry-After": {strconv.Itoa(int(d / time.Second))}}
		}
	case http.StatusServiceUnavailable:
		e.Kind = dialect.Unavailable
	}
	return e
}
