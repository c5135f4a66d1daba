package store

import (
	"context"
	"time"
)

// SetLedgerRetention sets how long the ledger's detail records are kept
// (database.ledger_retention; 0, the default, keeps them forever). The
// store only carries it: a ledger.Recorder writing to the store deletes
// older records while it runs (DeleteRequestsBefore), so that only the
// gateway prunes, never a command that opens the database for a moment.
func (s *Store) SetLedgerRetention(d time.Duration) { s.ledgerRetention = max(d, 0) }

// LedgerRetention is what SetLedgerRetention set.
func (s *Store) LedgerRetention() time.Duration { return s.ledgerRetention }

// DeleteRequestsBefore deletes at most limit detail records made before
// before, oldest first, and returns how many it deleted. The hourly
// roll-ups keep counting them: usage over whole hours stays exact (see
// Usage). Small batches keep each statement short, so the ledger's writer
// (and SQLite's one connection) waits little for it.
func (s *Store) DeleteRequestsBefore(ctx context.Context, before time.Time, limit int) (int64, error) {
	if limit <= 0 {
		return 0, nil
	}
	q := "DELETE FROM requests WHERE id IN (SELECT id FROM requests WHERE time < ? ORDER BY time LIMIT ?)"
	if s.dialect == SQLite {
		q = "DELETE FROM requests WHERE rowid IN (SELECT rowid FROM requests WHERE time < ? ORDER BY time LIMIT ?)"
	}
	res, err := s.db.ExecContext(ctx, s.rebind(q), before.UnixMilli(), limit)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
