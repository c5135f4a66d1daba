package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math/bits"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Request is one ledger record: a data-plane request, whatever its outcome.
type Request struct {
	ID             string
	Time           time.Time
	KeyID          string // "" for the master key
	ClientProtocol string // anthropic | openai
	// Endpoint is the gateway endpoint called: an inference endpoint
	// (IsInferenceEndpoint), another one ("/v1/models", "/v1/models/{id}",
	// …), or the path of a request that matched none. "" only on records
	// made before it was recorded; see Usage.
	Endpoint string
	Model    string // as the client named it
	// CanonicalModel is the configured model Model resolved to (an alias's
	// model; also one the key may not use), "" when it matched none.
	CanonicalModel string
	Provider       string
	UpstreamModel  string
	Lane           string // passthrough | translated | "" when no upstream was chosen
	Stream         bool
	Status         int
	ErrorType      string
	Input          int64 // fresh input tokens (Anthropic convention: no cache tokens)
	CacheRead      int64
	CacheWrite5m   int64
	CacheWrite1h   int64
	Output         int64
	Reasoning      int64
	CostNanoUSD    *int64 // nil when unpriced
	LatencyMS      float64
	TTFBMS         float64
	UpstreamMS     float64
	OverheadMS     float64
	ClientIP       string
	UserAgent      string
	// Attempts is a JSON array with one {target, status, error, ms} per
	// upstream attempt, in order; "[]" (or "") when none was made.
	Attempts string
	// UsageEstimated is true when the token counts (and so the cost) were
	// estimated by the gateway because the upstream never reported usage:
	// the stream was cut, or the client left early.
	UsageEstimated bool
	// CacheSavingsNano is what prompt caching saved, in nano-USD (see
	// pricing's Savings): negative when cache writes cost more than cache
	// reads saved, 0 without cache tokens; nil when unknown (a cache
	// bucket with tokens, or the input, unpriced; records made before it
	// was recorded).
	CacheSavingsNano *int64
	// UserID is the user the request was made for (a signed-in user's
	// token, or a key of theirs), TeamID the team it is charged to, and
	// SessionID the agent session the client named (Claude Code's session
	// id); "" for none.
	UserID, TeamID, SessionID string
	// Units is what the endpoint billed apart from tokens, of kind Unit
	// (meter's Unit constants: image, second, character, query; "" none).
	Units int64
	Unit  string
}

const requestColumns = "id, time, key_id, client_protocol, model, provider, upstream_model, lane, stream, status, error_type, " +
	"input_tokens, cache_read_tokens, cache_write_5m_tokens, cache_write_1h_tokens, output_tokens, reasoning_tokens, " +
	"cost_nano_usd, latency_ms, ttfb_ms, upstream_ms, overhead_ms, client_ip, user_agent, attempts, usage_estimated, " +
	"endpoint, canonical_model, cache_savings_nano, user_id, team_id, session_id, units, unit"

const requestColumnCount = 34

// maxChunkRows bounds the rows of one INSERT (SQLite and PostgreSQL both
// cap the parameters of a statement).
const maxChunkRows = 256

// InsertRequests writes records in one transaction, each cleaned by
// SanitizeRequest first. It is idempotent: a
// record whose id is already stored is skipped, so a batch replayed after
// a failure (or from the spill file) never duplicates.
//
// The same transaction adds the records it stored, and only those, to the
// hourly roll-ups (see rollup.go): a skipped record is not counted twice,
// and a record written late (replayed hours after it was made) is added
// to the hour it was made in.
//
// A batch is cut into chunks of power-of-two sizes (a batch of 300 is 256
// + 32 + 8 + 4), so at most nine multi-row INSERTs exist, each prepared
// once: parsing an INSERT of thousands of parameters costs more than
// running it.
func (s *Store) InsertRequests(ctx context.Context, recs []Request) error {
	clean := make([]Request, len(recs))
	for i := range recs {
		clean[i] = SanitizeRequest(recs[i])
	}
	return s.InsertSanitizedRequests(ctx, clean)
}

