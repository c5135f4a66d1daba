package console

import (
	"net/http"
	"strings"

	"github.com/tollgate/tollgate/internal/store"
)

// sessionsPage is the most agent sessions the page lists at once.
const sessionsPage = 100

// agentSessions lists agent sessions (a coding agent's run, told apart by
// the session id its requests carry), most recent first: who, with which
// key, when, how many requests, what they cost and how much of their
// input was read from the prompt cache. Operators filter by user and
// team; a member sees their own.
func (c *Console) agentSessions(w http.ResponseWriter, r *http.Request, v *viewer) {
	q := r.URL.Query()
	f := store.SessionFilter{UserID: strings.TrimSpace(q.Get("user")), TeamID: strings.TrimSpace(q.Get("team")), Limit: sessionsPage}
	if !v.operator() {
		f.UserID, f.TeamID = v.own().UserID, ""
	}
	sessions, err := c.o.Store.AgentSessions(r.Context(), f)
	if err != nil {
		c.storeFailed(w, r, v, err)
		return
	}
	data := map[string]any{"User": f.UserID, "Team": f.TeamID, "Master": v.operator(), "Refresh": 30}
	if v.operator() {
		names, err := c.userNames(r.Context())
		if err != nil {
			c.storeFailed(w, r, v, err)
			return
		}
		teams, err := c.teamNames(r.Context())
		if err != nil {
			c.storeFailed(w, r, v, err)
			return
		}
		data["Users"], data["Teams"] = names, teams
	}
	data["Sessions"], data["Full"] = sessions, len(sessions) == sessionsPage
	c.render(w, r, http.StatusOK, "sessions", v, data)
}
