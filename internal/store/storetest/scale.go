package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/store"
)

// ScaleEnd is where the scale benchmarks' ledger ends: a fixed instant,
// so that a kept database serves later runs.
var ScaleEnd = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

// ScaleDays is how many days before ScaleEnd the ledger spans.
const ScaleDays = 90

// ScaleRecords is how many records the scale benchmarks want: the value
// of TOLLGATE_BENCH_RECORDS, 0 when unset (they skip).
func ScaleRecords() int {
	n, _ := strconv.Atoi(os.Getenv("TOLLGATE_BENCH_RECORDS"))
	return max(n, 0)
}

// ForScale runs fn on the scale ledger of each database, written if
// needed; skipped without TOLLGATE_BENCH_RECORDS.
func ForScale(b *testing.B, fn func(*testing.B, *store.Store)) {
	n := ScaleRecords()
	if n == 0 {
		b.Skip("TOLLGATE_BENCH_RECORDS is not set")
	}
	for _, name := range []string{"sqlite", "postgres"} {
		b.Run(name, func(b *testing.B) {
			s := Scale(b, name, n)
			if s == nil {
				b.Skip("TOLLGATE_TEST_POSTGRES_URL is not set")
			}
			fn(b, s)
		})
	}
}

// Scale opens (and if needed writes) the benchmark's ledger of n
// records in the database name; nil when PostgreSQL is not configured.
func Scale(b *testing.B, name string, n int) *store.Store {
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
		if _, err := s.DB().Exec(ScaleInsert(s.Dialect(), n)); err != nil {
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
	} else {
		// A kept ledger of an older schema is brought up to date.
		start := time.Now()
		applied, err := s.MigrateReport(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if len(applied) > 0 {
			b.Logf("%s: migrated %v in %s", name, applied, time.Since(start).Round(time.Millisecond))
		}
	}
	var rows [4]int
	for i, t := range []string{"usage_hourly_keys", "usage_hourly", "usage_daily", "usage_daily_keys"} {
		if err := s.DB().QueryRow("SELECT COUNT(*) FROM " + t).Scan(&rows[i]); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("%s: %d records; roll-up rows: %d per key, %d hourly and %d daily over all keys, %d per key and day", name, n, rows[0], rows[1], rows[2], rows[3])
	return s
}

// ScaleInsert writes n records evenly over the 90 days before ScaleEnd,
// in time order as a gateway writes them. Keys, models, statuses, tokens
// and costs come from multiplicative hashes of the row number: the same
// ledger in both databases, and no random() that SQLite could evaluate
// twice for one row.
func ScaleInsert(d store.Dialect, n int) string {
	start := ScaleEnd.Add(-ScaleDays * 24 * time.Hour).UnixMilli()
	span := int64(ScaleDays * 24 * time.Hour / time.Millisecond)
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
