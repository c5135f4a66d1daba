// Package store persists keys and the usage ledger in SQLite (the embedded
// default) or PostgreSQL, through database/sql with one schema and embedded
// migrations for each dialect. Times are unix milliseconds in both.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	"github.com/pressly/goose/v3"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

//go:embed migrations
var migrations embed.FS

// Dialect is the SQL database kind.
type Dialect uint8

const (
	SQLite Dialect = iota + 1
	Postgres
)

// Store is an open database. It is safe for concurrent use.
type Store struct {
	db      *sql.DB
	dialect Dialect

	prepMu  sync.Mutex
	inserts [10]*sql.Stmt    // multi-row INSERTs of request records, by bits.Len(rows)
	upserts [6][10]*sql.Stmt // additions to each of rollupTables, by bits.Len(rows) (0: JSON)
	// sessions are the additions to agent_sessions, by bits.Len(rows).
	sessions [10]*sql.Stmt

	// noRollups makes InsertRequests write records only: for benchmarks
	// that measure what the roll-ups cost.
	noRollups bool
	// ledgerRetention is how long the ledger's detail records are kept
	// (SetLedgerRetention); 0 keeps them.
	ledgerRetention time.Duration
}

// Open connects to a database URL: sqlite://PATH (a file, created if
// missing; sqlite:///abs/path for absolute paths) or postgres://…
// It does not migrate; call Migrate.
func Open(ctx context.Context, rawURL string) (*Store, error) {
	scheme, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		return nil, fmt.Errorf("database url %q: want sqlite://PATH or postgres://…", rawURL)
	}
	var s Store
	var err error
	switch scheme {
	case "sqlite":
		if rest == "" {
			return nil, fmt.Errorf("database url %q: no file path", rawURL)
		}
		s.dialect = SQLite
		// WAL lets readers run beside the one writer; NORMAL sync is safe
		// with WAL (a crash loses at most the last transactions, never
		// corrupts); busy_timeout waits for the writer instead of failing.
		// Checkpointing every 10,000 pages (about 40 MiB of WAL) rather
		// than 1,000 copies each page into the database once per
		// checkpoint rather than about once per ledger batch (some 20%
		// more records written per second).
		//
		// The page cache is bounded to 4 MiB of pages (cache_size is in
		// KiB when negative), about 9 MiB of memory outside Go's heap:
		// modernc's allocator gives each 4 KiB page with its header an
		// 8 KiB slot, and the memory stays with the process once used. A
		// 64 MiB cache took 154 MiB and wrote no faster
		// (BenchmarkInsertRequests), 16 MiB took 48 MiB, and 4 MiB writes
		// as fast: each batch rewrites the current hour's roll-up pages and
		// the indexes' last pages, which it holds, and reads come from the
		// OS's cache of the file (the console's pages over a million
		// records take the same time, BenchmarkPagesAtScale).
		//
		// temp_store stays FILE: with MEMORY a sort SQLite cannot serve
		// from an index (usage grouped by session over a long window)
		// holds every row it sorts in memory, hundreds of MB over millions
		// of records, where FILE spills them.
		dsn := "file:" + rest + "?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=wal_autocheckpoint(10000)&_pragma=cache_size(-4096)"
		s.db, err = sql.Open("sqlite", dsn)
	case "postgres", "postgresql":
		if _, perr := url.Parse(rawURL); perr != nil {
			return nil, fmt.Errorf("database url: %w", perr)
		}
		s.dialect = Postgres
		s.db, err = sql.Open("pgx", rawURL)
	default:
		return nil, fmt.Errorf("database url %q: unknown scheme %q (want sqlite or postgres)", rawURL, scheme)
	}
	if err != nil {
		return nil, err
	}
	if s.dialect == SQLite {
		// One connection writes at a time in SQLite anyway; more only add
		// lock contention.
		s.db.SetMaxOpenConns(1)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := s.db.PingContext(pingCtx); err != nil {
		s.db.Close()
		return nil, fmt.Errorf("connecting to the database: %w", err)
	}
	return &s, nil
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

// Close closes the database.
func (s *Store) Close() error {
	s.prepMu.Lock()
	for _, sts := range append([][10]*sql.Stmt{s.inserts, s.sessions}, s.upserts[:]...) {
		for _, st := range sts {
			if st != nil {
				st.Close()
			}
		}
	}
	s.prepMu.Unlock()
	return s.db.Close()
}

// Dialect reports the database kind.
func (s *Store) Dialect() Dialect { return s.dialect }

// Migrate applies every pending migration.
func (s *Store) Migrate(ctx context.Context) error {
	_, err := s.MigrateReport(ctx)
	return err
}

// MigrateReport is Migrate that also returns the migrations it applied
// (their file names, in order; none when the database was up to date).
func (s *Store) MigrateReport(ctx context.Context) ([]string, error) {
	dir, gd := "migrations/sqlite", goose.DialectSQLite3
	if s.dialect == Postgres {
		dir, gd = "migrations/postgres", goose.DialectPostgres
	}
	sub, err := fs.Sub(migrations, dir)
	if err != nil {
		return nil, err
	}
	p, err := goose.NewProvider(gd, s.db, sub)
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	results, err := p.Up(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrating the database: %w", err)
	}
	applied := make([]string, 0, len(results))
	for _, r := range results {
		applied = append(applied, filepath.Base(r.Source.Path))
	}
	return applied, nil
}

// placeholders renders n rows of cols parameters for a multi-row VALUES.
func (s *Store) placeholders(rows, cols int) string {
	var b strings.Builder
	n := 1
	for r := 0; r < rows; r++ {
		if r > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('(')
		for c := 0; c < cols; c++ {
			if c > 0 {
				b.WriteByte(',')
			}
			if s.dialect == Postgres {
				b.WriteByte('$')
				b.WriteString(strconv.Itoa(n))
				n++
			} else {
				b.WriteByte('?')
			}
		}
		b.WriteByte(')')
	}
	return b.String()
}

// rebind turns ? placeholders into $n for PostgreSQL.
func (s *Store) rebind(q string) string {
	if s.dialect != Postgres {
		return q
	}
	var b strings.Builder
	n := 1
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			n++
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
}

var errNoRows = sql.ErrNoRows

// IsNotFound reports whether err means a row does not exist.
func IsNotFound(err error) bool { return errors.Is(err, errNoRows) }
