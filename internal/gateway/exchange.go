package gateway

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/tollgate/tollgate/internal/auth"
	"github.com/tollgate/tollgate/internal/clock"
	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/limit"
	"github.com/tollgate/tollgate/internal/meter"
	"github.com/tollgate/tollgate/internal/pricing"
	"github.com/tollgate/tollgate/internal/route"
	"github.com/tollgate/tollgate/internal/store"
)

// exchange is what the gateway knows about one client request while it runs;
// it ends as one structured log line (and, later, one ledger record).
// It is owned by the request's goroutine.
type exchange struct {
	id      string
	dialect *dialect.Dialect
	start   time.Time // time.Now(): durations are measured from it, never dates
	key     *auth.Key // the virtual key used; nil for the master key (or none)

	model         string // as the client sent it
	routed        string // the configured name of the model it resolved to
	provider      string
	upstreamModel string
	lane          string           // "passthrough", "translated", or "" when no upstream was chosen
	upDialect     *dialect.Dialect // the dialect the last attempt's upstream was spoken to in
	stream        bool

	status         int // status sent to the client; 0 if the client left first
	upstreamStatus int
	retries        int           // upstream attempts after the first
	attempts       []attempt     // the upstream attempts, for the ledger
	attemptBuf     [3]attempt    // attempts' first places, without an allocation
	target         *route.Target // the target of the last attempt
	sendStart      time.Time     // when the last attempt was sent
	writeBy        time.Time     // no write to the client may block past this; zero: none
	earlierWaits   time.Duration // upstream time of the attempts before it
	usage          meter.Usage
	firstByte      time.Duration // until the response status was sent
	upstream       time.Duration // spent waiting on the upstream
	clientGone     bool          // the client disconnected before the end
	err            error

	errType string // the error's type when the gateway answered with an error

	body     *bodyBuf // the pooled request body, if any; released at the end
	bodyRead bool     // the handler began reading the request body
	reqBody  []byte   // the request body, valid until body is released
	buffered int64    // bytes of the gateway's body budget this request holds

	relayed   *relayed        // what a stream relayed, to estimate its usage if it never arrives
	estimated bool            // usage is an estimate: the stream ended without it
	prices    *pricing.Prices // of the target that served it; nil when unpriced

	ticket       *limit.Ticket // the request's reservations, settled in finish
	limitHeaders bool          // the gateway's quota headers replace the upstream's

	costed    bool // costNano and costKnown are set
	costNano  int64
	costKnown bool
}

// cost is the request's cost in nano-USD; ok is false when it is unknown
// (unpriced), which is recorded as null, never as zero. It is computed once,
// at the end of the request, for the log line and the ledger record alike.
func (x *exchange) cost() (nano int64, ok bool) {
	if !x.costed {
		x.costed = true
		if x.usage == (meter.Usage{}) {
			// No tokens cost nothing, priced or not (a rejected request).
			x.costNano, x.costKnown = 0, true
		} else {
			c, err := x.prices.Cost(x.usage)
			x.costNano, x.costKnown = c, err == nil
		}
	}
	return x.costNano, x.costKnown
}

var requestIDEncoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// newRequestID returns "req_" and 26 characters of randomness (128 bits).
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

// log writes the exchange's one log line. Bodies and keys are never logged.
// With a request log the line is appended by hand (no reflection, no
// per-line system call); otherwise it goes through slog.
func (x *exchange) log(ctx context.Context, l *slog.Logger, reqLog io.Writer, method, path string) {
	if reqLog != nil {
		bp := lineBufPool.Get().(*[]byte)
		line := x.appendJSON((*bp)[:0], method, path)
		reqLog.Write(line)
		*bp = line
		lineBufPool.Put(bp)
		return
	}
	attrs := make([]slog.Attr, 0, 24)
	attrs = append(attrs,
		slog.String("request_id", x.id),
		slog.String("method", method),
		slog.String("path", path),
		slog.Int("status", x.status),
		slog.Float64("latency_ms", ms(time.Since(x.start))),
	)
	if x.model != "" {
		attrs = append(attrs, slog.String("model", x.model))
	}
	if x.provider != "" {
		attrs = append(attrs,
			slog.String("provider", x.provider),
			slog.String("upstream_model", x.upstreamModel),
			slog.String("lane", x.lane),
			slog.Bool("stream", x.stream),
			slog.Int("upstream_status", x.upstreamStatus),
			slog.Int("retries", x.retries),
			slog.Float64("ttfb_ms", ms(x.firstByte)),
			slog.Float64("upstream_ms", ms(x.upstream)),
			slog.Int64("input_tokens", x.usage.Input),
			slog.Int64("cache_read_tokens", x.usage.CacheRead),
			slog.Int64("cache_write_5m_tokens", x.usage.CacheWrite5m),
			slog.Int64("cache_write_1h_tokens", x.usage.CacheWrite1h),
			slog.Int64("output_tokens", x.usage.Output),
			slog.Int64("reasoning_tokens", x.usage.Reasoning),
		)
		if c, ok := x.cost(); ok {
			attrs = append(attrs, slog.Int64("cost_nano_usd", c))
		} else {
			attrs = append(attrs, slog.Any("cost_nano_usd", nil))
		}
	}
	if x.estimated {
		attrs = append(attrs, slog.Bool("usage_estimated", true))
	}
	if x.clientGone {
		attrs = append(attrs, slog.Bool("client_gone", true))
	}
	if x.err != nil {
		attrs = append(attrs, slog.String("error", x.err.Error()))
	}
	l.LogAttrs(ctx, x.level(), "request", attrs...)
}

