package metrics

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

type idleLedger struct{}

func (idleLedger) Pending() (int, int) { return 0, 0 }
func (idleLedger) Rejected() int64     { return 0 }

// The dashboard and the docs name only metrics that exist.
func TestDocumentedMetricsExist(t *testing.T) {
	r := New()
	// Vectors show in a scrape once they have a sample: give them one.
	q := r.Requests()
	q.Observe(Request{Model: "m", Provider: "p", Lane: "passthrough", Status: 200, Latency: time.Second, FirstByte: time.Second,
		Input: 1, CacheRead: 1, CacheWrite: 1, Output: 1, CostNano: 1, CostKnown: true, Retries: 1,
		CacheSavingsNano: 3, CacheWritePremiumNano: 1})
	q.Observe(Request{Model: "m", Provider: "p", Status: 200, Output: 1})
	q.Observe(Request{Model: "m", Provider: "p", Status: 200, Output: 1, CostNano: 1, CostKnown: true, Person: true, Team: "eng"})
	zero := func() int64 { return 0 }
	r.Limiter(LimiterStats{Backend: "memory", Errors: zero, Unchecked: zero, Up: func() bool { return true },
		Refused: func(string) int64 { return 0 }, Kinds: []string{"requests"}})
	r.Ledger(idleLedger{})
	r.Breakers([]Breaker{{Model: "m", Target: "p/u", State: func() int { return 0 }}})
	families, err := r.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, f := range families {
		known[f.GetName()] = true
	}
	name := regexp.MustCompile(`tollgate_[a-z_]+`)
	for _, file := range []string{"../../docs/grafana-dashboard.json", "../../docs/metrics.md", "../../README.md"} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range name.FindAllString(string(b), -1) {
			base := n
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				base = strings.TrimSuffix(base, suffix)
			}
			if !known[base] && !strings.HasSuffix(n, "_") {
				t.Errorf("%s names %s, which tollgate does not export", file, n)
			}
		}
	}
}
