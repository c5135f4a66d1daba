package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// GroupBy names a usage grouping.
type GroupBy string

const (
	ByModel    GroupBy = "model"
	ByKey      GroupBy = "key"
	ByDay      GroupBy = "day" // UTC calendar days, as YYYY-MM-DD
	ByProvider GroupBy = "provider"
)

// UsageFilter selects the records a usage query sums: Since inclusive,
// Until exclusive.
type UsageFilter struct {
	Since, Until time.Time
	GroupBy      GroupBy
	KeyID        string // only this key's records, when set
}

// UsageGroup sums the records of one group.
type UsageGroup struct {
	Group        string
	Requests     int64
	Errors       int64 // answered with an error status, or ended by one
	Input        int64
	CacheRead    int64
	CacheWrite5m int64
	CacheWrite1h int64
	Output       int64
	Reasoning    int64
	// CostNanoUSD sums the priced records; nil when none was priced.
	CostNanoUSD *int64
	// Unpriced counts records with tokens whose cost is unknown: their cost
	// is not in CostNanoUSD, so the sum understates the spend.
	Unpriced int64
	// Estimated counts records whose tokens the gateway estimated because
	// the upstream never reported usage (Request.UsageEstimated): their
	// tokens and cost are in the sums, as estimates.
	Estimated int64
}

// Usage sums records by group, in group order.
func (s *Store) Usage(ctx context.Context, f UsageFilter) ([]UsageGroup, error) {
	var group string
	switch f.GroupBy {
	case ByModel:
		group = "model"
	case ByKey:
		group = "COALESCE(key_id, '')"
	case ByProvider:
		group = "provider"
	case ByDay:
		group = "(time / 86400000)" // integer division in both databases
	default:
		return nil, fmt.Errorf("unknown grouping %q", f.GroupBy)
	}
	sum := func(col string) string {
		if s.dialect == Postgres {
			return "COALESCE(SUM(" + col + "), 0)::BIGINT" // SUM(bigint) is numeric in PostgreSQL
		}
		return "COALESCE(SUM(" + col + "), 0)"
	}
	costSum := "SUM(cost_nano_usd)"
	if s.dialect == Postgres {
		costSum = "SUM(cost_nano_usd)::BIGINT"
	}
	q := "SELECT " + group + " AS g, COUNT(*), " +
		sum("CASE WHEN status >= 400 OR error_type <> '' THEN 1 ELSE 0 END") + ", " +
		sum("input_tokens") + ", " + sum("cache_read_tokens") + ", " + sum("cache_write_5m_tokens") + ", " +
		sum("cache_write_1h_tokens") + ", " + sum("output_tokens") + ", " + sum("reasoning_tokens") + ", " +
		costSum + ", " + sum("CASE WHEN cost_nano_usd IS NULL THEN 1 ELSE 0 END") + ", " +
		sum("CASE WHEN usage_estimated THEN 1 ELSE 0 END") + // boolean in PostgreSQL, 0 or 1 in SQLite
		" FROM requests WHERE time >= ? AND time < ?"
	// Records keep whole milliseconds: the end rounds up, so a record
	// made in the same millisecond as a query ending "now" is in it.
	until := f.Until.UnixMilli()
	if f.Until.After(time.UnixMilli(until)) {
		until++
	}
	args := []any{f.Since.UnixMilli(), until}
	if f.KeyID != "" {
		q += " AND key_id = ?"
		args = append(args, cleanField(f.KeyID))
	}
	q += " GROUP BY g ORDER BY g"
	rows, err := s.db.QueryContext(ctx, s.rebind(q), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []UsageGroup
	for rows.Next() {
		var u UsageGroup
		var day int64
		var cost sql.NullInt64
		dest := []any{&u.Group, &u.Requests, &u.Errors, &u.Input, &u.CacheRead, &u.CacheWrite5m, &u.CacheWrite1h,
			&u.Output, &u.Reasoning, &cost, &u.Unpriced, &u.Estimated}
		if f.GroupBy == ByDay {
			dest[0] = &day
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		if f.GroupBy == ByDay {
			u.Group = time.UnixMilli(day * 86400000).UTC().Format(time.DateOnly)
		}
		if cost.Valid {
			c := cost.Int64
			u.CostNanoUSD = &c
		}
		out = append(out, u)
	}
	return out, rows.Err()
}
