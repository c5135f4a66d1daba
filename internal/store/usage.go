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
	ByUser     GroupBy = "user"     // "" for the records of no user
	ByTeam     GroupBy = "team"     // "" for the records of no team
	BySession  GroupBy = "session"  // agent sessions; "" for the records of none
	ByEndpoint GroupBy = "endpoint" // the gateway endpoint called; "" for roll-ups made before 00019
)

// dimension is a way of telling records apart that has roll-ups of its
// own: by key, by user, by team.
type dimension struct {
	column        string // of requests
	hourly, daily rollupTable
	idColumn      string // of the roll-ups
	kind          string // of usage_hourly_principals; "" for keys
}

var (
	keyDimension  = &dimension{"key_id", hourlyKeys, dailyKeys, "key_id", ""}
	userDimension = &dimension{"user_id", hourlyPrincipals, dailyPrincipals, "principal_id", principalUser}
	teamDimension = &dimension{"team_id", hourlyPrincipals, dailyPrincipals, "principal_id", principalTeam}
)

// rollupFilter is the condition, and its arguments, that selects id's
// rows of d's roll-up table t: for the hourly table, an id's hours are
// looked up one by one (keyHours) in [from, to).
func (s *Store) rollupFilter(d *dimension, t rollupTable, id string, from, to int64) (string, []any) {
	hours, args := s.keyHours(t, from, to)
	q := hours + " AND " + d.idColumn + " = ?"
	args = append(args, cleanField(id))
	if d.kind != "" {
		q += " AND kind = ?"
		args = append(args, d.kind)
	}
	return q, args
}

// inferenceEndpoints are the gateway's endpoints that run a model: only
// their records are usage. The others (listing models, reading stored
// responses, paths that match no endpoint) are recorded too, for the
// audit trail, but cost nothing and are no one's usage.
var inferenceEndpoints = []string{
	"/v1/messages", "/v1/messages/count_tokens", "/v1/chat/completions", "/v1/responses", "/v1/responses/input_tokens",
	"/v1/responses/compact", "/v1/embeddings", "/v1/completions", "/v1/moderations", "/v1/images/generations", "/v1/images/edits",
	"/v1/audio/speech", "/v1/audio/transcriptions", "/v1/audio/translations", "/v1/rerank",
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
	UserID       string // only this user's records, when set
	TeamID       string // only this team's records, when set
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
// roll-ups (and, without a key, user or team, or by one of those, its
// whole UTC days from the daily ones); a query that needs two of key,
// user and team (by key for a user, for a team and a key), or is by
// session, has no roll-up to read and sums the records of the whole
// window;
// only the parts of its first and last hours that it does not cover whole
// are summed from the records themselves. The answer is the sum of the
// records exactly, at a cost that does not grow with the ledger. Once
// database.ledger_retention has deleted the records of an hour, a window
// that starts or ends inside that hour misses that hour's part in the
// window (its whole hours are still exact): usage older than the
// retention is exact to the hour.
func (s *Store) Usage(ctx context.Context, f UsageFilter) ([]UsageGroup, error) {
	var group, rollupGroup string
	var groupDim *dimension
	switch f.GroupBy {
	case ByModel:
		group, rollupGroup = modelGroup, "model_group"
	case ByKey:
		group, rollupGroup, groupDim = "COALESCE(key_id, '')", "key_id", keyDimension
	case ByUser:
		group, rollupGroup, groupDim = "user_id", "principal_id", userDimension
	case ByTeam:
		group, rollupGroup, groupDim = "team_id", "principal_id", teamDimension
	case BySession:
		group = "session_id"
	case ByProvider:
		group, rollupGroup = "provider", "provider"
	case ByEndpoint:
		// Only usage_hourly and usage_daily have it: by endpoint for a key,
		// user or team sums records.
		group, rollupGroup = "endpoint", "endpoint"
	case ByDay:
		// Integer division in both databases. Hours and days at or after
		// 1970 only are read from roll-ups, where it rounds as it does here.
		group, rollupGroup = "(time / 86400000)", "(bucket / 86400000)"
	default:
		return nil, fmt.Errorf("unknown grouping %q", f.GroupBy)
	}
	// dim is the one dimension the roll-ups read must have (nil: none),
	// filterID the id it is filtered by ("" for all); onlyRecords when no
	// roll-up has what the query needs.
	dim, filterID, onlyRecords := groupDim, "", f.GroupBy == BySession
	for _, fl := range []struct {
		d  *dimension
		id string
	}{{keyDimension, f.KeyID}, {userDimension, f.UserID}, {teamDimension, f.TeamID}} {
		if fl.id == "" {
			continue
		}
		if (dim != nil && dim != fl.d) || filterID != "" || f.GroupBy == ByEndpoint {
			onlyRecords = true
		}
		dim, filterID = fl.d, fl.id
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
		for _, fl := range []struct{ col, id string }{{"key_id", f.KeyID}, {"user_id", f.UserID}, {"team_id", f.TeamID}} {
			if fl.id != "" {
				q += " AND " + fl.col + " = ?"
				args = append(args, cleanField(fl.id))
				if fl.col != "key_id" && s.dialect == SQLite {
					q += " AND " + fl.col + " <> ''" // the partial index's condition (00015)
				}
			}
		}
		parts = append(parts, q+" GROUP BY "+group)
	}
	rollups := func(t rollupTable, from, to int64) {
		bucket := t.keyCols[0] // hour or day
		q := "SELECT " + strings.ReplaceAll(rollupGroup, "bucket", bucket) + " AS g, SUM(requests) AS n, SUM(errors) AS e, " +
			"SUM(input_tokens) AS i, SUM(cache_read_tokens) AS cr, SUM(cache_write_5m_tokens) AS cw5, " +
			"SUM(cache_write_1h_tokens) AS cw1, SUM(output_tokens) AS o, SUM(reasoning_tokens) AS r, " +
			"SUM(cost_nano_usd) AS c, SUM(unpriced) AS u, SUM(estimated) AS est, " +
			"SUM(cache_savings_nano) AS sv, SUM(cache_savings_known) AS svk FROM " + t.name + " WHERE "
		if filterID != "" {
			cond, condArgs := s.rollupFilter(dim, t, filterID, from, to)
			q += cond
			args = append(args, condArgs...)
		} else {
			q += bucket + " >= ? AND " + bucket + " < ?"
			args = append(args, from, to)
			if dim != nil && dim.kind != "" {
				q += " AND kind = ?"
				args = append(args, dim.kind)
			}
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
	case first < last && !s.noRollups && !onlyRecords:
		if since < first {
			records(since, first)
		}
		switch {
		case dim != nil && filterID == "" && firstDay < lastDay:
			// Every key's (user's, team's) whole days from a row each a day.
			if first < firstDay {
				rollups(dim.hourly, first, firstDay)
			}
			rollups(dim.daily, firstDay, lastDay)
			if lastDay < last {
				rollups(dim.hourly, lastDay, last)
			}
		case dim != nil:
			rollups(dim.hourly, first, last)
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
