// Package metrics exposes tollgate's Prometheus metrics. Every name starts
// with tollgate_.
package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tollgate/tollgate/internal/limit"
	"github.com/tollgate/tollgate/internal/route"
)

// Registry holds the process's metrics.
type Registry struct {
	reg *prometheus.Registry
}

// New returns a registry with the Go runtime and process collectors.
func New() *Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return &Registry{reg: reg}
}

// Handler serves the metrics in the Prometheus exposition format.
func (r *Registry) Handler() http.Handler {
	return promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{Registry: r.reg})
}

// Limiter exports a limiter's counts, read when scraped.
func (r *Registry) Limiter(l *limit.Limiter, backend string) {
	r.reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "tollgate_limiter_errors_total",
			Help: "Failures to reach the limit counters (Redis) or to reload a budget from the ledger.", ConstLabels: prometheus.Labels{"backend": backend}},
			func() float64 { return float64(l.Errors.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "tollgate_limiter_unchecked_total",
			Help: "Requests admitted without their limits checked, while the counters were unreachable (redis.on_error: fail_open).", ConstLabels: prometheus.Labels{"backend": backend}},
			func() float64 { return float64(l.FailedOpen.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tollgate_limiter_up",
			Help: "1 if the limit counters answered the last request that needed them, else 0.", ConstLabels: prometheus.Labels{"backend": backend}},
			func() float64 {
				if l.Up() {
					return 1
				}
				return 0
			}),
	)
	for _, k := range limit.Kinds {
		r.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "tollgate_limiter_refusals_total",
			Help: "Requests refused with 429 by a limit, by kind of limit.", ConstLabels: prometheus.Labels{"limit": string(k)}},
			func() float64 { return float64(l.Refused(k)) }))
	}
}

// Breakers exports the state of each model's targets' circuit breakers:
// 0 closed, 1 half-open, 2 open.
func (r *Registry) Breakers(routes *route.Table) {
	seen := map[[2]string]bool{}
	for _, m := range routes.Models() {
		for _, t := range m.Targets {
			target := t.Provider.Name() + "/" + t.Model
			if seen[[2]string{m.Name, target}] {
				continue
			}
			seen[[2]string{m.Name, target}] = true
			b := t.Breaker
			r.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tollgate_circuit_breaker_state",
				Help:        "State of a target's circuit breaker: 0 closed, 1 half-open, 2 open.",
				ConstLabels: prometheus.Labels{"model": m.Name, "target": target}},
				func() float64 { return float64(b.State()) }))
		}
	}
}
