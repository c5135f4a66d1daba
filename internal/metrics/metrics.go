// Package metrics exposes tollgate's Prometheus metrics. Every name starts
// with tollgate_.
package metrics

import (
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Registry holds the process's metrics.
type Registry struct {
	reg *prometheus.Registry

	mu       sync.Mutex
	breakers *breakerCollector // registered by the first call of Breakers
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

// LimiterStats is what a limiter reports of itself, read when scraped.
type LimiterStats struct {
	Backend   string       // "memory" or "redis"
	Errors    func() int64 // failures to reach the counters or reload a budget
	Unchecked func() int64 // requests admitted unchecked (fail open)
	Up        func() bool  // the counters answered the last request that needed them
	// Refused counts the refusals by each kind of limit in Kinds.
	Refused func(kind string) int64
	Kinds   []string
}

// Limiter exports a limiter's counts.
func (r *Registry) Limiter(l LimiterStats) {
	backend := prometheus.Labels{"backend": l.Backend}
	r.reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "tollgate_limiter_errors_total",
			Help: "Failures to reach the limit counters (Redis) or to reload a budget from the ledger.", ConstLabels: backend},
			func() float64 { return float64(l.Errors()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "tollgate_limiter_unchecked_total",
			Help: "Requests admitted without their limits checked, while the counters were unreachable (redis.on_error: fail_open).", ConstLabels: backend},
			func() float64 { return float64(l.Unchecked()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tollgate_limiter_up",
			Help: "1 if the limit counters answered the last request that needed them, else 0.", ConstLabels: backend},
			func() float64 {
				if l.Up() {
					return 1
				}
				return 0
			}),
	)
	for _, k := range l.Kinds {
		r.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "tollgate_limiter_refusals_total",
			Help: "Requests refused with 429 by a limit, by kind of limit.", ConstLabels: prometheus.Labels{"limit": k}},
			func() float64 { return float64(l.Refused(k)) }))
	}
}

// Breaker is one model's target and the state of its circuit breaker:
// 0 closed, 1 half-open, 2 open.
type Breaker struct {
	Model, Target string
	State         func() int
}

// Breakers exports the state of each model's targets' circuit breakers.
// A later call replaces the set (a configuration reload changes the
// targets): the models and targets gone stop being exported, without
// resetting any other metric.
func (r *Registry) Breakers(bs []Breaker) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.breakers == nil {
		r.breakers = &breakerCollector{desc: prometheus.NewDesc("tollgate_circuit_breaker_state",
			"State of a target's circuit breaker: 0 closed, 1 half-open, 2 open.", []string{"model", "target"}, nil)}
		r.reg.MustRegister(r.breakers)
	}
	r.breakers.list.Store(&bs)
}

// breakerCollector reads the current breakers when scraped.
type breakerCollector struct {
	desc *prometheus.Desc
	list atomic.Pointer[[]Breaker]
}

func (c *breakerCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *breakerCollector) Collect(ch chan<- prometheus.Metric) {
	for _, b := range *c.list.Load() {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(b.State()), b.Model, b.Target)
	}
}
