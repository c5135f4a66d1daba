package console

import (
	"net/http"
	"strings"

	"github.com/tollgate/tollgate/internal/admin"
)

// sessionsPage is the most agent sessions the page lists at once.
const sessionsPage = 100

// sessionRow is one agent session as the page lists it: its user and
// team by name, for an operator.
type sessionRow struct {
	admin.SessionView
	Key, UserID, User, TeamID, Team string
}

// agentSessions lists agent sessions (a coding agent's run, told apart by
// the session id its requests carry), most recent first: who, with which
// key, when, how many requests, what they cost and how much of their
// prompt was read from the cache. Operators filter by user and team; a
// member sees their own.
func (c *Console) agentSessions(w http.ResponseWriter, r *http.Request, v *viewer) {
	ctx := r.Context()
	q := r.URL.Query()
	sq := admin.SessionQuery{UserID: strings.TrimSpace(q.Get("user")), TeamID: strings.TrimSpace(q.Get("team")), Limit: sessionsPage}
	if !v.operator() {
		sq.UserID, sq.TeamID = v.own().UserID, ""
	}
	l, err := c.svc().Sessions(ctx, sq)
	if err != nil {
		c.storeFailed(w, r, v, err)
		return
	}
	users, teams := map[string]string{}, map[string]string{}
	if v.operator() {
		if users, err = c.userNames(ctx); err == nil {
			teams, err = c.teamNames(ctx)
		}
		if err != nil {
			c.storeFailed(w, r, v, err)
			return
		}
	}
	rows := make([]sessionRow, len(l.Data))
	for i, s := range l.Data {
		rw := sessionRow{SessionView: s, Key: deref(s.KeyID), UserID: deref(s.UserID), TeamID: deref(s.TeamID)}
		rw.User, rw.Team = cmpOr(users[rw.UserID], rw.UserID), cmpOr(teams[rw.TeamID], rw.TeamID)
		rows[i] = rw
	}
	c.render(w, r, http.StatusOK, "sessions", v, map[string]any{"User": sq.UserID, "Team": sq.TeamID, "Master": v.operator(),
		"Refresh": 30, "Sessions": rows, "Full": len(rows) == sessionsPage})
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
