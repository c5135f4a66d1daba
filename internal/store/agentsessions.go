package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"time"
)

// AgentSession sums the records of one agent session (the session id a
// client such as Claude Code sends) of one key and user: what the
// sessions view lists without reading the records.
type AgentSession struct {
	SessionID string
	KeyID     string // "" for the master key
	UserID    string // "" for none
	TeamID    string // of the latest record
	Model     string // of the latest record, as the client named it
	FirstSeen time.Time
	LastSeen  time.Time
	Requests  int64
	Input     int64 // fresh input tokens
	CacheRead int64
	// CacheWrite sums both cache lifetimes' writes.
	CacheWrite int64
	Output     int64
	// CostNanoUSD sums the priced records; nil when none was priced.
	CostNanoUSD *int64
}

// CacheReadShare is the share of the session's prompt tokens read from
// the cache: CacheRead / (Input + CacheRead + CacheWrite), 0 without
// prompt tokens.
func (a AgentSession) CacheReadShare() float64 {
	total := a.Input + a.CacheRead + a.CacheWrite
	if total <= 0 {
		return 0
	}
	return float64(a.CacheRead) / float64(total)
}

// sessionKey is agent_sessions' primary key.
type sessionKey struct{ session, key, user string }

// sessionDelta is what a batch adds to one agent session.
type sessionDelta struct {
	sessionKey
	team, model                        string
	first, last                        int64
	requests, input, cacheRead, cacheW int64
	output, cost                       int64
	priced                             bool
}

const agentSessionCols = 13

// addAgentSessions adds the stored records that name a session to
// agent_sessions, within tx, in the order of the sessions' keys (as the
// roll-ups, so that writers cannot deadlock).
func (s *Store) addAgentSessions(ctx context.Context, tx *sql.Tx, recs []*Request) error {
	var bySession map[sessionKey]*sessionDelta
	for _, r := range recs {
		if r.SessionID == "" {
			continue
		}
		if bySession == nil {
			bySession = map[sessionKey]*sessionDelta{}
		}
		k := sessionKey{r.SessionID, r.KeyID, r.UserID}
		ms := r.Time.UnixMilli()
		d := bySession[k]
		if d == nil {
			d = &sessionDelta{sessionKey: k, first: ms, last: ms, team: r.TeamID, model: r.Model}
			bySession[k] = d
		}
		d.first = min(d.first, ms)
		if ms >= d.last {
			d.last, d.team, d.model = ms, r.TeamID, r.Model
		}
		d.requests++
		d.input += r.Input
		d.cacheRead += r.CacheRead
		d.cacheW += r.CacheWrite5m + r.CacheWrite1h
		d.output += r.Output
		if r.CostNanoUSD != nil {
			d.cost += *r.CostNanoUSD
			d.priced = true
		}
	}
	if len(bySession) == 0 {
		return nil
	}
	deltas := make([]*sessionDelta, 0, len(bySession))
	for _, d := range bySession {
		deltas = append(deltas, d)
	}
	slices.SortFunc(deltas, func(a, b *sessionDelta) int {
		return cmp.Or(strings.Compare(a.session, b.session), strings.Compare(a.key, b.key), strings.Compare(a.user, b.user))
	})
	args := make([]any, 0, min(len(deltas), maxChunkRows)*agentSessionCols)
	for start := 0; start < len(deltas); {
		size := chunkSize(len(deltas) - start)
		stmt, err := s.sessionStmt(ctx, size)
		if err != nil {
			return err
		}
		args = args[:0]
		for _, d := range deltas[start : start+size] {
			var cost any
			if d.priced {
				cost = d.cost
			}
			args = append(args, d.session, d.key, d.user, d.team, d.model, d.first, d.last, d.requests, d.input, d.cacheRead,
				d.cacheW, d.output, cost)
		}
		if _, err := tx.StmtContext(ctx, stmt).ExecContext(ctx, args...); err != nil {
			return err
		}
		start += size
	}
	return nil
}

