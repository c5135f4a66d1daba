// Package tracing exports a span per data-plane request over OTLP/HTTP,
// with the OpenTelemetry GenAI semantic conventions. It is off unless an
// endpoint is configured.
package tracing

import (
	"context"
	"fmt"
	"net/url"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Options configure the exporter.
type Options struct {
	// Endpoint is the collector's OTLP/HTTP address, such as
	// http://otel-collector:4318; /v1/traces is added when it has no path.
	Endpoint    string
	ServiceName string
	// SampleRatio is the share of traces kept (1 keeps all); a sampled
	// parent (traceparent) is always followed.
	SampleRatio float64
	Version     string
}

// built is set once New has been called.
var built atomic.Bool

// Built reports whether this process has built an exporter: a gateway
// with tracing off must not (what tests of start-up check).
func Built() bool { return built.Load() }

// New returns a tracer that exports to the endpoint, and a function that
// flushes and stops it.
func New(ctx context.Context, o Options) (trace.Tracer, func(context.Context) error, error) {
	built.Store(true)
	u, err := url.Parse(o.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, nil, fmt.Errorf("tracing.otlp_endpoint %q: want http(s)://host:port", o.Endpoint)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces"
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(u.String()))
	if err != nil {
		return nil, nil, fmt.Errorf("tracing: %w", err)
	}
	res := resource.NewSchemaless(attribute.String("service.name", o.ServiceName), attribute.String("service.version", o.Version))
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(o.SampleRatio))),
	)
	return tp.Tracer("github.com/tollgate/tollgate"), tp.Shutdown, nil
}
