package ledger

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
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

// BenchmarkRecordUsers measures the ledger as the gateway uses it under
// many small requests: records from concurrent requests (async, 16 per
// CPU), each of one of 1,000 keys and their users (a few of them making
// most requests), in 20 teams, in agent sessions that change every 2,000
// records, with one upstream attempt; written in the background, Close
// timed, the buffer large enough that none is spilled. cpu-µs/record is the process's CPU per record (the database's
// too with SQLite; the client's alone with PostgreSQL).
func BenchmarkRecordUsers(b *testing.B) {
	for name, s := range storetest.Open(b) {
		b.Run(name, func(b *testing.B) {
			// Records come faster than any database takes them: the
			// buffer holds them all, so that what is measured is writing
			// them, not spilling them.
			r, err := New(s, Options{SpillPath: filepath.Join(b.TempDir(), "spill"), BufferSize: b.N + 1})
			if err != nil {
				b.Fatal(err)
			}
			// The records' varying fields, made before the clock starts.
			rng := rand.New(rand.NewPCG(1, 2))
			zk, zm := rand.NewZipf(rng, 1.2, 1, 999), rand.NewZipf(rng, 1.2, 1, 29)
			type who struct{ key, user, team, model string }
			people := make([]who, 4096)
			for i := range people {
				k, m := zk.Uint64(), zm.Uint64()
				people[i] = who{fmt.Sprintf("key_%016d", k), fmt.Sprintf("usr_%016d", k), fmt.Sprintf("team_%02d", k%20),
					fmt.Sprintf("model-%02d", m)}
			}
			cost := int64(1234567)
			saved := int64(54_000_000)
			start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
			base := benchSeq.Add(1) << 32 // ids of their own in a shared database
			var seq atomic.Int64
			b.SetParallelism(16)
			b.ReportAllocs()
			cpu := storetest.CPUTime()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				id := make([]byte, 0, 40)
				for pb.Next() {
					n := seq.Add(1)
					p := people[n%int64(len(people))]
					t := start.Add(time.Duration(n) * 20 * time.Microsecond)
					id = strconv.AppendInt(append(id[:0], "req_"...), base+n, 16)
					r.RecordRow(store.Request{ID: string(id), Time: t, KeyID: p.key, UserID: p.user, TeamID: p.team,
						SessionID: p.user[4:] + "-" + strconv.FormatInt(n/2000, 10), ClientProtocol: "anthropic",
						Endpoint: "/v1/messages", Model: p.model, CanonicalModel: p.model, Provider: "anthropic",
						UpstreamModel: "claude-sonnet-4-5-20250929", Lane: "passthrough", Stream: true, Status: 200,
						Input: 1234, CacheRead: 20000, Output: 321, CostNanoUSD: &cost, CacheSavingsNano: &saved,
						LatencyMS: 812.125, TTFBMS: 402.5, UpstreamMS: 811.9, OverheadMS: 0.225,
						ClientIP: "10.1.2.3", UserAgent: "claude-cli/2.0.14 (external, cli)",
						Attempts: `[{"target":"anthropic/claude-sonnet-4-5","status":200,"error":"","ms":811.9}]`})
				}
			})
			if err := r.Close(context.Background()); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
			storetest.ReportCPU(b, cpu, b.N)
		})
	}
}
