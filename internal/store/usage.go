package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
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

// inferenceEndpoints are the gateway's endpoints that run a model: only
// their records are usage. The others (listing models, reading stored
// responses, paths that match no endpoint) are recorded too, for the
// audit trail, but cost nothing and are no one's usage.
var inferenceEndpoints = []string{
	"/v1/messages", "/v1/messages/count_tokens", "/v1/chat/completions", "/v1/responses", "/v1/responses/input_tokens",
	"/v1/responses/compact",
	"/v1beta/models/{model}:generateContent", "/v1beta/models/{model}:streamGenerateContent", "/v1beta/models/{model}:countTokens",
	"/v1/models/{model}:generateContent", "/v1/models/{model}:streamGenerateContent", "/v1/models/{model}:countTokens",
}

// IsInferenceEndpoint reports whether records of endpoint are usage.
func IsInferenceEndpoint(endpoint string) bool { return slices.Contains(inferenceEndpoints, endpoint) }

// UnknownModel is the model group of the records whose model name matched
// no configured model.
const UnknownModel = "(unknown model)"

// usageScope is the condition that keeps a record in usage sums, and its
// arguments. A record made before endpoints were recorded (its endpoint
// empty) is kept unless it has no model and succeeded: only a request
// that is not inference does that (a model endpoint refuses a body
// without a model), so the model listings of before are left out too.
func usageScope() (string, []any) {
	q := "(endpoint IN (?" + strings.Repeat(",?", len(inferenceEndpoints)-1) + ")" +
		" OR (endpoint = '' AND (model <> '' OR status >= 400 OR error_type <> '')))"
	args := make([]any, len(inferenceEndpoints))
	for i, e := range inferenceEndpoints {
		args[i] = e
	}
	return q, args
}

// modelGroup is the model a record counts for: its canonical model, or
// for a record made before those were recorded the name the client sent;
// UnknownModel when that is empty.
const modelGroup = "COALESCE(NULLIF(CASE WHEN endpoint = '' THEN model ELSE canonical_model END, ''), '" + UnknownModel + "')"

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
	// CacheSavingsNanoUSD sums what prompt caching saved the records whose
	// saving is known (Request.CacheSavingsNano); nil when none is.
	CacheSavingsNanoUSD *int64
	// SavingsUnknown counts records whose saving is unknown: their cache
	// tokens, or the input, had no price, or they were made before savings
	// were recorded. Their saving is not in CacheSavingsNanoUSD.
	SavingsUnknown int64
}

