package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/store"
)

// scaleEnd is where the scale benchmark's ledger ends: a fixed instant,
// so that a kept database serves later runs.
var scaleEnd = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

const scaleDays = 90

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
	forScale(b, func(b *testing.B, s *store.Store) {
		for _, q := range []struct {
			name string
			by   store.GroupBy
			key  string
		}{
			{"by=model", store.ByModel, ""},
			{"by=day", store.ByDay, ""},
			{"by=key", store.ByKey, ""},
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
	forScale(b, func(b *testing.B, s *store.Store) {
		for _, rollups := range []bool{true, false} {
			b.Run(fmt.Sprintf("batch=2000/rollups=%v", rollups), func(b *testing.B) {
				s.SetNoRollups(!rollups)
				defer s.SetNoRollups(false)
				defer func() {
					for _, q := range []string{"DELETE FROM requests WHERE time >= ?", "DELETE FROM usage_hourly_keys WHERE hour >= ?",
						"DELETE FROM usage_hourly WHERE hour >= ?", "DELETE FROM usage_daily WHERE day >= ?"} {
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

// forScale runs fn on the scale ledger of each database, written if
// needed; skipped without TOLLGATE_BENCH_RECORDS.
func forScale(b *testing.B, fn func(*testing.B, *store.Store)) {
	n, _ := strconv.Atoi(os.Getenv("TOLLGATE_BENCH_RECORDS"))
	if n <= 0 {
		b.Skip("TOLLGATE_BENCH_RECORDS is not set")
	}
	for _, name := range []string{"sqlite", "postgres"} {
		b.Run(name, func(b *testing.B) {
			s := scaleStore(b, name, n)
			if s == nil {
				b.Skip("TOLLGATE_TEST_POSTGRES_URL is not set")
			}
			fn(b, s)
		})
	}
}

// scaleStore opens (and if needed writes) the benchmark's ledger of n
// records in the database name; nil when PostgreSQL is not configured.
func scaleStore(b *testing.B, name string, n int) *store.Store {
	b.Helper()
	ctx := context.Background()
	dir := os.Getenv("TOLLGATE_BENCH_DIR")
	keep := dir != ""
	if !keep {
		dir = b.TempDir()
	}
	var url string
	switch name {
	case "sqlite":
		url = "sqlite://" + filepath.Join(dir, fmt.Sprintf("scale-%d.db", n))
	case "postgres":
		pg := os.Getenv("TOLLGATE_TEST_POSTGRES_URL")
		if pg == "" {
			return nil
		}
		schema := fmt.Sprintf("tollgate_bench_%d", n)
		admin, err := sql.Open("pgx", pg)
		if err != nil {
			b.Fatal(err)
		}
		defer admin.Close()
		if _, err := admin.Exec("CREATE SCHEMA IF NOT EXISTS " + schema); err != nil {
			b.Fatal(err)
		}
		if !keep {
			b.Cleanup(func() {
				if a, err := sql.Open("pgx", pg); err == nil {
					a.Exec("DROP SCHEMA " + schema + " CASCADE")
					a.Close()
				}
			})
		}
		sep := "?"
		if strings.Contains(pg, "?") {
			sep = "&"
		}
		url = pg + sep + "search_path=" + schema
	}
	s, err := store.Open(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	// A ledger kept from an earlier run, whole, is used as it is.
	var have, summed sql.NullInt64
	s.DB().QueryRow("SELECT COUNT(*) FROM requests").Scan(&have)
	s.DB().QueryRow("SELECT SUM(requests) FROM usage_hourly").Scan(&summed)
	if have.Int64 != int64(n) || summed.Int64 != int64(n) {
		if err := s.MigrateTo(ctx, 6); err != nil {
			b.Fatal(err)
		}
		if _, err := s.DB().Exec("DELETE FROM requests"); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if _, err := s.DB().Exec(scaleInsert(s.Dialect(), n)); err != nil {
			b.Fatalf("writing %d records: %v", n, err)
		}
		b.Logf("%s: wrote %d records in %s", name, n, time.Since(start).Round(time.Millisecond))
		start = time.Now()
		applied, err := s.MigrateReport(ctx)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("%s: migrated %v in %s (00007 back-fills the roll-ups)", name, applied, time.Since(start).Round(time.Millisecond))
		if _, err := s.DB().Exec("ANALYZE"); err != nil {
			b.Fatal(err)
		}
	} else if err := s.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	var rows [3]int
	for i, t := range []string{"usage_hourly_keys", "usage_hourly", "usage_daily"} {
		if err := s.DB().QueryRow("SELECT COUNT(*) FROM " + t).Scan(&rows[i]); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("%s: %d records; roll-up rows: %d per key, %d hourly and %d daily over all keys", name, n, rows[0], rows[1], rows[2])
	return s
}

// scaleInsert writes n records evenly over the 90 days before scaleEnd,
// in time order as a gateway writes them. Keys, models, statuses, tokens
// and costs come from multiplicative hashes of the row number: the same
// ledger in both databases, and no random() that SQLite could evaluate
// twice for one row.
func scaleInsert(d store.Dialect, n int) string {
	start := scaleEnd.Add(-scaleDays * 24 * time.Hour).UnixMilli()
	span := int64(scaleDays * 24 * time.Hour / time.Millisecond)
	cols := "id, time, key_id, client_protocol, model, provider, upstream_model, lane, stream, status, error_type, " +
		"input_tokens, cache_read_tokens, cache_write_5m_tokens, cache_write_1h_tokens, output_tokens, reasoning_tokens, " +
		"cost_nano_usd, latency_ms, ttfb_ms, upstream_ms, overhead_ms, client_ip, user_agent, attempts, usage_estimated, " +
		"endpoint, canonical_model"
	id, boolean, seq := "printf('req_%012d', i)", "", ""
	switch d {
	case store.SQLite:
		boolean = "%s"
		seq = fmt.Sprintf("WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i < %d) ", n-1)
	case store.Postgres:
		id = "'req_' || lpad(i::text, 12, '0')"
		boolean = "(%s) <> 0"
	}
	key := "'key_' || (i * 2654435761 % 1000003 % 1000)"
	model := "(i * 40503 % 65521 % 30)"
	alias := "(i * 97 % 101 < 10)"
	failed := "(i * 31 % 100 < 3)"
	input, output := "(i * 7 % 5000)", "(i * 11 % 1000)"
	canonical := "'model-' || " + model
	q := "INSERT INTO requests (" + cols + ") SELECT " + id + ", " +
		fmt.Sprintf("%d + i * %d / %d, ", start, span, n) + key + ", 'openai', " +
		"CASE WHEN " + alias + " THEN 'alias-' || " + model + " ELSE " + canonical + " END, " +
		"'provider-' || (" + model + " % 3), 'upstream-' || " + model + ", 'passthrough', " +
		fmt.Sprintf(boolean, "i % 2") + ", " +
		"CASE WHEN " + failed + " THEN 429 ELSE 200 END, CASE WHEN " + failed + " THEN 'rate_limit_error' ELSE '' END, " +
		input + ", (i * 17 % 3) * 1000, 0, 0, " + output + ", 0, " +
		"CASE WHEN i * 13 % 100 < 5 THEN NULL ELSE " + input + " * 3000 + " + output + " * 15000 END, " +
		"800.5, 400.25, 799.5, 1.0, '10.0.0.1', 'bench', '[]', " + fmt.Sprintf(boolean, "CASE WHEN i % 50 = 0 THEN 1 ELSE 0 END") + ", " +
		"CASE WHEN i % 2 = 0 THEN '/v1/messages' ELSE '/v1/chat/completions' END, " + canonical
	switch d {
	case store.SQLite:
		return seq + q + " FROM seq"
	default:
		return q + fmt.Sprintf(" FROM generate_series(0::bigint, %d) AS i", n-1)
	}
}
