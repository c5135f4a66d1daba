package store

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// AuditEvent is one entry of the audit log: who did what to what.
type AuditEvent struct {
	ID        int64 // assigned by AppendAudit; orders the events
	Time      time.Time
	ActorKind string // "master" | "user" | "key" | "system"
	ActorID   string
	// Action is what was done: signin, signin_failed, token_revoked,
	// token_reuse, key_created, key_revoked, team_created, team_updated,
	// user_disabled, …
	Action               string
	TargetKind, TargetID string
	Detail               []byte // a JSON object, "{}" when none
	ClientIP, RequestID  string
}

// MaxAuditPage is the most events one Audit call returns.
const MaxAuditPage = 1000

const auditColumns = "time, actor_kind, actor_id, action, target_kind, target_id, detail, client_ip, request_id"

// AppendAudit adds an event to the log (its ID is the database's).
func (s *Store) AppendAudit(ctx context.Context, e AuditEvent) error {
	_, err := s.db.ExecContext(ctx, s.rebind("INSERT INTO audit_log ("+auditColumns+") VALUES (?,?,?,?,?,?,?,?,?)"),
		e.Time.UnixMilli(), cleanText(e.ActorKind), cleanText(e.ActorID), cleanText(e.Action), cleanText(e.TargetKind),
		cleanText(e.TargetID), orEmpty(e.Detail), cleanField(e.ClientIP), cleanField(e.RequestID))
	return err
}

// AuditFilter selects events; zero fields match all.
type AuditFilter struct {
	ActorID, Action, TargetID string
	Since, Until              time.Time // Since inclusive, Until exclusive
	Before                    int64     // events with a smaller ID (paging); 0 from the newest
	Limit                     int       // default 100, at most MaxAuditPage
}

// Audit returns events newest first.
func (s *Store) Audit(ctx context.Context, f AuditFilter) ([]AuditEvent, error) {
	var where []string
	var args []any
	for _, c := range []struct{ col, v string }{{"actor_id", f.ActorID}, {"action", f.Action}, {"target_id", f.TargetID}} {
		if c.v != "" {
			where, args = append(where, c.col+" = ?"), append(args, cleanText(c.v))
		}
	}
	if !f.Since.IsZero() {
		where, args = append(where, "time >= ?"), append(args, f.Since.UnixMilli())
	}
	if !f.Until.IsZero() {
		where, args = append(where, "time < ?"), append(args, f.Until.UnixMilli())
	}
	if f.Before > 0 {
		where, args = append(where, "id < ?"), append(args, f.Before)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	q := "SELECT id, " + auditColumns + " FROM audit_log"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += fmt.Sprintf(" ORDER BY id DESC LIMIT %d", min(limit, MaxAuditPage))
	rows, err := s.db.QueryContext(ctx, s.rebind(q), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []AuditEvent
	for rows.Next() {
		var e AuditEvent
		var ms int64
		var detail string
		if err := rows.Scan(&e.ID, &ms, &e.ActorKind, &e.ActorID, &e.Action, &e.TargetKind, &e.TargetID, &detail, &e.ClientIP, &e.RequestID); err != nil {
			return nil, err
		}
		e.Time, e.Detail = time.UnixMilli(ms).UTC(), []byte(detail)
		out = append(out, e)
	}
	return out, rows.Err()
}
