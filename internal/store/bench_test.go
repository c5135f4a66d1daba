package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/store"
)

// BenchmarkInsertRequests measures ledger write throughput into a fresh
// database, in batches as the ledger's writer sends them, with records
// like the gateway's (time-ordered ids, a user agent) from 1,000 keys and
// 30 models. keys=uniform picks them at random alike, the worst case for
// the roll-ups: nearly every record of a batch is a roll-up row of its
// own; keys=zipf picks a few keys and models often, as traffic does.
// rollups=false writes the records alone, as before 00007. Run with
// -benchtime 60x or more: the first 30,000 or so records add roll-up rows,
// later ones mostly add to them.
func BenchmarkInsertRequests(b *testing.B) {
	for _, size := range []int{500, 2000} {
		for _, dist := range []string{"uniform", "zipf"} {
			for _, rollups := range []bool{true, false} {
				for name, s := range benchStores(b) {
					b.Run(fmt.Sprintf("%s/batch=%d/keys=%s/rollups=%v", name, size, dist, rollups), func(b *testing.B) {
						s.SetNoRollups(!rollups)
						rng := rand.New(rand.NewPCG(1, 2))
						key, model := func() int { return rng.IntN(1000) }, func() int { return rng.IntN(30) }
						if dist == "zipf" {
							zk, zm := rand.NewZipf(rng, 1.2, 1, 999), rand.NewZipf(rng, 1.2, 1, 29)
							key, model = func() int { return int(zk.Uint64()) }, func() int { return int(zm.Uint64()) }
						}
						batch := make([]store.Request, size)
						n := 0
						cost := int64(1234567)
						saved := int64(54_000_000) // 20,000 cache reads at $3 − $0.30 a million
						start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
						for b.Loop() {
							for i := range batch {
								n++
								t := start.Add(time.Duration(n) * 20 * time.Microsecond)
								m := fmt.Sprintf("model-%02d", model())
								batch[i] = store.Request{ID: fmt.Sprintf("req_%013x%013d", t.UnixMilli(), n), Time: t,
									KeyID: fmt.Sprintf("key_%016d", key()), ClientProtocol: "openai", Endpoint: "/v1/chat/completions",
									Model: m, CanonicalModel: m, Provider: "anthropic", UpstreamModel: "claude-sonnet-4-5-20250929",
									Lane: "translated", Status: 200, Input: 1234, CacheRead: 20000, Output: 321, CostNanoUSD: &cost,
									CacheSavingsNano: &saved, LatencyMS: 812.125, TTFBMS: 402.5, UpstreamMS: 811.9, OverheadMS: 0.225,
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
	}
}
