package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/store/storetest"
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
				for _, name := range benchStoreNames(b) {
					b.Run(fmt.Sprintf("%s/batch=%d/keys=%s/rollups=%v", name, size, dist, rollups), func(b *testing.B) {
						s := benchStore(b, name)
						s.SetNoRollups(!rollups)
						benchInsert(b, s, size, dist, false)
					})
				}
			}
		}
	}
}

// BenchmarkInsertRequestsUsers is BenchmarkInsertRequests (batch=500,
// keys=zipf) with records of users and teams (users=true: each of 1,000
// users, in one of 20 teams, with a key of their own, in an agent
// session that changes every 2,000 records), against the same records of no one (users=false): what
// the roll-ups by user and team, and the agent sessions, add to a write.
func BenchmarkInsertRequestsUsers(b *testing.B) {
	for _, users := range []bool{false, true} {
		for _, name := range benchStoreNames(b) {
			b.Run(fmt.Sprintf("%s/batch=500/keys=zipf/users=%v", name, users), func(b *testing.B) {
				benchInsert(b, benchStore(b, name), 500, "zipf", users)
			})
		}
	}
}

func benchInsert(b *testing.B, s *store.Store, size int, dist string, users bool) {
	b.ReportAllocs()
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
	cpu := storetest.CPUTime()
	for b.Loop() {
		for i := range batch {
			n++
			t := start.Add(time.Duration(n) * 20 * time.Microsecond)
			m := fmt.Sprintf("model-%02d", model())
			k := key()
			batch[i] = store.Request{ID: fmt.Sprintf("req_%013x%013d", t.UnixMilli(), n), Time: t,
				KeyID: fmt.Sprintf("key_%016d", k), ClientProtocol: "openai", Endpoint: "/v1/chat/completions",
				Model: m, CanonicalModel: m, Provider: "anthropic", UpstreamModel: "claude-sonnet-4-5-20250929",
				Lane: "translated", Status: 200, Input: 1234, CacheRead: 20000, Output: 321, CostNanoUSD: &cost,
				CacheSavingsNano: &saved, LatencyMS: 812.125, TTFBMS: 402.5, UpstreamMS: 811.9, OverheadMS: 0.225,
				ClientIP: "10.1.2.3", UserAgent: "Anthropic/Python 0.75.0"}
			if users {
				batch[i].UserID = fmt.Sprintf("usr_%016d", k)
				batch[i].TeamID = fmt.Sprintf("team_%02d", k%20)
				batch[i].SessionID = fmt.Sprintf("%08d-0000-4000-8000-%012d", k, n/2000)
			}
		}
		if err := s.InsertRequests(context.Background(), batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n)/1000, "µs/record")
	storetest.ReportCPU(b, cpu, n)
}
