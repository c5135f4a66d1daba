package gateway

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/tollgate/tollgate/internal/clock"
)

var traceContext = propagation.TraceContext{}

// span records the finished request as one server span, a child of the
// client's traceparent if it sent one, named and described by the
// OpenTelemetry GenAI conventions ("chat MODEL", gen_ai.*) plus
// tollgate's own attributes.
func (g *Gateway) span(r *http.Request, x *exchange) {
	ctx := traceContext.Extract(context.Background(), propagation.HeaderCarrier(r.Header))
	name := r.Method + " " + r.URL.Path
	if x.routed != "" {
		name = "chat " + x.routed
	}
	_, sp := g.tracer.Start(ctx, name, trace.WithTimestamp(x.arrived()), trace.WithSpanKind(trace.SpanKindServer))
	attrs := []attribute.KeyValue{
		attribute.String("http.request.method", r.Method),
		attribute.String("url.path", r.URL.Path),
		attribute.Int("http.response.status_code", x.status),
		attribute.String("tollgate.request_id", x.id),
		attribute.String("tollgate.client_protocol", x.dialect.Name),
	}
	if x.model != "" {
		attrs = append(attrs, attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.request.model", x.model))
	}
	if x.provider != "" {
		cost, known := x.cost()
		attrs = append(attrs,
			attribute.String("gen_ai.provider.name", x.upDialect.String()),
			attribute.String("gen_ai.response.model", x.upstreamModel),
			attribute.Int64("gen_ai.usage.input_tokens", x.usage.TotalInput()),
			attribute.Int64("gen_ai.usage.output_tokens", x.usage.Output),
			attribute.Int64("gen_ai.usage.cache_read_input_tokens", x.usage.CacheRead),
			attribute.Int64("gen_ai.usage.cache_creation_input_tokens", x.usage.CacheWrite5m+x.usage.CacheWrite1h),
			attribute.String("tollgate.provider", x.provider),
			attribute.String("tollgate.lane", x.lane),
			attribute.Bool("tollgate.stream", x.stream),
			attribute.Int("tollgate.retries", x.retries),
		)
		if known {
			attrs = append(attrs, attribute.Float64("tollgate.cost_usd", float64(cost)/1e9))
		}
	}
	if x.key != nil {
		attrs = append(attrs, attribute.String("tollgate.key_id", x.key.ID))
	}
	if t := x.errorType(); t != "" {
		attrs = append(attrs, attribute.String("error.type", t))
		if x.status >= 500 || x.err != nil {
			sp.SetStatus(codes.Error, t)
		}
	}
	sp.SetAttributes(attrs...)
	sp.End(trace.WithTimestamp(clock.Now()))
}
