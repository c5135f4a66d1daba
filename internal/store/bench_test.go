package store

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkInsertRequests measures ledger write throughput in batches of
// 500 records, as the ledger's writer sends them.
func BenchmarkInsertRequests(b *testing.B) {
	for name, s := range benchStores(b) {
		b.Run(name, func(b *testing.B) {
			batch := make([]Request, 500)
			n := 0
			for b.Loop() {
				for i := range batch {
					n++
					batch[i] = Request{ID: fmt.Sprintf("req_%s_%09d", name, n), Time: time.UnixMilli(int64(n)),
						ClientProtocol: "openai", Model: "m", Provider: "p", UpstreamModel: "u", Lane: "passthrough",
						Status: 200, Input: 100, Output: 10, ClientIP: "127.0.0.1", UserAgent: "bench"}
				}
				if err := s.InsertRequests(context.Background(), batch); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
