package metrics

import (
	"testing"
	"time"
)

// BenchmarkObserve is what the metrics cost a served request.
func BenchmarkObserve(b *testing.B) {
	m := New().Requests()
	q := Request{Model: "claude-sonnet-4-5", Provider: "ant", Lane: "passthrough", Status: 200, Latency: 2 * time.Second,
		FirstByte: 300 * time.Millisecond, Upstream: 2 * time.Second, Overhead: 100 * time.Microsecond,
		Input: 12, CacheRead: 2048, CacheWrite: 512, Output: 300, CostNano: 5_000_000, CostKnown: true,
		CacheSavingsNano: 5_529_600, CacheWritePremiumNano: 384_000}
	b.ReportAllocs()
	for b.Loop() {
		m.Observe(q)
	}
}
