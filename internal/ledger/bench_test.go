package ledger

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/store/storetest"
)

var benchSeq atomic.Int64

// BenchmarkRecord measures recording throughput from many concurrent
// requests, each record written when the run ends (Close is timed), with
// records written in the background (async) and committed before Record
// returns (sync, group commit: 16 callers per CPU share transactions;
// sync-serial: one per CPU, close to a transaction each). Compare
// records/s.
func BenchmarkRecord(b *testing.B) {
	for name, s := range storetest.Open(b) {
		for _, mode := range []struct {
			name     string
			sync     bool
			inFlight int // requests in flight per CPU
		}{{"async", false, 16}, {"sync", true, 16}, {"sync-serial", true, 1}} {
			b.Run(name+"/"+mode.name, func(b *testing.B) {
				r, err := New(s, Options{Sync: mode.sync, SpillPath: filepath.Join(b.TempDir(), "spill")})
				if err != nil {
					b.Fatal(err)
				}
				cost := int64(1234567)
				saved := int64(54_000_000) // 20,000 cache reads at $3 − $0.30 a million
				start := time.Now()
				b.SetParallelism(mode.inFlight)
				b.ReportAllocs()
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						n := benchSeq.Add(1)
						t := start.Add(time.Duration(n) * 100 * time.Microsecond)
						r.RecordRow(store.Request{ID: fmt.Sprintf("req_%013x%013d", t.UnixMilli(), n), Time: t, KeyID: "key_0123456789abcdef",
							ClientProtocol: "openai", Model: "claude-sonnet-4-5", Provider: "anthropic", UpstreamModel: "claude-sonnet-4-5-20250929",
							Lane: "translated", Status: 200, Input: 1234, CacheRead: 20000, Output: 321, CostNanoUSD: &cost, CacheSavingsNano: &saved,
							LatencyMS: 812.125, TTFBMS: 402.5, UpstreamMS: 811.9, OverheadMS: 0.225,
							ClientIP: "10.1.2.3", UserAgent: "Anthropic/Python 0.75.0",
							Attempts: `[{"target":"anthropic/claude-sonnet-4-5","status":200,"error":"","ms":811.9}]`})
					}
				})
				if err := r.Close(context.Background()); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
			})
		}
	}
}
