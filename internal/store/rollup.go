package store

import (
	"cmp"
	"context"
	"database/sql"
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

// The usage ledger keeps roll-ups beside its records (migrations 00007 and
// 00010; 00011 adds cache savings): usage_hourly_keys per (hour, key, model, model group, provider,
// whether the records are usage), usage_hourly the same over all keys,
// usage_daily that by UTC day, and usage_daily_keys per (UTC day, key,
// whether usage), for usage by key over long windows; 00015 adds
// usage_hourly_principals and usage_daily_principals, the same by user
// and by team. InsertRequests adds
// the records it stores to all of them in the same transaction, so the roll-ups always equal the
// sums of the records written; deleting records (DeleteRequestsBefore)
// leaves them as they are. Usage and Spend read them for whole hours (and
// days) and records only for what is left at a window's edges.

// hourMS is an hour in milliseconds: the roll-ups' bucket.
const hourMS = 3_600_000

// floorHour is the start of the hour that holds ms, rounded toward minus
// infinity as the back-fill of 00007 rounds it (Go's / and %, like SQL's,
// truncate toward zero).
func floorHour(ms int64) int64 { return ms - ((ms%hourMS)+hourMS)%hourMS }

// ceilHour is the start of the first hour that begins at or after ms.
func ceilHour(ms int64) int64 { return floorHour(ms + hourMS - 1) }

// dayMS is a day in milliseconds: usage_daily's bucket (UTC days).
const dayMS = 24 * hourMS

// floorDay is the start of the UTC day that holds ms (as floorHour).
func floorDay(ms int64) int64 { return ms - ((ms%dayMS)+dayMS)%dayMS }

// ceilDay is the start of the first UTC day that begins at or after ms.
func ceilDay(ms int64) int64 { return floorDay(ms + dayMS - 1) }

// rollupKey is a row of usage_hourly_keys; keyID is "" in usage_hourly.
// In usage_hourly_principals kind is "user" or "team" and keyID the
// user's or team's id.
type rollupKey struct {
	hour     int64
	kind     string
	keyID    string // "" for the master key (or no user or team)
	model    string // as the client named it: what budgets filter by
	group    string // modelGroup
	provider string
	endpoint string // usage_hourly's and usage_daily's only (00019)
	usage    bool   // usageScope
}

func (a rollupKey) compare(b rollupKey) int {
	if c := cmp.Compare(a.hour, b.hour); c != 0 {
		return c
	}
	if c := strings.Compare(a.kind, b.kind); c != 0 {
		return c
	}
	if c := strings.Compare(a.keyID, b.keyID); c != 0 {
		return c
	}
	if c := strings.Compare(a.model, b.model); c != 0 {
		return c
	}
	if c := strings.Compare(a.group, b.group); c != 0 {
		return c
	}
	if c := strings.Compare(a.provider, b.provider); c != 0 {
		return c
	}
	if c := strings.Compare(a.endpoint, b.endpoint); c != 0 {
		return c
	}
	if a.usage == b.usage {
		return 0
	}
	if !a.usage {
		return -1
	}
	return 1
}

// rollupSums are the sums of a roll-up row: what UsageGroup reports.
type rollupSums struct {
	requests, errors                                     int64
	input, cacheRead, cacheWrite5m, cacheWrite1h, output int64
	reasoning                                            int64
	cost                                                 int64
	priced                                               bool // cost sums at least one record; NULL otherwise
	unpriced, estimated                                  int64
	// saved sums the known cache savings, of savedKnown records (00011):
	// unlike cost, 0 rather than NULL when there are none.
	saved, savedKnown int64
}

func (a *rollupSums) add(r *Request) {
	a.requests++
	if isErrorRecord(r) {
		a.errors++
	}
	a.input += r.Input
	a.cacheRead += r.CacheRead
	a.cacheWrite5m += r.CacheWrite5m
	a.cacheWrite1h += r.CacheWrite1h
	a.output += r.Output
	a.reasoning += r.Reasoning
	if r.CostNanoUSD != nil {
		a.cost += *r.CostNanoUSD
		a.priced = true
	} else {
		a.unpriced++
	}
	if r.UsageEstimated {
		a.estimated++
	}
	if r.CacheSavingsNano != nil {
		a.saved += *r.CacheSavingsNano
		a.savedKnown++
	}
}

func (a *rollupSums) merge(b *rollupSums) {
	a.requests += b.requests
	a.errors += b.errors
	a.input += b.input
	a.cacheRead += b.cacheRead
	a.cacheWrite5m += b.cacheWrite5m
	a.cacheWrite1h += b.cacheWrite1h
	a.output += b.output
	a.reasoning += b.reasoning
	a.cost += b.cost
	a.priced = a.priced || b.priced
	a.unpriced += b.unpriced
	a.estimated += b.estimated
	a.saved += b.saved
	a.savedKnown += b.savedKnown
}

// isErrorRecord is UsageGroup.Errors' rule: status >= 400 OR error_type <> ”.
func isErrorRecord(r *Request) bool { return r.Status >= 400 || r.ErrorType != "" }

// inUsageScope is usageScope for one (sanitized) record.
func inUsageScope(r *Request) bool {
	if r.Endpoint == "" {
		return r.Model != "" || isErrorRecord(r)
	}
	return IsInferenceEndpoint(r.Endpoint)
}

// modelGroupOf is modelGroup for one (sanitized) record.
func modelGroupOf(r *Request) string {
	g := r.CanonicalModel
	if r.Endpoint == "" {
		g = r.Model
	}
	if g == "" {
		return UnknownModel
	}
	return g
}

// recordKey is the finest grouping of a batch's records: a row of
// usage_hourly_keys of one user and one team.
type recordKey struct {
	rollupKey
	user, team string
}

func recordKeyOf(r *Request) recordKey {
	// Only the inference endpoints are summed by name: a record of any
	// other path (a client may send any) adds to one row, not a row each.
	endpoint := ""
	if IsInferenceEndpoint(r.Endpoint) {
		endpoint = r.Endpoint
	}
	return recordKey{rollupKey{hour: floorHour(r.Time.UnixMilli()), keyID: r.KeyID, model: r.Model, group: modelGroupOf(r),
		provider: r.Provider, endpoint: endpoint, usage: inUsageScope(r)}, r.UserID, r.TeamID}
}

// rollupDelta is what a batch adds to one roll-up row.
type rollupDelta struct {
	key  rollupKey
	sums rollupSums
}

// Principal kinds of usage_hourly_principals (and SpendOf).
const (
	principalUser = "user"
	principalTeam = "team"
)

// aggregate sums records into the rows of the roll-up tables, each sorted
// by key, in rollupTables' order: usage_hourly_keys, usage_hourly,
// usage_daily, usage_daily_keys (the days' keys have the day's start as
// their hour, and those of usage_daily_keys no model or provider),
// usage_hourly_principals and usage_daily_principals (a row of each kind
// for every record: its user's and its team's). Writers that share a
// database lock the rows they add to in one order, so that they cannot
// deadlock.
func aggregate(recs []*Request) [][]rollupDelta {
	byRecord := map[recordKey]*rollupSums{}
	for _, r := range recs {
		k := recordKeyOf(r)
		s := byRecord[k]
		if s == nil {
			s = &rollupSums{}
			byRecord[k] = s
		}
		s.add(r)
	}
	byKey, byAll, byDay, byDayKey := map[rollupKey]*rollupSums{}, map[rollupKey]*rollupSums{}, map[rollupKey]*rollupSums{}, map[rollupKey]*rollupSums{}
	byPrincipal, byDayPrincipal := map[rollupKey]*rollupSums{}, map[rollupKey]*rollupSums{}
	for rk, s := range byRecord {
		k := rk.rollupKey
		// Only usage_hourly and usage_daily have the endpoint: the others'
		// rows of one batch must not repeat a key (PostgreSQL refuses an
		// upsert that changes a row twice).
		withEndpoint := k
		k.endpoint = ""
		mergeInto(byKey, k, s)
		day := floorDay(k.hour)
		mergeInto(byDayKey, rollupKey{hour: day, keyID: k.keyID, usage: k.usage}, s)
		for _, p := range [...]struct{ kind, id string }{{principalUser, rk.user}, {principalTeam, rk.team}} {
			pk := k
			pk.kind, pk.keyID = p.kind, p.id
			mergeInto(byPrincipal, pk, s)
			mergeInto(byDayPrincipal, rollupKey{hour: day, kind: p.kind, keyID: p.id, usage: k.usage}, s)
		}
		k = withEndpoint
		k.keyID = ""
		mergeInto(byAll, k, s)
		k.hour = day
		mergeInto(byDay, k, s)
	}
	return [][]rollupDelta{sortedDeltas(byKey), sortedDeltas(byAll), sortedDeltas(byDay), sortedDeltas(byDayKey),
		sortedDeltas(byPrincipal), sortedDeltas(byDayPrincipal)}
}

func mergeInto(m map[rollupKey]*rollupSums, k rollupKey, s *rollupSums) {
	if a := m[k]; a != nil {
		a.merge(s)
		return
	}
	c := *s
	m[k] = &c
}

func sortedDeltas(m map[rollupKey]*rollupSums) []rollupDelta {
	out := make([]rollupDelta, 0, len(m))
	for k, s := range m {
		out = append(out, rollupDelta{k, *s})
	}
	slices.SortFunc(out, func(a, b rollupDelta) int { return a.key.compare(b.key) })
	return out
}

// rollupTable names a roll-up table and its key columns.
type rollupTable struct {
	name    string
	keyCols []string
}

var (
	hourlyKeys = rollupTable{"usage_hourly_keys", []string{"hour", "key_id", "model", "model_group", "provider", "is_usage"}}
	hourlyAll  = rollupTable{"usage_hourly", []string{"hour", "model", "model_group", "provider", "endpoint", "is_usage"}}
	dailyAll   = rollupTable{"usage_daily", []string{"day", "model", "model_group", "provider", "endpoint", "is_usage"}}
	dailyKeys  = rollupTable{"usage_daily_keys", []string{"day", "key_id", "is_usage"}}
	// Usage by user and by team (00015).
	hourlyPrincipals = rollupTable{"usage_hourly_principals", []string{"hour", "kind", "principal_id", "model", "model_group", "provider", "is_usage"}}
	dailyPrincipals  = rollupTable{"usage_daily_principals", []string{"day", "kind", "principal_id", "is_usage"}}
)

// rollupTables are the roll-up tables, each with the index of its prepared
// upserts in Store.upserts.
var rollupTables = []rollupTable{hourlyKeys, hourlyAll, dailyAll, dailyKeys, hourlyPrincipals, dailyPrincipals}

// keyArgs appends the values of t's key columns of k.
func (t rollupTable) keyArgs(args []any, k rollupKey) []any {
	for _, c := range t.keyCols {
		switch c {
		case "hour", "day":
			args = append(args, k.hour)
		case "key_id", "principal_id":
			args = append(args, k.keyID)
		case "kind":
			args = append(args, k.kind)
		case "model":
			args = append(args, k.model)
		case "model_group":
			args = append(args, k.group)
		case "provider":
			args = append(args, k.provider)
		case "endpoint":
			args = append(args, k.endpoint)
		case "is_usage":
			args = append(args, k.usage)
		}
	}
	return args
}

// rollupSumCols are the summed columns of both tables, in rollupSums' order.
var rollupSumCols = []string{"requests", "errors", "input_tokens", "cache_read_tokens", "cache_write_5m_tokens",
	"cache_write_1h_tokens", "output_tokens", "reasoning_tokens", "cost_nano_usd", "unpriced", "estimated",
	"cache_savings_nano", "cache_savings_known"}

// upsertSQL is the statement that adds deltas to t: an INSERT of the rows
// that are new, an addition to those that exist. rows > 0 binds that many
// rows of parameters (SQLite); rows == 0 takes all of a batch's rows as
// one JSON array (appendDeltas; PostgreSQL): one statement and one round
// trip per table, which SQLite, whose JSON functions are slower than its
// binding, would not gain from.
func (s *Store) upsertSQL(t rollupTable, rows int) string {
	cols := append(slices.Clip(t.keyCols), rollupSumCols...)
	var from string
	if rows > 0 {
		from = " VALUES " + s.placeholders(rows, len(cols))
	} else {
		fields := make([]string, len(cols))
		for i, c := range cols {
			typ := "::bigint"
			switch c {
			case "key_id", "kind", "principal_id", "model", "model_group", "provider", "endpoint":
				typ = ""
			case "is_usage":
				typ = "::boolean"
			}
			fields[i] = "(e ->> " + strconv.Itoa(i) + ")" + typ
		}
		// In the array's order: the keys' (see aggregate).
		from = " SELECT " + strings.Join(fields, ", ") + " FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS d(e, i) ORDER BY i"
	}
	set := make([]string, 0, len(rollupSumCols))
	for _, c := range rollupSumCols {
		if c == "cost_nano_usd" {
			// NULL + x is NULL: a NULL sum (nothing priced yet) takes the
			// delta's, and a NULL delta leaves the sum.
			set = append(set, "cost_nano_usd = CASE WHEN excluded.cost_nano_usd IS NULL THEN "+t.name+".cost_nano_usd "+
				"ELSE COALESCE("+t.name+".cost_nano_usd, 0) + excluded.cost_nano_usd END")
			continue
		}
		set = append(set, c+" = "+t.name+"."+c+" + excluded."+c)
	}
	return "INSERT INTO " + t.name + " (" + strings.Join(cols, ", ") + ")" + from +
		" ON CONFLICT (" + strings.Join(t.keyCols, ", ") + ") DO UPDATE SET " + strings.Join(set, ", ")
}

// upsertStmt returns the prepared upsert into t of rows rows (0: JSON),
// preparing it on first use.
func (s *Store) upsertStmt(ctx context.Context, t rollupTable, rows int) (*sql.Stmt, error) {
	s.prepMu.Lock()
	defer s.prepMu.Unlock()
	cache := &s.upserts[slices.IndexFunc(rollupTables, func(r rollupTable) bool { return r.name == t.name })]
	i := bits.Len(uint(rows))
	if cache[i] == nil {
		stmt, err := s.db.PrepareContext(ctx, s.upsertSQL(t, rows))
		if err != nil {
			return nil, err
		}
		cache[i] = stmt
	}
	return cache[i], nil
}

// prepareUpserts prepares every upsert InsertRequests may run, once: they
// are needed inside its transaction, where SQLite's one connection could
// not prepare them.
func (s *Store) prepareUpserts(ctx context.Context) error {
	for _, t := range rollupTables {
		if s.dialect == Postgres {
			if _, err := s.upsertStmt(ctx, t, 0); err != nil {
				return err
			}
			continue
		}
		for size := 1; size <= maxChunkRows; size *= 2 {
			if _, err := s.upsertStmt(ctx, t, size); err != nil {
				return err
			}
		}
	}
	return nil
}

// addRollups adds deltas to t within tx: in one statement with PostgreSQL,
// in chunks of power-of-two sizes with SQLite.
func (s *Store) addRollups(ctx context.Context, tx *sql.Tx, t rollupTable, deltas []rollupDelta) error {
	if s.dialect == Postgres {
		stmt, err := s.upsertStmt(ctx, t, 0) // prepared by prepareUpserts
		if err != nil {
			return err
		}
		_, err = tx.StmtContext(ctx, stmt).ExecContext(ctx, string(appendDeltas(nil, t, deltas)))
		return err
	}
	perRow := len(t.keyCols) + len(rollupSumCols)
	args := make([]any, 0, min(len(deltas), maxChunkRows)*perRow)
	for start := 0; start < len(deltas); {
		size := chunkSize(len(deltas) - start)
		stmt, err := s.upsertStmt(ctx, t, size)
		if err != nil {
			return err
		}
		args = args[:0]
		for _, d := range deltas[start : start+size] {
			v := d.sums
			var cost any
			if v.priced {
				cost = v.cost
			}
			args = append(t.keyArgs(args, d.key), v.requests, v.errors, v.input, v.cacheRead,
				v.cacheWrite5m, v.cacheWrite1h, v.output, v.reasoning, cost, v.unpriced, v.estimated, v.saved, v.savedKnown)
		}
		if _, err := tx.StmtContext(ctx, stmt).ExecContext(ctx, args...); err != nil {
			return err
		}
		start += size
	}
	return nil
}

// appendDeltas appends deltas to b as a JSON array with one array per
// row, in t's columns' order.
func appendDeltas(b []byte, t rollupTable, deltas []rollupDelta) []byte {
	b = append(b, '[')
	for i, d := range deltas {
		if i > 0 {
			b = append(b, ',')
		}
		v := d.sums
		b = append(b, '[')
		for j, a := range t.keyArgs(nil, d.key) {
			if j > 0 {
				b = append(b, ',')
			}
			switch a := a.(type) {
			case int64:
				b = strconv.AppendInt(b, a, 10)
			case string:
				b = appendJSONString(b, a)
			case bool:
				b = strconv.AppendBool(b, a)
			}
		}
		for _, n := range []int64{v.requests, v.errors, v.input, v.cacheRead, v.cacheWrite5m, v.cacheWrite1h, v.output, v.reasoning} {
			b = strconv.AppendInt(append(b, ','), n, 10)
		}
		if v.priced {
			b = strconv.AppendInt(append(b, ','), v.cost, 10)
		} else {
			b = append(b, ",null"...)
		}
		for _, n := range []int64{v.unpriced, v.estimated, v.saved, v.savedKnown} {
			b = strconv.AppendInt(append(b, ','), n, 10)
		}
		b = append(b, ']')
	}
	return append(b, ']')
}

// appendJSONString appends s as a JSON string. Stored text is valid UTF-8
// without NUL (SanitizeRequest); quotes, backslashes and control
// characters are escaped.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

// keyHours is the condition, and its arguments, that selects the rows of
// usage_hourly_keys in the hours [from, to) for a key_id = ? that follows
// it: one lookup of the primary key (hour, key_id, …) per hour, from the
// first hour the table holds to its last. The table has no index by key:
// every batch would add to it at places spread over the whole index,
// where the rows of the primary key it adds to are those of the current
// hour, together; a key's usage over a year is some 9,000 lookups.
//
// usage_hourly_principals is read the same way, for a user or a team.
func (s *Store) keyHours(table rollupTable, from, to int64) (string, []any) {
	t := table.name
	if s.dialect == Postgres {
		return "hour = ANY(ARRAY(SELECT generate_series(GREATEST(?::bigint, COALESCE((SELECT MIN(hour) FROM " + t + "), ?::bigint)), " +
			"LEAST(?::bigint, COALESCE((SELECT MAX(hour) FROM " + t + ") + 3600000, 0)) - 1, 3600000)))", []any{from, to, to}
	}
	start := "max(?, COALESCE((SELECT MIN(hour) FROM " + t + "), ?))"
	end := "min(?, COALESCE((SELECT MAX(hour) FROM " + t + ") + 3600000, 0))"
	hours := "WITH RECURSIVE hours(h) AS (SELECT " + start + " UNION ALL SELECT h + 3600000 FROM hours WHERE h + 3600000 < " + end + ") " +
		"SELECT h FROM hours WHERE h < " + end // the first may be past the end
	return "hour IN (" + hours + ")", []any{from, to, to, to}
}