// Usage sums the usage records (see inferenceEndpoints) by group, in group
// order; by model, UnknownModel comes last.
//
// The whole UTC hours of [Since, Until) are summed from the hourly
// roll-ups (and, without a key, or by key, its whole UTC days from the
// daily ones);
// only the parts of its first and last hours that it does not cover whole
// are summed from the records themselves. The answer is the sum of the
// records exactly, at a cost that does not grow with the ledger. Once
// database.ledger_retention has deleted the records of an hour, a window
// that starts or ends inside that hour misses that hour's part in the
// window (its whole hours are still exact): usage older than the
// retention is exact to the hour.
func (s *Store) Usage(ctx context.Context, f UsageFilter) ([]UsageGroup, error) {
	var group, rollupGroup string
	switch f.GroupBy {
	case ByModel:
		group, rollupGroup = modelGroup, "model_group"
	case ByKey:
		group, rollupGroup = "COALESCE(key_id, '')", "key_id"
	case ByProvider:
		group, rollupGroup = "provider", "provider"
	case ByDay:
		// Integer division in both databases. Hours and days at or after
		// 1970 only are read from roll-ups, where it rounds as it does here.
		group, rollupGroup = "(time / 86400000)", "(bucket / 86400000)"
	default:
		return nil, fmt.Errorf("unknown grouping %q", f.GroupBy)
	}
	since := f.Since.UnixMilli()
	// Records keep whole milliseconds: the end rounds up, so a record
	// made in the same millisecond as a query ending "now" is in it.
	until := f.Until.UnixMilli()
	if f.Until.After(time.UnixMilli(until)) {
		until++
	}
	var parts []string
	var args []any
	scope, scopeArgs := usageScope()
	records := func(from, to int64) {
		q := "SELECT " + group + " AS g, COUNT(*) AS n, " +
			"SUM(CASE WHEN status >= 400 OR error_type <> '' THEN 1 ELSE 0 END) AS e, " +
			"SUM(input_tokens) AS i, SUM(cache_read_tokens) AS cr, SUM(cache_write_5m_tokens) AS cw5, " +
			"SUM(cache_write_1h_tokens) AS cw1, SUM(output_tokens) AS o, SUM(reasoning_tokens) AS r, " +
			"SUM(cost_nano_usd) AS c, SUM(CASE WHEN cost_nano_usd IS NULL THEN 1 ELSE 0 END) AS u, " +
			"SUM(CASE WHEN usage_estimated THEN 1 ELSE 0 END) AS est, " + // boolean in PostgreSQL, 0 or 1 in SQLite
			"SUM(cache_savings_nano) AS sv, SUM(CASE WHEN cache_savings_nano IS NULL THEN 0 ELSE 1 END) AS svk " +
			"FROM requests WHERE time >= ? AND time < ? AND " + scope
		args = append(append(args, from, to), scopeArgs...)
		if f.KeyID != "" {
			q += " AND key_id = ?"
			args = append(args, cleanField(f.KeyID))
		}
		parts = append(parts, q+" GROUP BY "+group)
	}
	keyed := f.KeyID != "" || f.GroupBy == ByKey
	rollups := func(t rollupTable, from, to int64) {
		bucket := t.keyCols[0] // hour or day
		q := "SELECT " + strings.ReplaceAll(rollupGroup, "bucket", bucket) + " AS g, SUM(requests) AS n, SUM(errors) AS e, " +
			"SUM(input_tokens) AS i, SUM(cache_read_tokens) AS cr, SUM(cache_write_5m_tokens) AS cw5, " +
			"SUM(cache_write_1h_tokens) AS cw1, SUM(output_tokens) AS o, SUM(reasoning_tokens) AS r, " +
			"SUM(cost_nano_usd) AS c, SUM(unpriced) AS u, SUM(estimated) AS est, " +
			"SUM(cache_savings_nano) AS sv, SUM(cache_savings_known) AS svk FROM " + t.name + " WHERE "
		if f.KeyID != "" {
			hours, hoursArgs := s.keyHours(from, to)
			q += hours + " AND key_id = ?"
			args = append(append(args, hoursArgs...), cleanField(f.KeyID))
		} else {
			q += bucket + " >= ? AND " + bucket + " < ?"
			args = append(args, from, to)
		}
		q += " AND is_usage"
		parts = append(parts, q+" GROUP BY 1")
	}
	// [first, last) are the whole hours in the window, and [firstDay,
	// lastDay) its whole UTC days; none before 1970, whose records the
	// roll-ups' rounding and the day's differ on.
	first, last := max(ceilHour(since), 0), floorHour(until)
	firstDay, lastDay := max(ceilDay(since), 0), floorDay(until)
	switch {
	case first < last && !s.noRollups:
		if since < first {
			records(since, first)
		}
		switch {
		case f.KeyID == "" && f.GroupBy == ByKey && firstDay < lastDay:
			// Every key's whole days from a row a key a day.
			if first < firstDay {
				rollups(hourlyKeys, first, firstDay)
			}
			rollups(dailyKeys, firstDay, lastDay)
			if lastDay < last {
				rollups(hourlyKeys, lastDay, last)
			}
		case keyed:
			rollups(hourlyKeys, first, last)
		case firstDay < lastDay:
			// A handful of rows a day, however long the window.
			if first < firstDay {
				rollups(hourlyAll, first, firstDay)
			}
			rollups(dailyAll, firstDay, lastDay)
			if lastDay < last {
				rollups(hourlyAll, lastDay, last)
			}
		default:
			rollups(hourlyAll, first, last)
		}
		if last < until {
			records(last, until)
		}
	case since < until:
		records(since, until)
	default:
		return nil, nil
	}
	sum := func(col string) string {
		if s.dialect == Postgres {
			return "SUM(" + col + ")::BIGINT" // SUM(bigint) is numeric in PostgreSQL
		}
		return "SUM(" + col + ")"
	}
	// The parts' groups meet again: one row per group. Their counts are
	// never NULL; the cost is when no record of the group was priced. The
	// saving of a group none of whose savings is known is NULL (records)
	// or 0 (roll-ups): svk, the number of records whose saving is known,
	// tells.
	q := "SELECT g, " + sum("n") + ", " + sum("e") + ", " + sum("i") + ", " + sum("cr") + ", " + sum("cw5") + ", " +
		sum("cw1") + ", " + sum("o") + ", " + sum("r") + ", " + sum("c") + ", " + sum("u") + ", " + sum("est") + ", " +
		sum("sv") + ", " + sum("svk") + " FROM (" + strings.Join(parts, " UNION ALL ") + ") parts GROUP BY g ORDER BY g"
	rows, err := s.db.QueryContext(ctx, s.rebind(q), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []UsageGroup
	for rows.Next() {
		var u UsageGroup
		var day int64
		var cost, saved sql.NullInt64
		var savedKnown int64
		dest := []any{&u.Group, &u.Requests, &u.Errors, &u.Input, &u.CacheRead, &u.CacheWrite5m, &u.CacheWrite1h,
			&u.Output, &u.Reasoning, &cost, &u.Unpriced, &u.Estimated, &saved, &savedKnown}
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
		if savedKnown > 0 {
			v := saved.Int64
			u.CacheSavingsNanoUSD = &v
		}
		u.SavingsUnknown = u.Requests - savedKnown
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if f.GroupBy == ByModel {
		// The catch-all after the models, whatever the collation sorts.
		if i := slices.IndexFunc(out, func(u UsageGroup) bool { return u.Group == UnknownModel }); i >= 0 {
			u := out[i]
			out = append(slices.Delete(out, i, i+1), u)
		}
	}
	return out, nil
}
