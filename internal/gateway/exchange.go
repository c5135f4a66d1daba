package gateway

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/tollgate/tollgate/internal/auth"
	"github.com/tollgate/tollgate/internal/clock"
	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/limiter"
	"github.com/tollgate/tollgate/internal/meter"
	"github.com/tollgate/tollgate/internal/outcome"
	"github.com/tollgate/tollgate/internal/pricing"
	"github.com/tollgate/tollgate/internal/route"
)

// exchange is what the gateway knows about one client request while it
// runs; it ends as one outcome (the log line, the ledger record, the
// metrics, the span). It is owned by the request's goroutine.
type exchange struct {
	id      string
	dialect *dialect.Dialect
	start   time.Time // time.Now(): durations are measured from it, never dates
	key     *auth.Key // the virtual key used; nil for the master key (or none)
	// person is who the request is for: signed in, or the key's owner; nil
	// for the master key and for keys no user owns.
	person *auth.Person
	// session is the agent session the client named ("" none);
	// sessionTurn, when the lifecycle hook knows a conversation's session,
	// decides it when the request ends (a conversation's first request has
	// its session only once its answer is stored).
	session     string
	sessionTurn dialect.SessionTurn
	authed      bool // a key was accepted: the master key when key is nil

	ctx context.Context // the request's: cancelled when the client leaves or the server shuts down
	gen *generation     // the routes and limits current when it started

	model         string // as the client sent it
	routed        string // the configured name of the model it resolved to
	canonical     string // routed, also when the key may not use it: for the ledger
	provider      string
	upstreamModel string
	lane          string           // "passthrough", "translated", or "" when no upstream was chosen
	upDialect     *dialect.Dialect // the dialect the last attempt's upstream was spoken to in
	stream        bool

	status         int // status sent to the client; 0 if the client left first
	upstreamStatus int
	retries        int                // upstream attempts after the first
	attempts       []outcome.Attempt  // the upstream attempts, for the ledger
	attemptBuf     [3]outcome.Attempt // attempts' first places, without an allocation
	target         *route.Target      // the target of the last attempt
	sendStart      time.Time          // when the last attempt was sent
	writeBy        time.Time          // no write to the client may block past this; zero: none
	earlierWaits   time.Duration      // upstream time of the attempts before it
	usage          meter.Usage
	firstByte      time.Duration // until the response status was sent
	upstream       time.Duration // spent waiting on the upstream
	clientGone     bool          // the client disconnected before the end
	err            error

	errType string // the error's type when the gateway answered with an error
	// unrecorded: the request is not the API's (a browser's /favicon.ico),
	// and is left out of the ledger.
	unrecorded bool

	body     *bodyBuf // the pooled request body, if any; released at the end
	bodyRead bool     // the handler began reading the request body
	reqBody  []byte   // the request body, valid until body is released
	// bodyFreeOnStart lets a stream release the request body (and its
	// part of the buffer budget) once it has begun and the upstream has
	// reported the prompt's usage: nothing reads the body after that.
	bodyFreeOnStart bool
	buffered        int64 // bytes of the gateway's body budget this request holds

	relayed   *relayed        // what a stream relayed, to estimate its usage if it never arrives
	estimated bool            // usage is an estimate: the stream ended without it
	unmetered bool            // the answer said nothing of what the upstream billed: its cost is unknown
	prices    *pricing.Prices // of the target that served it; nil when unpriced

	ticket       *limiter.Ticket // the request's reservations, settled in finish
	limitHeaders bool            // the gateway's quota headers replace the upstream's

	costed    bool // costNano, costKnown and saved are set
	costNano  int64
	costKnown bool
	saved     savings
}

// savings is what prompt caching saved a request (see pricing's Savings),
// in nano-USD: net = read − premium; known is false when a cache bucket
// with tokens, or the input, has no price.
type savings struct {
	net, read, premium int64
	known              bool
}

// cost is the request's cost in nano-USD; ok is false when it is unknown
// (unpriced), which is recorded as null, never as zero. It is computed once,
// at the end of the request, for the log line and the ledger record alike.
func (x *exchange) cost() (nano int64, ok bool) {
	if !x.costed {
		x.costed = true
		switch {
		case x.unmetered:
			x.costNano, x.costKnown = 0, false
		case x.usage == (meter.Usage{}):
			// No tokens cost nothing, priced or not (a rejected request).
			x.costNano, x.costKnown = 0, true
		default:
			c, err := x.prices.Cost(x.usage)
			x.costNano, x.costKnown = c, err == nil
		}
		x.saved = x.cacheSavings()
	}
	return x.costNano, x.costKnown
}

