// Package storetest opens the databases tests run against: SQLite always,
// and PostgreSQL when TOLLGATE_TEST_POSTGRES_URL is set (each test in a
// schema of its own, dropped afterwards).
package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/store"
)

var seq atomic.Int64

// Open returns migrated stores by name ("sqlite", "postgres"), closed and
// dropped when the test ends.
func Open(t testing.TB) map[string]*store.Store {
	t.Helper()
	out := map[string]*store.Store{"sqlite": SQLite(t)}
	if pg := Postgres(t); pg != nil {
		out["postgres"] = pg
	}
	return out
}

// SQLite returns a migrated store in a fresh SQLite file.
func SQLite(t testing.TB) *store.Store {
	t.Helper()
	ctx := context.Background()
	s, err := store.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Postgres returns a migrated store in a fresh schema of the database at
// TOLLGATE_TEST_POSTGRES_URL, or nil (logged) when it is not set.
func Postgres(t testing.TB) *store.Store {
	t.Helper()
	pgURL, schemaURL := SchemaURL(t)
	if pgURL == "" {
		return nil
	}
	ctx := context.Background()
	pg, err := store.Open(ctx, schemaURL)
	if err != nil {
		t.Fatal(err)
	}
	if err := pg.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pg.Close() })
	return pg
}

// SchemaURL creates a schema of its own for this test and returns the
// server URL and one that selects the schema; ("", "") when
// TOLLGATE_TEST_POSTGRES_URL is not set.
func SchemaURL(t testing.TB) (server, withSchema string) {
	t.Helper()
	pgURL := os.Getenv("TOLLGATE_TEST_POSTGRES_URL")
	if pgURL == "" {
		t.Log("TOLLGATE_TEST_POSTGRES_URL is not set: PostgreSQL tests skipped, SQLite only")
		return "", ""
	}
	schema := fmt.Sprintf("t_%d_%d", time.Now().UnixNano(), seq.Add(1))
	admin, err := sql.Open("pgx", pgURL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatalf("PostgreSQL at TOLLGATE_TEST_POSTGRES_URL: %v", err)
	}
	t.Cleanup(func() { admin.Exec("DROP SCHEMA " + schema + " CASCADE"); admin.Close() })
	sep := "?"
	if strings.Contains(pgURL, "?") {
		sep = "&"
	}
	return pgURL, pgURL + sep + "search_path=" + schema
}
