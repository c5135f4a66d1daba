package tracing

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/tollgate/tollgate/internal/clock"
	"github.com/tollgate/tollgate/internal/outcome"
)

var traceContext = propagation.TraceContext{}

// Span records a finished request as one server span, a child of the
// client's traceparent (in h) if it sent one, named and described by the
// OpenTelemetry GenAI conventions ("chat MODEL", gen_ai.*) plus tollgate's
// own attributes.
func Span(t trace.Tracer, h http.Header, r *outcome.Request) {
	ctx := traceContext.Extract(context.Background(), propagation.HeaderCarrier(h))
	name := r.Method + " " + r.Path
	if r.Routed != "" {
		name = "chat " + r.Routed
	}
	_, sp := t.Start(ctx, name, trace.WithTimestamp(r.Arrived), trace.WithSpanKind(trace.SpanKindServer))
	attrs := []attribute.KeyValue{
		attribute.String("http.request.method", r.Method),
		attribute.String("url.path", r.Path),
		attribute.Int("http.response.status_code", r.Status),
		attribute.String("tollgate.request_id", r.ID),
		attribute.String("tollgate.client_protocol", r.ClientProtocol),
	}
	if r.Model != "" {
		attrs = append(attrs, attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.request.model", r.Model))
	}
	if r.Provider != "" {
		u := r.Usage
		attrs = append(attrs,
			attribute.String("gen_ai.provider.name", r.UpstreamProtocol),
			attribute.String("gen_ai.response.model", r.UpstreamModel),
			attribute.Int64("gen_ai.usage.input_tokens", u.TotalInput()),
			attribute.Int64("gen_ai.usage.output_tokens", u.Output),
			attribute.Int64("gen_ai.usage.cache_read_input_tokens", u.CacheRead),
			attribute.Int64("gen_ai.usage.cache_creation_input_tokens", u.CacheWrite5m+u.CacheWrite1h),
			attribute.String("tollgate.provider", r.Provider),
			attribute.String("tollgate.lane", r.Lane),
			attribute.Bool("tollgate.stream", r.Stream),
			attribute.Int("tollgate.retries", r.Retries),
		)
		if r.CostKnown {
			attrs = append(attrs, attribute.Float64("tollgate.cost_usd", float64(r.Cost)/1e9))
		}
	}
	if r.KeyID != "" {
		attrs = append(attrs, attribute.String("tollgate.key_id", r.KeyID))
	}
	if r.ErrorType != "" {
		attrs = append(attrs, attribute.String("error.type", r.ErrorType))
		if r.Status >= 500 || r.Err != nil {
			sp.SetStatus(codes.Error, r.ErrorType)
		}
	}
	sp.SetAttributes(attrs...)
	sp.End(trace.WithTimestamp(clock.Now()))
}
