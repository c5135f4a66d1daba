package accesslog

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/tollgate/tollgate/internal/clock"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/outcome"
)

// Log writes a request's one line. Bodies and keys are never logged. With
// w, the line is appended as JSON by hand (no reflection, no per-line
// system call; see Writer); otherwise it goes through l.
func Log(ctx context.Context, l *slog.Logger, w io.Writer, r *outcome.Request) {
	if w != nil {
		bp := lineBufPool.Get().(*[]byte)
		line := AppendJSON((*bp)[:0], r)
		w.Write(line)
		*bp = line
		lineBufPool.Put(bp)
		return
	}
	var buf [24]slog.Attr
	l.LogAttrs(ctx, Level(r), "request", AppendAttrs(buf[:0], r)...)
}

// Level is a request line's level: a warning when the request failed on
// the gateway's or the upstream's side.
func Level(r *outcome.Request) slog.Level {
	if r.Err != nil && (r.Status >= 500 || r.Status == 0) {
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

// AppendAttrs appends a request line's fields, for slog.
func AppendAttrs(attrs []slog.Attr, r *outcome.Request) []slog.Attr {
	attrs = append(attrs,
		slog.String("request_id", r.ID),
		slog.String("method", r.Method),
		slog.String("path", r.Path),
		slog.Int("status", r.Status),
		slog.Float64("latency_ms", ms(r.Latency)),
	)
	if r.Model != "" {
		attrs = append(attrs, slog.String("model", r.Model))
	}
	if r.Provider != "" {
		attrs = append(attrs,
			slog.String("provider", r.Provider),
			slog.String("upstream_model", r.UpstreamModel),
			slog.String("lane", r.Lane),
			slog.Bool("stream", r.Stream),
			slog.Int("upstream_status", r.UpstreamStatus),
			slog.Int("retries", r.Retries),
			slog.Float64("ttfb_ms", ms(r.FirstByte)),
			slog.Float64("upstream_ms", ms(r.Upstream)),
			slog.Int64("input_tokens", r.Usage.Input),
			slog.Int64("cache_read_tokens", r.Usage.CacheRead),
			slog.Int64("cache_write_5m_tokens", r.Usage.CacheWrite5m),
			slog.Int64("cache_write_1h_tokens", r.Usage.CacheWrite1h),
			slog.Int64("output_tokens", r.Usage.Output),
			slog.Int64("reasoning_tokens", r.Usage.Reasoning),
		)
		if r.CostKnown {
			attrs = append(attrs, slog.Int64("cost_nano_usd", r.Cost))
		} else {
			attrs = append(attrs, slog.Any("cost_nano_usd", nil))
		}
	}
	if r.UsageEstimated {
		attrs = append(attrs, slog.Bool("usage_estimated", true))
	}
	if r.ClientGone {
		attrs = append(attrs, slog.Bool("client_gone", true))
	}
	if r.Err != nil {
		attrs = append(attrs, slog.String("error", r.Err.Error()))
	}
	return attrs
}

var lineBufPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// AppendJSON appends a request line as JSON with the same fields, in the
// same order, as AppendAttrs gives slog.
func AppendJSON(b []byte, r *outcome.Request) []byte {
	b = append(b, `{"time":"`...)
	b = clock.Now().UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":"`...)
	b = append(b, Level(r).String()...)
	b = append(b, `","msg":"request","request_id":"`...)
	b = append(b, r.ID...)
	b = append(b, `","method":`...)
	b = jsonx.AppendQuote(b, r.Method)
	b = append(b, `,"path":`...)
	b = jsonx.AppendQuote(b, r.Path)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(r.Status), 10)
	b = append(b, `,"latency_ms":`...)
	b = strconv.AppendFloat(b, ms(r.Latency), 'f', -1, 64)
	if r.Model != "" {
		b = append(b, `,"model":`...)
		b = jsonx.AppendQuote(b, r.Model)
	}
	if r.Provider != "" {
		b = append(b, `,"provider":`...)
		b = jsonx.AppendQuote(b, r.Provider)
		b = append(b, `,"upstream_model":`...)
		b = jsonx.AppendQuote(b, r.UpstreamModel)
		b = append(b, `,"lane":"`...)
		b = append(b, r.Lane...)
		b = append(b, `","stream":`...)
		b = strconv.AppendBool(b, r.Stream)
		b = append(b, `,"upstream_status":`...)
		b = strconv.AppendInt(b, int64(r.UpstreamStatus), 10)
		b = append(b, `,"retries":`...)
		b = strconv.AppendInt(b, int64(r.Retries), 10)
		b = append(b, `,"ttfb_ms":`...)
		b = strconv.AppendFloat(b, ms(r.FirstByte), 'f', -1, 64)
		b = append(b, `,"upstream_ms":`...)
		b = strconv.AppendFloat(b, ms(r.Upstream), 'f', -1, 64)
		u := &r.Usage
		for _, f := range [...]struct {
			name string
			v    int64
		}{
			{`,"input_tokens":`, u.Input}, {`,"cache_read_tokens":`, u.CacheRead},
			{`,"cache_write_5m_tokens":`, u.CacheWrite5m}, {`,"cache_write_1h_tokens":`, u.CacheWrite1h},
			{`,"output_tokens":`, u.Output}, {`,"reasoning_tokens":`, u.Reasoning},
		} {
			b = append(b, f.name...)
			b = strconv.AppendInt(b, f.v, 10)
		}
		b = append(b, `,"cost_nano_usd":`...)
		if r.CostKnown {
			b = strconv.AppendInt(b, r.Cost, 10)
		} else {
			b = append(b, "null"...)
		}
	}
	if r.UsageEstimated {
		b = append(b, `,"usage_estimated":true`...)
	}
	if r.ClientGone {
		b = append(b, `,"client_gone":true`...)
	}
	if r.Err != nil {
		b = append(b, `,"error":`...)
		b = jsonx.AppendQuote(b, r.Err.Error())
	}
	return append(b, "}\n"...)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
