package admin

import (
	"context"
	"time"

	"github.com/tollgate/tollgate/internal/store"
)

// SessionQuery selects agent sessions: those active in [Since, Until).
type SessionQuery struct {
	UserID, TeamID, KeyID string
	Since, Until          time.Time // zero: unbounded
	Limit                 int       // default 100, at most MaxPage
}

// Sessions lists agent sessions with their cost and cache-read share, the
// most recently active first.
func (s *Service) Sessions(ctx context.Context, q SessionQuery) (SessionList, error) {
	for _, p := range []struct{ name, v string }{{"user_id", q.UserID}, {"team_id", q.TeamID}, {"key_id", q.KeyID}} {
		if err := checkParam(p.name, p.v); err != nil {
			return SessionList{}, err
		}
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && !q.Since.Before(q.Until) {
		return SessionList{}, invalid("since (%s) must be before until (%s)", q.Since.Format(time.RFC3339), q.Until.Format(time.RFC3339))
	}
	if q.Limit == 0 {
		q.Limit = 100
	}
	if q.Limit < 1 || q.Limit > MaxPage {
		return SessionList{}, invalid("limit: must be between 1 and %d", MaxPage)
	}
	sessions, err := s.store.AgentSessions(ctx, store.SessionFilter{UserID: q.UserID, TeamID: q.TeamID, KeyID: q.KeyID,
		Since: q.Since, Until: q.Until, Limit: q.Limit})
	if err != nil {
		return SessionList{}, err
	}
	out := SessionList{Object: "list", Data: make([]SessionView, 0, len(sessions))}
	for _, a := range sessions {
		v := SessionView{SessionID: a.SessionID, Object: "agent_session", KeyID: nullable(a.KeyID), UserID: nullable(a.UserID),
			TeamID: nullable(a.TeamID), Model: a.Model, FirstSeen: a.FirstSeen, LastSeen: a.LastSeen, Requests: a.Requests,
			CostNanoUSD: a.CostNanoUSD, CacheReadShare: a.CacheReadShare()}
		v.Tokens.Input, v.Tokens.CacheRead, v.Tokens.CacheWrite, v.Tokens.Output = a.Input, a.CacheRead, a.CacheWrite, a.Output
		out.Data = append(out.Data, v)
	}
	return out, nil
}