// InsertSanitizedRequests is InsertRequests for records that are
// SanitizeRequest's already, as a ledger.Recorder's are: it writes them
// as they are, without cleaning (or copying) them again. A record that is
// not clean may be refused by the database (IsBadRecord).
func (s *Store) InsertSanitizedRequests(ctx context.Context, recs []Request) error {
	if len(recs) == 0 {
		return nil
	}
	// Prepared before the transaction: SQLite has one connection, which
	// the transaction would hold while the pool waited for it.
	var stmts [10]*sql.Stmt
	for n := len(recs); n > 0; {
		size := chunkSize(n)
		if stmts[bits.Len(uint(size))] == nil {
			st, err := s.insertStmt(ctx, size)
			if err != nil {
				return err
			}
			stmts[bits.Len(uint(size))] = st
		}
		n -= size
	}
	if !s.noRollups {
		if err := s.prepareUpserts(ctx); err != nil {
			return err
		}
		if err := s.prepareSessions(ctx); err != nil {
			return err
		}
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if s.dialect == SQLite {
		// The statement journals of the multi-row statements (each page a
		// statement changes, kept to undo it alone) stay in memory for
		// this transaction: written to a temporary file they took about a
		// tenth of the ledger's CPU. Only here: a sort over millions of
		// records (a console query) must still spill to a file.
		if _, err := conn.ExecContext(ctx, "PRAGMA temp_store = MEMORY"); err != nil {
			return err
		}
		defer func() {
			if _, err := conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA temp_store = DEFAULT"); err != nil {
				// Not set back (a rollback still under way): the connection
				// goes, rather than serve a sort in memory later.
				conn.Raw(func(any) error { return driver.ErrBadConn })
			}
		}()
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// The records the INSERTs stored (RETURNING leaves out those skipped
	// as already stored), for the roll-ups.
	stored := make([]*Request, 0, len(recs))
	args := make([]any, 0, min(len(recs), maxChunkRows)*requestColumnCount)
	for start := 0; start < len(recs); {
		size := chunkSize(len(recs) - start)
		chunk := recs[start : start+size]
		args = args[:0]
		for i := range chunk {
			args = appendRequestArgs(args, &chunk[i])
		}
		var err error
		if stored, err = insertChunk(ctx, tx.StmtContext(ctx, stmts[bits.Len(uint(size))]), args, chunk, stored); err != nil {
			return fmt.Errorf("inserting request records: %w", err)
		}
		start += size
	}
	if !s.noRollups && len(stored) > 0 {
		for i, deltas := range aggregate(stored) {
			if err := s.addRollups(ctx, tx, rollupTables[i], deltas); err != nil {
				return fmt.Errorf("adding to the usage roll-ups: %w", err)
			}
		}
		if err := s.addAgentSessions(ctx, tx, stored); err != nil {
			return fmt.Errorf("adding to the agent sessions: %w", err)
		}
	}
	return tx.Commit()
}

// appendRequestArgs appends the values of r's requestColumns.
func appendRequestArgs(args []any, r *Request) []any {
	var key any
	if r.KeyID != "" {
		key = r.KeyID
	}
	var cost, saved any
	if r.CostNanoUSD != nil {
		cost = *r.CostNanoUSD
	}
	if r.CacheSavingsNano != nil {
		saved = *r.CacheSavingsNano
	}
	return append(args, r.ID, r.Time.UnixMilli(), key, r.ClientProtocol, r.Model, r.Provider, r.UpstreamModel,
		r.Lane, r.Stream, r.Status, r.ErrorType, r.Input, r.CacheRead, r.CacheWrite5m, r.CacheWrite1h,
		r.Output, r.Reasoning, cost, r.LatencyMS, r.TTFBMS, r.UpstreamMS, r.OverheadMS, r.ClientIP, r.UserAgent, orEmptyList(r.Attempts),
		r.UsageEstimated, r.Endpoint, r.CanonicalModel, saved, r.UserID, r.TeamID, r.SessionID, r.Units, r.Unit)
}

// insertChunk runs one multi-row INSERT of chunk and appends the records
// it stored to stored.
func insertChunk(ctx context.Context, stmt *sql.Stmt, args []any, chunk []Request, stored []*Request) ([]*Request, error) {
	rows, err := stmt.QueryContext(ctx, args...)
	if err != nil {
		return stored, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return stored, err
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return stored, err
	}
	if len(ids) == len(chunk) {
		for i := range chunk { // all stored: the common case
			stored = append(stored, &chunk[i])
		}
		return stored, nil
	}
	// Some were skipped. An id twice in the batch is stored once, as its
	// first record: rows are inserted in order.
	left := make(map[string]bool, len(ids))
	for _, id := range ids {
		left[id] = true
	}
	for i := range chunk {
		if left[chunk[i].ID] {
			delete(left, chunk[i].ID)
			stored = append(stored, &chunk[i])
		}
	}
	return stored, nil
}

func orEmptyList(s string) string {
	if s == "" {
		return "[]"
	}
	return s
}

// chunkSize is the largest power of two ≤ n, at most maxChunkRows.
func chunkSize(n int) int {
	return 1 << (bits.Len(uint(min(n, maxChunkRows))) - 1)
}

// insertStmt returns the prepared INSERT of rows records, preparing it on
// first use.
func (s *Store) insertStmt(ctx context.Context, rows int) (*sql.Stmt, error) {
	s.prepMu.Lock()
	defer s.prepMu.Unlock()
	i := bits.Len(uint(rows))
	if s.inserts[i] == nil {
		q := "INSERT INTO requests (" + requestColumns + ") VALUES " + s.placeholders(rows, requestColumnCount) +
			" ON CONFLICT (id) DO NOTHING RETURNING id"
		stmt, err := s.db.PrepareContext(ctx, q)
		if err != nil {
			return nil, err
		}
		s.inserts[i] = stmt
	}
	return s.inserts[i], nil
}

// NoLane selects, in RequestFilter.Lane, the records that have no lane:
// no upstream was chosen for them.
const NoLane = "none"

// Lanes are the values RequestFilter.Lane takes.
var Lanes = []string{"passthrough", "translated", NoLane}

// MaxRequestsPage is the most records one Requests call returns.
const MaxRequestsPage = 1001 // a page of 1000 and one to tell whether there are more

// RequestFilter selects ledger records; zero fields match everything.
type RequestFilter struct {
	KeyID string
	// UserID, TeamID and SessionID select the records of a user, a team,
	// an agent session.
	UserID, TeamID, SessionID string
	Model                     string
	Status                    int
	// Lane is "passthrough", "translated", or NoLane for the records no
	// upstream served (refused, failed before one was chosen).
	Lane   string
	Since  time.Time // records at or after this time, when set
	Before time.Time // records strictly older than this, when set
	// AfterID pages: the records that come after this one, newest first
	// (ids are time-ordered, so (time, id) is a total order).
	AfterID string
	Limit   int // default 100, at most 1000
}

// Requests returns records newest first.
func (s *Store) Requests(ctx context.Context, f RequestFilter) ([]Request, error) {
	var where []string
	var args []any
	// Filters are cleaned as the records were, so they match what was
	// written and never fail on text the database refuses.
	if f.KeyID != "" {
		where, args = append(where, "key_id = ?"), append(args, cleanField(f.KeyID))
	}
	if f.Model != "" {
		where, args = append(where, "model = ?"), append(args, cleanField(f.Model))
	}
	// Their indexes are partial (00015): SQLite needs the condition
	// written out to use them, as for status below.
	for _, c := range []struct{ col, v string }{{"user_id", f.UserID}, {"team_id", f.TeamID}} {
		if c.v != "" {
			where, args = append(where, c.col+" = ?"), append(args, cleanField(c.v))
			if s.dialect == SQLite {
				where = append(where, c.col+" <> ''")
			}
		}
	}
	// A session's records have no index (00017): they lie between its
	// first and last record, which agent_sessions keeps (it is written
	// with the records), and the time index reads that span. A session
	// without a row there has no records.
	if f.SessionID != "" {
		id := cleanField(f.SessionID)
		where = append(where, "session_id = ?",
			"time >= (SELECT MIN(first_seen) FROM agent_sessions WHERE session_id = ?)",
			"time <= (SELECT MAX(last_seen) FROM agent_sessions WHERE session_id = ?)")
		args = append(args, id, id, id)
	}
	// The literal conditions let SQLite use the partial indexes of
	// migration 00009, which a bound value alone would not prove apply.
	// PostgreSQL plans with the value and proves it; given the condition
	// twice, it would count its selectivity twice and choose worse plans.
	if f.Status != 0 {
		where, args = append(where, "status = ?"), append(args, f.Status)
		if f.Status >= 400 && s.dialect == SQLite {
			where = append(where, "status >= 400")
		}
	}
	switch f.Lane {
	case "":
	case NoLane:
		where = append(where, "lane = ''")
	default:
		where, args = append(where, "lane = ?"), append(args, cleanField(f.Lane))
	}
	if !f.Since.IsZero() {
		where, args = append(where, "time >= ?"), append(args, f.Since.UnixMilli())
	}
	if !f.Before.IsZero() {
		where, args = append(where, "time < ?"), append(args, f.Before.UnixMilli())
	}
	if f.AfterID != "" {
		where = append(where, "(time < (SELECT time FROM requests WHERE id = ?) OR "+
			"(time = (SELECT time FROM requests WHERE id = ?) AND id < ?))")
		after := cleanField(f.AfterID)
		args = append(args, after, after, after)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, MaxRequestsPage)
	q := "SELECT " + requestColumns + " FROM requests"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += fmt.Sprintf(" ORDER BY time DESC, id DESC LIMIT %d", limit)
	rows, err := s.db.QueryContext(ctx, s.rebind(q), args...)
	if err != nil {
		return nil, err
	}
	return scanRequests(rows)
}

func scanRequests(rows *sql.Rows) ([]Request, error) {
	defer rows.Close()
	var out []Request
	for rows.Next() {
		var r Request
		var ms int64
		var key sql.NullString
		var cost, saved sql.NullInt64
		if err := rows.Scan(&r.ID, &ms, &key, &r.ClientProtocol, &r.Model, &r.Provider, &r.UpstreamModel, &r.Lane,
			&r.Stream, &r.Status, &r.ErrorType, &r.Input, &r.CacheRead, &r.CacheWrite5m, &r.CacheWrite1h, &r.Output,
			&r.Reasoning, &cost, &r.LatencyMS, &r.TTFBMS, &r.UpstreamMS, &r.OverheadMS, &r.ClientIP, &r.UserAgent, &r.Attempts,
			&r.UsageEstimated, &r.Endpoint, &r.CanonicalModel, &saved, &r.UserID, &r.TeamID, &r.SessionID, &r.Units, &r.Unit); err != nil {
			return nil, err
		}
		r.Time = time.UnixMilli(ms).UTC()
		r.KeyID = key.String
		if cost.Valid {
			c := cost.Int64
			r.CostNanoUSD = &c
		}
		if saved.Valid {
			v := saved.Int64
			r.CacheSavingsNano = &v
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// RequestByID returns one record; IsNotFound(err) when there is none.
func (s *Store) RequestByID(ctx context.Context, id string) (Request, error) {
	rows, err := s.db.QueryContext(ctx, s.rebind("SELECT "+requestColumns+" FROM requests WHERE id = ?"), cleanField(id))
	if err != nil {
		return Request{}, err
	}
	recs, err := scanRequests(rows)
	if err != nil {
		return Request{}, err
	}
	if len(recs) == 0 {
		return Request{}, errNoRows
	}
	return recs[0], nil
}

// ErrBadRecord marks a write that failed because of what was written, not
// because of the database: writing the same records again fails the same
// way. IsBadRecord recognises it, for sinks other than Store.
var ErrBadRecord = errors.New("the database refused the record")

// IsBadRecord reports whether err is a failure caused by the data written
// (PostgreSQL's data exceptions, integrity violations and program limits;
// SQLite's constraint, size and type errors), as opposed to one of the
// database (unreachable, down, timed out, misconfigured), after which the
// same write may succeed later. A batch that fails as bad holds at least
// one record that no retry will write.
func IsBadRecord(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrBadRecord) {
		return true
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		switch class := pg.Code[:min(2, len(pg.Code))]; class {
		case "22", // data exception: invalid text, a value out of range
			"23", // integrity constraint violation
			"54": // program limit exceeded: an index row too large
			return true
		}
		return false
	}
	var lite *sqlite.Error
	if errors.As(err, &lite) {
		switch lite.Code() & 0xff { // the primary result code
		case sqlite3.SQLITE_CONSTRAINT, sqlite3.SQLITE_TOOBIG, sqlite3.SQLITE_MISMATCH:
			return true
		}
	}
	return false
}