// cacheSavings is what prompt caching saved the request, from the prices
// and usage its cost is made of. cost computes it along with the cost, so
// that the two always follow the same usage (an estimate made at the end
// computes both again); 0 and known without cache tokens.
func (x *exchange) cacheSavings() savings {
	read, net, err := x.prices.SavingsParts(x.usage)
	if err != nil {
		return savings{}
	}
	return savings{net: net, read: read, premium: read - net, known: true} // as CacheWritePremium has it
}

var requestIDEncoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// newRequestID returns "req_" and 26 characters: 48 bits of the time in
// milliseconds, then 80 random bits. Ids sort by time (the alphabet is in
// ASCII order), so the ledger's primary key grows at its end instead of at
// random places, and pages of records can continue from an id.
func newRequestID() string {
	var b [16]byte
	ms := uint64(clock.Now().UnixMilli())
	b[0], b[1], b[2], b[3], b[4], b[5] = byte(ms>>40), byte(ms>>32), byte(ms>>24), byte(ms>>16), byte(ms>>8), byte(ms)
	rand.Read(b[6:])
	return "req_" + requestIDEncoding.EncodeToString(b[:])
}

// WithRequestID gives every answer of h a tollgate-request-id, as the API
// endpoints' answers have: for the routes served beside the gateway
// (health, readiness, metrics, the admin API).
func WithRequestID(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Tollgate-Request-Id"] = []string{newRequestID()}
		h.ServeHTTP(w, r)
	})
}

// arrived is when the request arrived on the process's clock (clock.Now),
// for dates: the ledger's time, the span's start. start itself stays on
// the system clock, whose monotonic reading durations need.
func (x *exchange) arrived() time.Time { return clock.Moved(x.start) }

// outcomes recycles outcome values: made when a request ends, they are
// not held while it runs (a stream may run for minutes).
var outcomes = sync.Pool{New: func() any { return new(outcome.Request) }}

// outcome makes the request's outcome, once, when it has ended: the log
// line, the ledger record, the metrics and the span are all made from it.
// The caller gives it back to outcomes when they are made.
func (x *exchange) outcome(r *http.Request) *outcome.Request {
	cost, known := x.cost()
	saved := x.saved // set by cost
	o := outcomes.Get().(*outcome.Request)
	*o = outcome.Request{
		ID: x.id, Arrived: x.arrived(), Method: dialect.Clip(r.Method), Path: dialect.Clip(r.URL.Path),
		ClientProtocol: x.dialect.Name, KeyID: x.keyID(), Model: x.model, Routed: x.routed, Canonical: x.canonical,
		Provider: x.provider, UpstreamModel: x.upstreamModel, Lane: x.lane, Stream: x.stream,
		Status: x.status, UpstreamStatus: x.upstreamStatus, ErrorType: x.errorType(), Err: x.err, ClientGone: x.clientGone,
		Usage: x.usage, UsageEstimated: x.estimated, Cost: cost, CostKnown: known,
		Savings: saved.net, SavingsKnown: saved.known, ReadSavings: saved.read, WritePremium: saved.premium,
		Latency: time.Since(x.start), FirstByte: x.firstByte, Upstream: x.upstream, Retries: x.retries, Attempts: x.attempts,
		UserAgent: dialect.Clip(r.UserAgent()),
	}
	if p := x.person; p != nil {
		o.UserID, o.TeamID = p.UserID, p.TeamID
	}
	o.SessionID = x.session
	if x.sessionTurn != nil {
		o.SessionID = x.sessionTurn.Session(x.session)
	}
	if x.upDialect != nil {
		o.UpstreamProtocol = x.upDialect.Name
	}
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		o.ClientIP = host
	}
	return o
}

// addAttempt notes one upstream attempt, for the ledger.
func (x *exchange) addAttempt(a outcome.Attempt) {
	if x.attempts == nil {
		x.attempts = x.attemptBuf[:0]
	}
	x.attempts = append(x.attempts, a)
}

// keyID is the ledger's key of the request: the virtual key's id, "" for
// the master key, outcome.Unauthenticated when no key was accepted.
func (x *exchange) keyID() string {
	switch {
	case x.key != nil:
		return x.key.ID
	case !x.authed:
		return outcome.Unauthenticated
	}
	return ""
}

// errorType classifies how the request ended badly, "" when it did not.
func (x *exchange) errorType() string {
	switch {
	case x.errType != "":
		return x.errType
	case x.clientGone:
		return "client_disconnected"
	case x.err != nil && x.status < 400:
		return "stream_interrupted" // the answer began, then the upstream failed
	case x.status >= 400:
		return "upstream_error" // an upstream error relayed as it was
	}
	return ""
}
