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
}

// Usage sums the usage records (see inferenceEndpoints) by group, in group
// order; by model, UnknownModel comes last.
func (s *Store) Usage(ctx context.Context, f UsageFilter) ([]UsageGroup, error) {
	var group string
	switch f.GroupBy {
	case ByModel:
		group = modelGroup
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
	scope, scopeArgs := usageScope()
	q += " AND " + scope
	args := append([]any{f.Since.UnixMilli(), until}, scopeArgs...)
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
