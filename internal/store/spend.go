package store

import (
	"context"
	"database/sql"
	"fmt"
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
//
// Whole hours come from the hourly roll-ups, which the retention of
// records (database.ledger_retention) leaves whole, so a budget period
// longer than the retention (total, monthly, a long rolling window) still
// reloads all of its spend. The part of since's hour after since comes
// from the records. So does, with a slot that is not a whole number of
// hours, each hour a slot boundary cuts, to split it exactly, as long as
// its records are all there: when some were deleted, the hour's whole
// spend goes to its later slot, where it stays in a rolling window a little
// longer than it should rather than leave it early.
func (s *Store) Spend(ctx context.Context, keyID string, models []string, since time.Time, slot time.Duration) (int64, map[int64]int64, error) {
	return s.SpendOf(ctx, SpendKey, keyID, models, since, slot)
}

// Kinds of SpendOf: whose spend it sums.
const (
	SpendKey  = "key"
	SpendUser = principalUser
	SpendTeam = principalTeam
)

// SpendOf is Spend for a key, a user or a team: kind is SpendKey,
// SpendUser or SpendTeam, id its id ("" for everyone's spend). A user's
// and a team's whole hours come from usage_hourly_principals as a key's
// from usage_hourly_keys.
func (s *Store) SpendOf(ctx context.Context, kind, id string, models []string, since time.Time, slot time.Duration) (int64, map[int64]int64, error) {
	var dim *dimension
	switch kind {
	case SpendKey:
		dim = keyDimension
	case SpendUser:
		dim = userDimension
	case SpendTeam:
		dim = teamDimension
	default:
		return 0, nil, fmt.Errorf("spend of %q: want key, user or team", kind)
	}
	if models != nil && len(models) == 0 {
		return 0, nil, nil // no model: no spend
	}
	// One snapshot for the queries below: a batch written between them
	// would otherwise be in the roll-ups and not the records, or the other
	// way round. (SQLite's one connection serialises them anyway.)
	opts := &sql.TxOptions{ReadOnly: true}
	if s.dialect == Postgres {
		opts.Isolation = sql.LevelRepeatableRead
	}
	tx, err := s.db.BeginTx(ctx, opts)
	if err != nil {
		return 0, nil, err
	}
	defer tx.Rollback()
	slotMS := slot.Milliseconds()
	if slotMS < 0 {
		slotMS = 0
	}
	var total int64
	var bySlot map[int64]int64
	if slotMS > 0 {
		bySlot = map[int64]int64{}
	}
	add := func(slot, cost int64) {
		total += cost
		if bySlot != nil && cost != 0 {
			bySlot[slot] += cost
		}
	}
	sinceMS := since.UnixMilli()
	first := max(ceilHour(sinceMS), 0) // the roll-ups from here on; before 1970, the records
	if s.noRollups {
		first = maxTime
	}
	// A record counts for the model it was served as (its canonical
	// model: an alias, or a name a pattern such as claude-* matched, counts
	// under the configured model), in the records as in the roll-ups.
	modelsIn := func(column string, where []string, args []any) ([]string, []any) {
		if models != nil {
			where = append(where, column+" IN (?"+strings.Repeat(",?", len(models)-1)+")")
			for _, m := range models {
				args = append(args, cleanField(m))
			}
		}
		return where, args
	}
	// filter selects the key's (user's, team's) and the models' records.
	filter := func(where []string, args []any) ([]string, []any) {
		if id != "" {
			where, args = append(where, dim.column+" = ?"), append(args, cleanField(id))
			if dim != keyDimension && s.dialect == SQLite {
				where = append(where, dim.column+" <> ''") // the partial index's condition (00015)
			}
		}
		return modelsIn(modelGroup, where, args)
	}

	// The records before the first whole hour.
	if sinceMS < first {
		where, args := filter([]string{"time >= ?", "time < ?", "cost_nano_usd IS NOT NULL"}, []any{sinceMS, first})
		group := "0"
		if slotMS > 0 {
			group = "(time / ?)" // integer division in both databases
			args = append([]any{slotMS}, args...)
		}
		if err := s.scanPairs(ctx, tx, "SELECT "+group+", "+s.sumCost()+" FROM requests WHERE "+strings.Join(where, " AND ")+
			" GROUP BY 1", args, func(k, v, _ int64) { add(k, v) }); err != nil {
			return 0, nil, err
		}
	}
	if s.noRollups {
		return total, bySlot, tx.Commit()
	}

	// The whole hours.
	table, where, args := hourlyAll.name, []string{"hour >= ?"}, []any{first}
	if id != "" {
		cond, condArgs := s.rollupFilter(dim, dim.hourly, id, first, maxTime)
		table, where, args = dim.hourly.name, []string{cond}, condArgs
	}
	where, args = modelsIn("model_group", where, args)
	from := " FROM " + table + " WHERE " + strings.Join(where, " AND ")
	switch {
	case slotMS == 0:
		err = s.scanPairs(ctx, tx, "SELECT 0, "+s.sumCost()+from, args, func(_, v, _ int64) { add(0, v) })
	case slotMS%hourMS == 0:
		// Every hour is inside one slot.
		err = s.scanPairs(ctx, tx, "SELECT hour / ?, "+s.sumCost()+from+" GROUP BY 1", append([]any{slotMS}, args...),
			func(k, v, _ int64) { add(k, v) })
	default:
		err = s.spendCutHours(ctx, tx, filter, from, args, slotMS, add)
	}
	if err != nil {
		return 0, nil, err
	}
	return total, bySlot, tx.Commit()
}

// maxTime is beyond every record's time.
const maxTime = int64(1) << 62

// spendCutHours sums the roll-ups' hours into slots that do not hold whole
// hours: an hour inside one slot goes to it, an hour a slot boundary cuts
// is split by its records when they are all there (the roll-up counts
// them), and goes to its later slot when they are not.
func (s *Store) spendCutHours(ctx context.Context, tx *sql.Tx, filter func([]string, []any) ([]string, []any),
	from string, args []any, slotMS int64, add func(slot, cost int64)) error {
	type hourSum struct{ cost, requests int64 }
	var cut []int64
	cutSum := map[int64]hourSum{}
	err := s.scanPairs(ctx, tx, "SELECT hour, "+s.sumCost()+", "+s.sumOf("requests")+from+" GROUP BY hour", args,
		func(hour, cost, requests int64) {
			firstSlot, lastSlot := hour/slotMS, (hour+hourMS-1)/slotMS
			if firstSlot == lastSlot {
				add(firstSlot, cost)
				return
			}
			cut = append(cut, hour)
			cutSum[hour] = hourSum{cost, requests}
		})
	if err != nil || len(cut) == 0 {
		return err
	}
	// At most one hour per slot boundary: a few dozen ranges.
	ranges := make([]string, len(cut))
	var rangeArgs []any
	for i, h := range cut {
		ranges[i] = "(time >= ? AND time < ?)"
		rangeArgs = append(rangeArgs, h, h+hourMS)
	}
	where, fargs := filter([]string{"(" + strings.Join(ranges, " OR ") + ")"}, rangeArgs)
	type split struct {
		hour, slot int64
		cost       int64
	}
	var splits []split
	counted := map[int64]int64{}
	err = s.scanTriples(ctx, tx, "SELECT time - time % ?, time / ?, "+s.sumCost()+", COUNT(*) FROM requests WHERE "+
		strings.Join(where, " AND ")+" GROUP BY 1, 2", append([]any{int64(hourMS), slotMS}, fargs...),
		func(hour, slot, cost, n int64) {
			splits = append(splits, split{hour, slot, cost})
			counted[hour] += n
		})
	if err != nil {
		return err
	}
	whole := map[int64]bool{}
	for _, h := range cut {
		if counted[h] == cutSum[h].requests {
			whole[h] = true
		} else {
			add((h+hourMS-1)/slotMS, cutSum[h].cost)
		}
	}
	for _, sp := range splits {
		if whole[sp.hour] {
			add(sp.slot, sp.cost)
		}
	}
	return nil
}

// sumCost sums cost_nano_usd as a BIGINT, 0 when there is none.
func (s *Store) sumCost() string { return s.sumOf("cost_nano_usd") }

func (s *Store) sumOf(col string) string {
	if s.dialect == Postgres {
		return "COALESCE(SUM(" + col + "), 0)::BIGINT" // SUM(bigint) is numeric in PostgreSQL
	}
	return "COALESCE(SUM(" + col + "), 0)"
}

// scanPairs runs q and calls fn with each row's two or three integers
// (the third 0 when there are two).
func (s *Store) scanPairs(ctx context.Context, tx *sql.Tx, q string, args []any, fn func(a, b, c int64)) error {
	rows, err := tx.QueryContext(ctx, s.rebind(q), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	for rows.Next() {
		var a, b, c int64
		dest := []any{&a, &b, &c}[:len(cols)]
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		fn(a, b, c)
	}
	return rows.Err()
}

// scanTriples is scanPairs for rows of four integers.
func (s *Store) scanTriples(ctx context.Context, tx *sql.Tx, q string, args []any, fn func(a, b, c, d int64)) error {
	rows, err := tx.QueryContext(ctx, s.rebind(q), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var a, b, c, d int64
		if err := rows.Scan(&a, &b, &c, &d); err != nil {
			return err
		}
		fn(a, b, c, d)
	}
	return rows.Err()
}
