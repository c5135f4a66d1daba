package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/store/storetest"
)

var scaleEnd = storetest.ScaleEnd

// BenchmarkUsageAtScale measures Usage over the last 30 days of a ledger
// of TOLLGATE_BENCH_RECORDS records (skipped when unset) spread evenly
// over 90 days, 1,000 keys and 30 models (a tenth of the requests by an
// alias), from the roll-ups and from the records alone (rollups=false:
// the query before 00007). The window's end moves by 37 minutes and some
// seconds between runs, so the edges read from records vary; p50 and p95
// are reported.
//
// The ledger is written with SQL at schema version 6 and migrated: the
// log says how long 00007's back-fill took. With TOLLGATE_BENCH_DIR the
// SQLite file is kept there, and the PostgreSQL schema (tollgate_bench_N)
// kept, for the next run; remove them by hand.
//
//	TOLLGATE_BENCH_RECORDS=1000000 go test ./internal/store -run '^$' -bench UsageAtScale -benchtime 20x
func BenchmarkUsageAtScale(b *testing.B) {
	ctx := context.Background()
	storetest.ForScale(b, func(b *testing.B, s *store.Store) {
		for _, q := range []struct {
			name string
			by   store.GroupBy
			key  string
		}{
			{"by=model", store.ByModel, ""},
			{"by=day", store.ByDay, ""},
			{"by=key", store.ByKey, ""},
			{"by=user", store.ByUser, ""},
			{"by=model/key=key_42", store.ByModel, "key_42"},
		} {
			for _, rollups := range []bool{true, false} {
				b.Run(fmt.Sprintf("%s/rollups=%v", q.name, rollups), func(b *testing.B) {
					s.SetNoRollups(!rollups)
					defer s.SetNoRollups(false)
					var took []time.Duration
					var requests int64
					for b.Loop() {
						i := len(took)
						until := scaleEnd.Add(-time.Duration(i) * (37*time.Minute + 13*time.Second + 7*time.Millisecond))
						start := time.Now()
						got, err := s.Usage(ctx, store.UsageFilter{Since: until.Add(-30 * 24 * time.Hour), Until: until,
							GroupBy: q.by, KeyID: q.key})
						took = append(took, time.Since(start))
						if err != nil {
							b.Fatal(err)
						}
						requests = 0
						for _, g := range got {
							requests += g.Requests
						}
					}
					slices.Sort(took)
					b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
					b.ReportMetric(float64(took[len(took)*95/100].Microseconds())/1000, "p95-ms")
					b.ReportMetric(float64(requests), "requests-summed")
				})
			}
		}
	})
}

// BenchmarkInsertAtScale measures ledger write throughput into the
// ledger of BenchmarkUsageAtScale, after its end, with the records of
// BenchmarkInsertRequests (keys=uniform), and removes what it wrote.
func BenchmarkInsertAtScale(b *testing.B) {
	ctx := context.Background()
	storetest.ForScale(b, func(b *testing.B, s *store.Store) {
		for _, rollups := range []bool{true, false} {
			b.Run(fmt.Sprintf("batch=2000/rollups=%v", rollups), func(b *testing.B) {
				s.SetNoRollups(!rollups)
				defer s.SetNoRollups(false)
				defer func() {
					for _, q := range []string{"DELETE FROM requests WHERE time >= ?", "DELETE FROM usage_hourly_keys WHERE hour >= ?",
						"DELETE FROM usage_hourly WHERE hour >= ?", "DELETE FROM usage_daily WHERE day >= ?", "DELETE FROM usage_daily_keys WHERE day >= ?",
						"DELETE FROM usage_hourly_principals WHERE hour >= ?", "DELETE FROM usage_daily_principals WHERE day >= ?"} {
						if s.Dialect() == store.Postgres {
							q = strings.Replace(q, "?", "$1", 1)
						}
						if _, err := s.DB().ExecContext(ctx, q, scaleEnd.UnixMilli()); err != nil {
							b.Fatal(err)
						}
					}
				}()
				rng := rand.New(rand.NewPCG(1, 2))
				batch := make([]store.Request, 2000)
				cost := int64(1234567)
				n := 0
				for b.Loop() {
					for i := range batch {
						n++
						t := scaleEnd.Add(time.Duration(n) * 20 * time.Microsecond)
						m := fmt.Sprintf("model-%d", rng.IntN(30))
						batch[i] = store.Request{ID: fmt.Sprintf("req_new_%012d", n), Time: t, KeyID: fmt.Sprintf("key_%d", rng.IntN(1000)),
							ClientProtocol: "openai", Endpoint: "/v1/chat/completions", Model: m, CanonicalModel: m, Provider: "provider-0",
							UpstreamModel: "upstream", Lane: "passthrough", Status: 200, Input: 1234, CacheRead: 1000, Output: 321,
							CostNanoUSD: &cost, LatencyMS: 800.5, TTFBMS: 400.25, UpstreamMS: 799.5, OverheadMS: 1, ClientIP: "10.0.0.1",
							UserAgent: "bench", Attempts: "[]"}
					}
					if err := s.InsertRequests(ctx, batch); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
			})
		}
	})
}
