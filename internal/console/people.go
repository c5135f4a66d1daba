package console

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/tollgate/tollgate/internal/admin"
	"github.com/tollgate/tollgate/internal/limit"
	"github.com/tollgate/tollgate/internal/store"
)

// The operators' pages of people (users and teams), from the admin
// service.

// ownsKey reports whether v may see key k: an operator any, a user their
// own, a virtual key itself.
func (v *viewer) ownsKey(k admin.KeyView) bool {
	switch {
	case v.operator():
		return true
	case v.User != nil:
		return k.UserID != nil && *k.UserID == v.User.ID
	}
	return k.ID == v.KeyID
}

// primaryTeam is the team u's usage is charged to, when they have one.
func (c *Console) primaryTeam(ctx context.Context, u *store.User) (admin.TeamView, bool) {
	if u == nil || u.PrimaryTeamID == "" {
		return admin.TeamView{}, false
	}
	t, err := c.svc().Team(ctx, u.PrimaryTeamID)
	if err != nil {
		c.o.Logger.Warn("console: reading a team", "team", u.PrimaryTeamID, "error", err)
		return admin.TeamView{}, false
	}
	return t, true
}

// limitsOf reads a limits column ("{}" or empty for none); a value that
// does not read is no limits, as the limiter reads it.
func limitsOf(b []byte) limit.Limits {
	var l limit.Limits
	if len(b) > 0 {
		jsonUnmarshal(b, &l)
	}
	return l
}

// limitsText renders limits for people: "rpm 60, $25/monthly", or none.
func limitsText(l limit.Limits) string {
	return cmpOr(strings.Join(admin.LimitWords(l), ", "), "none")
}

// prettyJSON indents JSON for people; "" for nothing or an empty object.
func prettyJSON(b []byte) string {
	if b = bytes.TrimSpace(b); len(b) == 0 || string(b) == "{}" || string(b) == "null" {
		return ""
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return string(b)
	}
	return out.String()
}

// personName is how pages name a person: their email, else name, else
// the IdP subject.
func personName(email, name, subject string) string { return cmpOr(email, cmpOr(name, subject)) }

func userName(u store.User) string { return personName(u.Email, u.Name, u.Subject) }

// userRow is one user as the pages list them.
type userRow struct {
	admin.UserView
	Label, Team string // Team: the primary team's name
}

func userRows(users []admin.UserView) []userRow {
	rows := make([]userRow, 0, len(users))
	for _, u := range users {
		r := userRow{UserView: u, Label: personName(u.Email, u.Name, u.Subject)}
		for _, t := range u.Teams {
			if u.PrimaryTeamID != nil && t.ID == *u.PrimaryTeamID {
				r.Team = t.Name
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// maxUsers is the most users the page lists at once; the search finds
// the others.
const maxUsers = 200

// users lists the users, filtered by q (subject, email or name).
func (c *Console) users(w http.ResponseWriter, r *http.Request, v *viewer) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	l, err := c.svc().Users(r.Context(), admin.UserQuery{Query: q})
	if err != nil {
		c.storeFailed(w, r, v, err)
		return
	}
	data := map[string]any{"Q": q}
	if len(l.Data) > maxUsers {
		data["More"], l.Data = maxUsers, l.Data[:maxUsers]
	}
	data["Users"] = userRows(l.Data)
	c.render(w, r, http.StatusOK, "users", v, data)
}

// user shows one user: their teams, keys, and usage of the last 30 days.
func (c *Console) user(w http.ResponseWriter, r *http.Request, v *viewer) {
	ctx := r.Context()
	u, err := c.svc().User(ctx, r.PathValue("id"))
	if err != nil {
		c.storeFailed(w, r, v, err)
		return
	}
	keys, err := c.svc().UserKeys(ctx, u.ID)
	if err != nil {
		c.storeFailed(w, r, v, err)
		return
	}
	rep, err := c.lastMonth(ctx, scope{UserID: u.ID})
	if err != nil {
		c.storeFailed(w, r, v, err)
		return
	}
	row := userRows([]admin.UserView{u})[0]
	c.render(w, r, http.StatusOK, "user", v, map[string]any{"Title": "User " + row.Label, "U": row, "Keys": keys.Data, "Usage": rep})
}

func (c *Console) teams(w http.ResponseWriter, r *http.Request, v *viewer) {
	l, err := c.svc().Teams(r.Context())
	if err != nil {
		c.storeFailed(w, r, v, err)
		return
	}
	c.render(w, r, http.StatusOK, "teams", v, map[string]any{"Teams": l.Data})
}

// team shows one team: members, limits, model allowlist, managed
// settings, and its usage of the last 30 days.
func (c *Console) team(w http.ResponseWriter, r *http.Request, v *viewer) {
	ctx := r.Context()
	t, err := c.svc().Team(ctx, r.PathValue("id"))
	if err != nil {
		c.storeFailed(w, r, v, err)
		return
	}
	members, err := c.svc().Members(ctx, t.ID)
	if err != nil {
		c.storeFailed(w, r, v, err)
		return
	}
	rep, err := c.lastMonth(ctx, scope{TeamID: t.ID})
	if err != nil {
		c.storeFailed(w, r, v, err)
		return
	}
	c.render(w, r, http.StatusOK, "team", v, map[string]any{"Title": "Team " + t.Name, "T": t, "Members": userRows(members.Data),
		"Settings": prettyJSON(t.ClaudeCode.ManagedSettings), "Usage": rep})
}

// lastMonth is the usage of s in the last 30 days, by model.
func (c *Console) lastMonth(ctx context.Context, s scope) (admin.UsageReport, error) {
	now := c.o.Now()
	return c.usageOf(ctx, now.Add(-30*24*time.Hour), now.Add(time.Second), store.ByModel, s)
}

// userNames maps user ids to how pages name them.
func (c *Console) userNames(ctx context.Context) (map[string]string, error) {
	users, err := c.o.Store.Users(ctx, store.UserFilter{})
	if err != nil {
		return nil, err
	}
	m := make(map[string]string, len(users))
	for _, u := range users {
		m[u.ID] = userName(u)
	}
	return m, nil
}

// teamNames maps team ids to names.
func (c *Console) teamNames(ctx context.Context) (map[string]string, error) {
	teams, err := c.o.Store.Teams(ctx)
	if err != nil {
		return nil, err
	}
	m := make(map[string]string, len(teams))
	for _, t := range teams {
		m[t.ID] = t.Name
	}
	return m, nil
}
