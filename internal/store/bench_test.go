package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/store"
)

// BenchmarkInsertRequests measures ledger write throughput into a fresh
// database, in batches as the ledger's writer sends them, with records
// like the gateway's (time-ordered ids, a key, a user agent).
func BenchmarkInsertRequests(b *testing.B) {
	for _, size := range []int{500, 2000} {
		for name, s := range benchStores(b) {
			b.Run(fmt.Sprintf("%s/batch=%d", name, size), func(b *testing.B) {
				batch := make([]store.Request, size)
				n := 0
				cost := int64(1234567)
				start := time.Now()
				for b.Loop() {
					for i := range batch {
						n++
						t := start.Add(time.Duration(n) * 100 * time.Microsecond)
						batch[i] = store.Request{ID: fmt.Sprintf("req_%013x%013d", t.UnixMilli(), n), Time: t, KeyID: "key_0123456789abcdef",
							ClientProtocol: "openai", Model: "claude-sonnet-4-5", Provider: "anthropic", UpstreamModel: "claude-sonnet-4-5-20250929",
							Lane: "translated", Status: 200, Input: 1234, CacheRead: 20000, Output: 321, CostNanoUSD: &cost,
							LatencyMS: 812.125, TTFBMS: 402.5, UpstreamMS: 811.9, OverheadMS: 0.225,
							ClientIP: "10.1.2.3", UserAgent: "Anthropic/Python 0.75.0"}
					}
					if err := s.InsertRequests(context.Background(), batch); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n)/1000, "µs/record")
			})
		}
	}
}