// sessionSQL is the upsert of rows agent sessions' deltas.
func (s *Store) sessionSQL(rows int) string {
	least, greatest := "LEAST", "GREATEST"
	if s.dialect == SQLite {
		least, greatest = "min", "max" // SQLite's scalar min and max
	}
	// The latest record's team and model win: excluded's when its last
	// record is at least as late as the stored one.
	later := "excluded.last_seen >= agent_sessions.last_seen"
	return "INSERT INTO agent_sessions (session_id, key_id, user_id, team_id, model, first_seen, last_seen, requests, " +
		"input_tokens, cache_read_tokens, cache_write_tokens, output_tokens, cost_nano_usd) VALUES " +
		s.placeholders(rows, agentSessionCols) +
		" ON CONFLICT (session_id, key_id, user_id) DO UPDATE SET " +
		"team_id = CASE WHEN " + later + " THEN excluded.team_id ELSE agent_sessions.team_id END, " +
		"model = CASE WHEN " + later + " THEN excluded.model ELSE agent_sessions.model END, " +
		"first_seen = " + least + "(agent_sessions.first_seen, excluded.first_seen), " +
		"last_seen = " + greatest + "(agent_sessions.last_seen, excluded.last_seen), " +
		"requests = agent_sessions.requests + excluded.requests, " +
		"input_tokens = agent_sessions.input_tokens + excluded.input_tokens, " +
		"cache_read_tokens = agent_sessions.cache_read_tokens + excluded.cache_read_tokens, " +
		"cache_write_tokens = agent_sessions.cache_write_tokens + excluded.cache_write_tokens, " +
		"output_tokens = agent_sessions.output_tokens + excluded.output_tokens, " +
		"cost_nano_usd = CASE WHEN excluded.cost_nano_usd IS NULL THEN agent_sessions.cost_nano_usd " +
		"ELSE COALESCE(agent_sessions.cost_nano_usd, 0) + excluded.cost_nano_usd END"
}

// sessionStmt returns the prepared upsert of rows agent sessions (a
// power of two), prepared by prepareSessions.
func (s *Store) sessionStmt(ctx context.Context, rows int) (*sql.Stmt, error) {
	s.prepMu.Lock()
	defer s.prepMu.Unlock()
	i := bits.Len(uint(rows))
	if s.sessions[i] == nil {
		stmt, err := s.db.PrepareContext(ctx, s.sessionSQL(rows))
		if err != nil {
			return nil, err
		}
		s.sessions[i] = stmt
	}
	return s.sessions[i], nil
}

// prepareSessions prepares every agent-session upsert InsertRequests may
// run, once, before its transaction holds SQLite's one connection.
func (s *Store) prepareSessions(ctx context.Context) error {
	for size := 1; size <= maxChunkRows; size *= 2 {
		if _, err := s.sessionStmt(ctx, size); err != nil {
			return err
		}
	}
	return nil
}

// SessionFilter selects agent sessions; zero fields match all. A session
// is in [Since, Until) when it was active then: its last record at or
// after Since, its first before Until.
type SessionFilter struct {
	UserID, TeamID, KeyID string
	Since, Until          time.Time
	Limit                 int // default 100, at most 1000
}

// AgentSessions lists agent sessions, the most recently active first.
func (s *Store) AgentSessions(ctx context.Context, f SessionFilter) ([]AgentSession, error) {
	var where []string
	var args []any
	for _, c := range []struct{ col, v string }{{"user_id", f.UserID}, {"team_id", f.TeamID}, {"key_id", f.KeyID}} {
		if c.v != "" {
			where, args = append(where, c.col+" = ?"), append(args, cleanField(c.v))
			if s.dialect == SQLite && c.col != "key_id" {
				where = append(where, c.col+" <> ''") // the partial index's condition
			}
		}
	}
	if !f.Since.IsZero() {
		where, args = append(where, "last_seen >= ?"), append(args, f.Since.UnixMilli())
	}
	if !f.Until.IsZero() {
		where, args = append(where, "first_seen < ?"), append(args, f.Until.UnixMilli())
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	q := "SELECT session_id, key_id, user_id, team_id, model, first_seen, last_seen, requests, input_tokens, " +
		"cache_read_tokens, cache_write_tokens, output_tokens, cost_nano_usd FROM agent_sessions"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += fmt.Sprintf(" ORDER BY last_seen DESC, session_id DESC LIMIT %d", min(limit, 1000))
	rows, err := s.db.QueryContext(ctx, s.rebind(q), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []AgentSession
	for rows.Next() {
		var a AgentSession
		var first, last int64
		var cost sql.NullInt64
		if err := rows.Scan(&a.SessionID, &a.KeyID, &a.UserID, &a.TeamID, &a.Model, &first, &last, &a.Requests, &a.Input,
			&a.CacheRead, &a.CacheWrite, &a.Output, &cost); err != nil {
			return nil, err
		}
		a.FirstSeen, a.LastSeen = time.UnixMilli(first).UTC(), time.UnixMilli(last).UTC()
		if cost.Valid {
			c := cost.Int64
			a.CostNanoUSD = &c
		}
		out = append(out, a)
	}
	return out, rows.Err()
}
