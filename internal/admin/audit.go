package admin

import (
	"context"
	"net/http"
	"time"

	"github.com/tollgate/tollgate/internal/auth"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/store"
)

// Actor kinds of the audit log.
const (
	ActorMaster = "master" // the master key
	ActorUser   = "user"   // a signed-in person
	ActorKey    = "key"    // a virtual key
	ActorSystem = "system" // the gateway itself, or the CLI on the database
)

// Audit actions of the admin API.
const (
	ActionKeyCreated    = "key_created"
	ActionKeyUpdated    = "key_updated"
	ActionKeyRevoked    = "key_revoked"
	ActionUserCreated   = "user_created"
	ActionUserUpdated   = "user_updated"
	ActionUserDisabled  = "user_disabled"
	ActionUserEnabled   = "user_enabled"
	ActionUserDeleted   = "user_deleted"
	ActionTokenRevoked  = "token_revoked"
	ActionTeamCreated   = "team_created"
	ActionTeamUpdated   = "team_updated"
	ActionTeamDeleted   = "team_deleted"
	ActionMemberAdded   = "team_member_added"
	ActionMemberRemoved = "team_member_removed"
)

type actorKey struct{}

type actor struct{ kind, id string }

// WithActor returns ctx saying who acts: what the Service changes in it
// is written to the audit log as done by them. Without one, the admin
// API's changes are the master key's and a Service's own, called
// directly, the system's.
func WithActor(ctx context.Context, kind, id string) context.Context {
	return context.WithValue(ctx, actorKey{}, actor{kind, id})
}

type originKey struct{}

// origin is where an admin request came from, for its audit events.
type origin struct{ clientIP, requestID string }

// withOrigin notes r's client address and request id in its context.
func withOrigin(w http.ResponseWriter, r *http.Request) *http.Request {
	o := origin{requestID: w.Header().Get("Tollgate-Request-Id")}
	if a := auth.ClientAddr(r, nil); a.IsValid() {
		o.clientIP = a.String()
	}
	ctx := r.Context()
	if _, ok := ctx.Value(actorKey{}).(actor); !ok {
		ctx = WithActor(ctx, ActorMaster, "")
	}
	return r.WithContext(context.WithValue(ctx, originKey{}, o))
}

// audit appends an event done by ctx's actor to the log. The change is
// made: a log that cannot be written is logged, not returned.
func (s *Service) audit(ctx context.Context, action, targetKind, targetID string, detail any) {
	a, ok := ctx.Value(actorKey{}).(actor)
	if !ok {
		a = actor{kind: ActorSystem}
	}
	o, _ := ctx.Value(originKey{}).(origin)
	e := store.AuditEvent{Time: s.now().UTC(), ActorKind: a.kind, ActorID: a.id, Action: action, TargetKind: targetKind,
		TargetID: targetID, Detail: []byte("{}"), ClientIP: o.clientIP, RequestID: o.requestID}
	if detail != nil {
		if b, err := jsonx.Marshal(detail); err == nil {
			e.Detail = b
		}
	}
	if err := s.store.AppendAudit(context.WithoutCancel(ctx), e); err != nil {
		s.log.Error("admin: writing the audit log", "action", action, "target_id", targetID, "error", err)
	}
}

// AuditQuery selects audit events.
type AuditQuery struct {
	ActorID, Action, TargetID string
	Since, Until              time.Time // zero: unbounded
	Before                    int64     // events older than this id (the previous page's last_id)
	Limit                     int       // default 100, at most MaxPage
}

// Audit pages the audit log, newest first.
func (s *Service) Audit(ctx context.Context, q AuditQuery) (AuditPage, error) {
	for _, p := range []struct{ name, v string }{{"actor_id", q.ActorID}, {"action", q.Action}, {"target_id", q.TargetID}} {
		if err := checkParam(p.name, p.v); err != nil {
			return AuditPage{}, err
		}
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && !q.Since.Before(q.Until) {
		return AuditPage{}, invalid("since (%s) must be before until (%s)", q.Since.Format(time.RFC3339), q.Until.Format(time.RFC3339))
	}
	if q.Limit == 0 {
		q.Limit = 100
	}
	if q.Limit < 1 || q.Limit > MaxPage {
		return AuditPage{}, invalid("limit: must be between 1 and %d", MaxPage)
	}
	if q.Before < 0 {
		return AuditPage{}, invalid("before: must be an event id (a positive integer)")
	}
	f := store.AuditFilter{ActorID: q.ActorID, Action: q.Action, TargetID: q.TargetID, Since: q.Since, Until: q.Until,
		Before: q.Before, Limit: q.Limit}
	events, err := s.store.Audit(ctx, f)
	if err != nil {
		return AuditPage{}, err
	}
	page := AuditPage{Object: "list", Data: make([]AuditEventView, 0, len(events))}
	for _, e := range events {
		page.Data = append(page.Data, auditView(e))
	}
	if n := len(events); n > 0 {
		page.FirstID, page.LastID = &page.Data[0].ID, &page.Data[n-1].ID
		if n == q.Limit { // one more past the page says whether there is another
			f.Before, f.Limit = events[n-1].ID, 1
			more, err := s.store.Audit(ctx, f)
			if err != nil {
				return AuditPage{}, err
			}
			page.HasMore = len(more) > 0
		}
	}
	return page, nil
}

func auditView(e store.AuditEvent) AuditEventView {
	v := AuditEventView{ID: e.ID, Object: "audit_event", Time: e.Time, ActorKind: e.ActorKind,
		Action: e.Action, TargetKind: e.TargetKind, Detail: jsonx.Value("{}"), ClientIP: e.ClientIP, RequestID: e.RequestID}
	if e.ActorID != "" {
		v.ActorID = &e.ActorID
	}
	if e.TargetID != "" {
		v.TargetID = &e.TargetID
	}
	if d := jsonx.Value(e.Detail); len(d) > 0 && d.IsValid() {
		v.Detail = d
	}
	return v
}
