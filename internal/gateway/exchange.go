package gateway

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"log/slog"
	"time"

	"github.com/tollgate/tollgate/internal/api"
	"github.com/tollgate/tollgate/internal/meter"
)

// exchange is what the gateway knows about one client request while it runs;
// it ends as one structured log line (and, later, one ledger record).
// It is owned by the request's goroutine.
type exchange struct {
	id      string
	dialect api.Dialect
	start   time.Time

	model         string // as the client sent it
	provider      string
	upstreamModel string
	lane          string // "passthrough" or "" when no upstream was chosen
	stream        bool

	status         int // status sent to the client; 0 if the client left first
	upstreamStatus int
	usage          meter.Usage
	firstByte      time.Duration // until the response status was sent
	upstream       time.Duration // spent waiting on the upstream
	clientGone     bool          // the client disconnected before the end
	err            error
}

var requestIDEncoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// newRequestID returns "req_" and 26 characters of randomness (128 bits).
func newRequestID() string {
	var b [16]byte
	rand.Read(b[:])
	return "req_" + requestIDEncoding.EncodeToString(b[:])
}

// log writes the exchange's one log line. Bodies and keys are never logged.
func (x *exchange) log(ctx context.Context, l *slog.Logger, method, path string) {
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
			slog.Float64("ttfb_ms", ms(x.firstByte)),
			slog.Float64("upstream_ms", ms(x.upstream)),
			slog.Int64("input_tokens", x.usage.Input),
			slog.Int64("cache_read_tokens", x.usage.CacheRead),
			slog.Int64("cache_write_5m_tokens", x.usage.CacheWrite5m),
			slog.Int64("cache_write_1h_tokens", x.usage.CacheWrite1h),
			slog.Int64("output_tokens", x.usage.Output),
			slog.Int64("reasoning_tokens", x.usage.Reasoning),
		)
	}
	if x.clientGone {
		attrs = append(attrs, slog.Bool("client_gone", true))
	}
	level := slog.LevelInfo
	if x.err != nil {
		attrs = append(attrs, slog.String("error", x.err.Error()))
		if x.status >= 500 || x.status == 0 {
			level = slog.LevelWarn
		}
	}
	l.LogAttrs(ctx, level, "request", attrs...)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
