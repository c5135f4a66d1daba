package cli

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"

	"github.com/tollgate/tollgate/internal/breaker"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/gateway"
	"github.com/tollgate/tollgate/internal/limiter"
	"github.com/tollgate/tollgate/internal/route"
	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/tracing"
)

// newLimits builds the limiter: in Redis when redis.url is set, else in
// this process. There is none when nothing could ever be limited: no
// database (so no virtual keys) and no model limits.
func newLimits(cfg *config.Config, routes *route.Table, db *store.Store, logger *slog.Logger) (gateway.Limits, error) {
	if cfg.Redis.URL != "" {
		// Before any client (here or for the breakers) is built: go-redis
		// otherwise prints plain text lines on stderr.
		limiter.RouteRedisLogs(logger)
	}
	defaults, err := cfg.Limits.KeyDefaults.Limit()
	if err != nil {
		return gateway.Limits{}, fmt.Errorf("limits.key_defaults: %w", err)
	}
	out := gateway.Limits{KeyDefaults: defaults, CacheReads: cfg.Limits.TPMCacheReads, CacheWrites: cfg.Limits.CountsCacheWrites()}
	modelLimits := false
	for _, m := range routes.Models() {
		if m.Limits.IsZero() {
			continue
		}
		modelLimits = true
		if m.Limits.BudgetUSD != nil && !m.Priced() {
			return gateway.Limits{}, fmt.Errorf("model %q has a budget but a target without input and output prices (or a per-unit price); give it pricing", m.Name)
		}
	}
	if db == nil && !modelLimits {
		return out, nil
	}
	opts := limiter.Options{FailOpen: cfg.Redis.OnError != config.FailClosed, Logger: logger}
	if db != nil {
		opts.Spender = db
	}
	if cfg.Redis.URL == "" {
		out.Limiter = limiter.New(limiter.NewMemory(), opts)
		return out, nil
	}
	r, err := limiter.NewRedis(cfg.Redis.URL, cfg.Redis.Timeout)
	if err != nil {
		return gateway.Limits{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := r.Ping(ctx); err != nil {
		// Not fatal: the fail mode applies until Redis answers.
		logger.Error("redis: unreachable at start; limits follow redis.on_error until it answers", "error", err)
	}
	out.Limiter = limiter.New(r, opts)
	return out, nil
}

// breakerShareInterval is how often replicas read each other's breakers.
const breakerShareInterval = time.Second

// shareBreakers shares the targets' circuit breakers through Redis when
// redis.url is set, so that replicas skip a failing target together.
func shareBreakers(cfg *config.Config, routes *route.Table, logger *slog.Logger) (stop func(), err error) {
	if cfg.Redis.URL == "" {
		return func() {}, nil
	}
	opt, err := limiter.RedisOptions(cfg.Redis.URL, cfg.Redis.Timeout)
	if err != nil {
		return nil, fmt.Errorf("redis.url: %w", err)
	}
	c := redis.NewClient(opt)
	stopShare := breaker.Share(c, "tollgate:breaker:", routes.Breakers(), breakerShareInterval, logger)
	return func() { stopShare(); c.Close() }, nil
}

// newTracer starts the OTLP span exporter when tracing.otlp_endpoint is
// set; stop flushes what is left.
func newTracer(cfg *config.Config) (trace.Tracer, func(), error) {
	t := cfg.Tracing
	if t.OTLPEndpoint == "" {
		return nil, func() {}, nil
	}
	o := tracing.Options{Endpoint: t.OTLPEndpoint, ServiceName: t.ServiceName, SampleRatio: 1, Version: Version}
	if o.ServiceName == "" {
		o.ServiceName = "tollgate"
	}
	if t.SampleRatio != nil {
		o.SampleRatio = *t.SampleRatio
	}
	tracer, shutdown, err := tracing.New(context.Background(), o)
	if err != nil {
		return nil, nil, err
	}
	return tracer, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		shutdown(ctx)
	}, nil
}
