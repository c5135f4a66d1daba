package store

import (
	"context"
	"database/sql"
	"io/fs"

	"github.com/pressly/goose/v3"
)

// What tests and benchmarks of other packages (storetest's ledger at
// scale) need beyond the store's API. The gateway never calls them.

// MigrateTo moves the schema to version, up or down, so that tests can
// start from an earlier schema.
func (s *Store) MigrateTo(ctx context.Context, version int64) error {
	dir, gd := "migrations/sqlite", goose.DialectSQLite3
	if s.dialect == Postgres {
		dir, gd = "migrations/postgres", goose.DialectPostgres
	}
	sub, err := fs.Sub(migrations, dir)
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(gd, s.db, sub)
	if err != nil {
		return err
	}
	current, err := p.GetDBVersion(ctx)
	if err != nil {
		return err
	}
	if current > version {
		_, err = p.DownTo(ctx, version)
	} else {
		_, err = p.UpTo(ctx, version)
	}
	return err
}

// DB is the database handle, for tests that write what Store cannot.
func (s *Store) DB() *sql.DB { return s.db }

// SetNoRollups makes the store write and read records only, as before
// the roll-ups: what benchmarks compare them with.
func (s *Store) SetNoRollups(off bool) { s.noRollups = off }
