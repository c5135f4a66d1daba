package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Request is what the gateway reports of one finished request.
type Request struct {
	Model, Provider, Lane string // "" when no upstream was chosen
	Status                int    // 0 when the client left first
	Stream                bool
	Latency, FirstByte    time.Duration
	Upstream, Overhead    time.Duration
	Retries               int
	// Tokens by bucket, and the cost (nano-USD; known false when unpriced).
	Input, CacheRead, CacheWrite, Output int64
	CostNano                             int64
	CostKnown                            bool
	// What prompt caching saved against the input price (cache reads) and
	// what it cost above it (cache writes), in nano-USD, each ≥ 0 and 0
	// when unknown: the request's saving is the first less the second.
	CacheSavingsNano, CacheWritePremiumNano int64
	// Person is true for the requests of a signed-in person or of a key a
	// user owns; Team is their team's name ("" none).
	Person bool
	Team   string
}

// Requests holds the data plane's metrics. It is safe for concurrent use.
type Requests struct {
	total     *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	ttfb      *prometheus.HistogramVec
	upstream  *prometheus.HistogramVec
	overhead  *prometheus.HistogramVec
	tokens    *prometheus.CounterVec
	cost      *prometheus.CounterVec
	saved     *prometheus.CounterVec
	premium   *prometheus.CounterVec
	unpriced  *prometheus.CounterVec
	retries   *prometheus.CounterVec
	streaming prometheus.Gauge
	teams     *teams
}

// latencyBuckets span a cached answer to a long generation.
var latencyBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300}

// overheadBuckets are the gateway's own time: microseconds to milliseconds.
var overheadBuckets = []float64{.00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1}

// Requests registers and returns the data-plane metrics.
func (r *Registry) Requests() *Requests {
	m := &Requests{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tollgate_requests_total",
			Help: "Data-plane requests by model, provider, HTTP status and lane (passthrough, translated, or none)."},
			[]string{"model", "provider", "status", "lane"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "tollgate_request_duration_seconds",
			Help: "Whole request time, until the answer's last byte.", Buckets: latencyBuckets}, []string{"model", "lane"}),
		ttfb: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "tollgate_time_to_first_byte_seconds",
			Help: "Time until the answer's status and headers were sent.", Buckets: latencyBuckets}, []string{"model", "lane"}),
		upstream: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "tollgate_upstream_duration_seconds",
			Help: "Time spent waiting on upstreams, all attempts.", Buckets: latencyBuckets}, []string{"provider"}),
		overhead: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "tollgate_gateway_overhead_seconds",
			Help: "Request time minus upstream time: the gateway's own.", Buckets: overheadBuckets}, []string{"lane"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tollgate_tokens_total",
			Help: "Tokens by model and bucket (input excludes the cache buckets)."}, []string{"model", "bucket"}),
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tollgate_cost_usd_total",
			Help: "Cost of priced requests, in USD."}, []string{"model"}),
		saved: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tollgate_cache_savings_nano_usd_total",
			Help: "What prompt-cache reads saved against the input price, in nano-USD (gross: less tollgate_cache_write_premium_nano_usd_total, the net saving)."},
			[]string{"model"}),
		premium: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tollgate_cache_write_premium_nano_usd_total",
			Help: "What prompt-cache writes cost above the input price, in nano-USD."}, []string{"model"}),
		unpriced: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tollgate_unpriced_requests_total",
			Help: "Requests with tokens on a model without a price: their cost is unknown."}, []string{"model"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tollgate_upstream_retries_total",
			Help: "Upstream attempts after a request's first."}, []string{"model"}),
		streaming: prometheus.NewGauge(prometheus.GaugeOpts{Name: "tollgate_streams_in_flight",
			Help: "Streamed answers being relayed now."}),
	}
	m.teams = newTeams()
	r.reg.MustRegister(m.total, m.latency, m.ttfb, m.upstream, m.overhead, m.tokens, m.cost, m.saved, m.premium, m.unpriced,
		m.retries, m.streaming, m.teams.requests, m.teams.tokens, m.teams.cost)
	return m
}

// statusText holds the status codes as label values, made once.
var statusText = func() (s [600]string) {
	for i := range s {
		s[i] = strconv.Itoa(i)
	}
	return
}()

// StreamStarted and StreamEnded track the streams being relayed.
func (m *Requests) StreamStarted() { m.streaming.Inc() }

// StreamEnded is StreamStarted's pair.
func (m *Requests) StreamEnded() { m.streaming.Dec() }

// Observe records one finished request.
func (m *Requests) Observe(q Request) {
	status := "0"
	if q.Status > 0 && q.Status < len(statusText) {
		status = statusText[q.Status]
	}
	lane := q.Lane
	if lane == "" {
		lane = "none"
	}
	m.total.WithLabelValues(q.Model, q.Provider, status, lane).Inc()
	if q.Person {
		m.teams.observe(&q)
	}
	if q.Provider == "" {
		return // refused before any upstream: no timings or tokens to tell
	}
	m.latency.WithLabelValues(q.Model, lane).Observe(q.Latency.Seconds())
	if q.FirstByte > 0 {
		m.ttfb.WithLabelValues(q.Model, lane).Observe(q.FirstByte.Seconds())
	}
	m.upstream.WithLabelValues(q.Provider).Observe(q.Upstream.Seconds())
	m.overhead.WithLabelValues(lane).Observe(q.Overhead.Seconds())
	for _, b := range [...]struct {
		name string
		n    int64
	}{{"input", q.Input}, {"cache_read", q.CacheRead}, {"cache_write", q.CacheWrite}, {"output", q.Output}} {
		if b.n > 0 {
			m.tokens.WithLabelValues(q.Model, b.name).Add(float64(b.n))
		}
	}
	switch {
	case q.CostKnown && q.CostNano > 0:
		m.cost.WithLabelValues(q.Model).Add(float64(q.CostNano) / 1e9)
	case !q.CostKnown:
		m.unpriced.WithLabelValues(q.Model).Inc()
	}
	if q.CacheSavingsNano > 0 {
		m.saved.WithLabelValues(q.Model).Add(float64(q.CacheSavingsNano))
	}
	if q.CacheWritePremiumNano > 0 {
		m.premium.WithLabelValues(q.Model).Add(float64(q.CacheWritePremiumNano))
	}
	if q.Retries > 0 {
		m.retries.WithLabelValues(q.Model).Add(float64(q.Retries))
	}
}

// LedgerStats is what the usage ledger reports about itself.
type LedgerStats interface {
	Pending() (memory, spilled int) // records not yet written
	Rejected() int64                // records the database refused, set aside
}

// Ledger exports the usage ledger's backlog and refusals, read when scraped.
func (r *Registry) Ledger(l LedgerStats) {
	r.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tollgate_ledger_queue_depth",
			Help: "Usage records waiting in memory to be written."},
			func() float64 { m, _ := l.Pending(); return float64(m) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tollgate_ledger_spilled_records",
			Help: "Usage records waiting in the spill file while the database is unreachable."},
			func() float64 { _, s := l.Pending(); return float64(s) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "tollgate_ledger_rejected_records_total",
			Help: "Usage records the database refused (each logged with its request id and set aside)."},
			func() float64 { return float64(l.Rejected()) }),
	)
}