func (x *exchange) level() slog.Level {
	if x.err != nil && (x.status >= 500 || x.status == 0) {
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

var lineBufPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// appendJSON appends the log line as JSON with the same fields, in the
// same order, as the slog form.
func (x *exchange) appendJSON(b []byte, method, path string) []byte {
	b = append(b, `{"time":"`...)
	b = clock.Now().UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":"`...)
	b = append(b, x.level().String()...)
	b = append(b, `","msg":"request","request_id":"`...)
	b = append(b, x.id...)
	b = append(b, `","method":`...)
	b = jsonx.AppendQuote(b, method)
	b = append(b, `,"path":`...)
	b = jsonx.AppendQuote(b, path)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(x.status), 10)
	b = append(b, `,"latency_ms":`...)
	b = strconv.AppendFloat(b, ms(time.Since(x.start)), 'f', -1, 64)
	if x.model != "" {
		b = append(b, `,"model":`...)
		b = jsonx.AppendQuote(b, x.model)
	}
	if x.provider != "" {
		b = append(b, `,"provider":`...)
		b = jsonx.AppendQuote(b, x.provider)
		b = append(b, `,"upstream_model":`...)
		b = jsonx.AppendQuote(b, x.upstreamModel)
		b = append(b, `,"lane":"`...)
		b = append(b, x.lane...)
		b = append(b, `","stream":`...)
		b = strconv.AppendBool(b, x.stream)
		b = append(b, `,"upstream_status":`...)
		b = strconv.AppendInt(b, int64(x.upstreamStatus), 10)
		b = append(b, `,"retries":`...)
		b = strconv.AppendInt(b, int64(x.retries), 10)
		b = append(b, `,"ttfb_ms":`...)
		b = strconv.AppendFloat(b, ms(x.firstByte), 'f', -1, 64)
		b = append(b, `,"upstream_ms":`...)
		b = strconv.AppendFloat(b, ms(x.upstream), 'f', -1, 64)
		for _, f := range [...]struct {
			name string
			v    int64
		}{
			{`,"input_tokens":`, x.usage.Input}, {`,"cache_read_tokens":`, x.usage.CacheRead},
			{`,"cache_write_5m_tokens":`, x.usage.CacheWrite5m}, {`,"cache_write_1h_tokens":`, x.usage.CacheWrite1h},
			{`,"output_tokens":`, x.usage.Output}, {`,"reasoning_tokens":`, x.usage.Reasoning},
		} {
			b = append(b, f.name...)
			b = strconv.AppendInt(b, f.v, 10)
		}
		b = append(b, `,"cost_nano_usd":`...)
		if c, ok := x.cost(); ok {
			b = strconv.AppendInt(b, c, 10)
		} else {
			b = append(b, "null"...)
		}
	}
	if x.estimated {
		b = append(b, `,"usage_estimated":true`...)
	}
	if x.clientGone {
		b = append(b, `,"client_gone":true`...)
	}
	if x.err != nil {
		b = append(b, `,"error":`...)
		b = jsonx.AppendQuote(b, x.err.Error())
	}
	return append(b, "}\n"...)
}

// arrived is when the request arrived on the process's clock (clock.Now),
// for dates: the ledger's time, the span's start. start itself stays on
// the system clock, whose monotonic reading durations need.
func (x *exchange) arrived() time.Time { return clock.Moved(x.start) }

// record is the exchange's ledger record.
func (x *exchange) record(r *http.Request) store.Request {
	latency := time.Since(x.start)
	rec := store.Request{
		ID: x.id, Time: x.arrived(), KeyID: x.keyID(), ClientProtocol: x.dialect.Name, Model: x.model, Provider: x.provider,
		UpstreamModel: x.upstreamModel, Lane: x.lane, Stream: x.stream, Status: x.status, ErrorType: x.errorType(),
		Input: x.usage.Input, CacheRead: x.usage.CacheRead, CacheWrite5m: x.usage.CacheWrite5m,
		CacheWrite1h: x.usage.CacheWrite1h, Output: x.usage.Output, Reasoning: x.usage.Reasoning,
		LatencyMS: ms(latency), TTFBMS: ms(x.firstByte), UpstreamMS: ms(x.upstream),
		OverheadMS: ms(max(latency-x.upstream, 0)), UserAgent: dialect.Clip(r.UserAgent()),
	}
	if c, ok := x.cost(); ok {
		rec.CostNanoUSD = &c
	}
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		rec.ClientIP = host
	}
	rec.Attempts = x.attemptsJSON()
	return rec
}

// attempt is one upstream attempt: its target, the upstream's status (0
// without an answer), what went wrong ("" if nothing), and its time.
type attempt struct {
	target string
	status int
	err    string
	d      time.Duration
}

func (x *exchange) addAttempt(a attempt) {
	if x.attempts == nil {
		x.attempts = x.attemptBuf[:0]
	}
	x.attempts = append(x.attempts, a)
}

// attemptsJSON renders the attempts for the ledger.
func (x *exchange) attemptsJSON() string {
	if len(x.attempts) == 0 {
		return "[]"
	}
	b := make([]byte, 0, 96*len(x.attempts))
	for i, a := range x.attempts {
		if i == 0 {
			b = append(b, '[')
		} else {
			b = append(b, ',')
		}
		b = append(b, `{"target":`...)
		b = jsonx.AppendQuote(b, a.target)
		b = append(b, `,"status":`...)
		b = strconv.AppendInt(b, int64(a.status), 10)
		b = append(b, `,"error":`...)
		b = jsonx.AppendQuote(b, a.err)
		b = append(b, `,"ms":`...)
		b = strconv.AppendFloat(b, ms(a.d), 'f', -1, 64)
		b = append(b, '}')
	}
	return string(append(b, ']'))
}

func (x *exchange) keyID() string {
	if x.key == nil {
		return ""
	}
	return x.key.ID
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

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
