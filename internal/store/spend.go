package store

import (
	"context"
	"strings"
	"time"
)

// Spend sums the cost of the records since since (inclusive) for one key
// ("" for every key) and a set of model names (nil for every model). With
// slot > 0 it also returns the sums per slot, indexed by unix milliseconds
// divided by the slot's milliseconds. Unpriced records add nothing. The
// limiter uses it to reload a budget's counter.
//
// It takes no endpoint filter: records of the endpoints that are not
// inference have no tokens and cost exactly 0, and a list of endpoints
// that fell behind the gateway's could only let spend escape a budget.
func (s *Store) Spend(ctx context.Context, keyID string, models []string, since time.Time, slot time.Duration) (int64, map[int64]int64, error) {
	where := []string{"time >= ?", "cost_nano_usd IS NOT NULL"}
	args := []any{since.UnixMilli()}
	if keyID != "" {
		where, args = append(where, "key_id = ?"), append(args, cleanField(keyID))
	}
	if models != nil {
		where = append(where, "model IN (?"+strings.Repeat(",?", len(models)-1)+")")
		for _, m := range models {
			args = append(args, cleanField(m))
		}
	}
	sum := "SUM(cost_nano_usd)"
	if s.dialect == Postgres {
		sum = "SUM(cost_nano_usd)::bigint"
	}
	group := "0"
	if ms := slot.Milliseconds(); ms > 0 {
		group = "(time / ?)" // integer division in both databases
		args = append([]any{ms}, args...)
	}
	q := "SELECT " + group + " AS slot, " + sum + " FROM requests WHERE " + strings.Join(where, " AND ") + " GROUP BY 1"
	rows, err := s.db.QueryContext(ctx, s.rebind(q), args...)
	if err != nil {
		return 0, nil, err
	}
	defer rows.Close()
	var total int64
	var bySlot map[int64]int64
	if slot > 0 {
		bySlot = map[int64]int64{}
	}
	for rows.Next() {
		var k, v int64
		if err := rows.Scan(&k, &v); err != nil {
			return 0, nil, err
		}
		total += v
		if bySlot != nil {
			bySlot[k] = v
		}
	}
	return total, bySlot, rows.Err()
}
