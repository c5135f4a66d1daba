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

// The operators' pages of people: users and teams, read from the store.

// ownKeys are the ids of the keys a viewer who is not an operator may
// see: a virtual key's own, a user's.
func (c *Console) ownKeys(ctx context.Context, v *viewer) (map[string]bool, error) {
	switch {
	case v.operator():
		return nil, nil
	case v.User != nil:
		keys, err := c.o.Store.KeysOf(ctx, v.User.ID)
		if err != nil {
			return nil, err
		}
		m := make(map[string]bool, len(keys))
		for _, k := range keys {
			m[k.ID] = true
		}
		return m, nil
	}
	return map[string]bool{v.KeyID: true}, nil
}

// primaryTeam is the team u's usage is charged to, when they have one.
func (c *Console) primaryTeam(ctx context.Context, u *store.User) (store.Team, bool) {
	if u == nil || u.PrimaryTeamID == "" {
		return store.Team{}, false
	}
	t, err := c.o.Store.TeamByID(ctx, u.PrimaryTeamID)
	if err != nil {
		if !store.IsNotFound(err) {
			c.o.Logger.Warn("console: reading a team", "team", u.PrimaryTeamID, "error", err)
		}
		return store.Team{}, false
	}
	return t, true
}

// teamLimits reads a limits column ("{}" or empty for none); a value that
// does not read is no limits, as the limiter reads it.
func teamLimits(b []byte) limit.Limits {
	var l limit.Limits
	if len(b) > 0 {
		jsonUnmarshal(b, &l)
	}
	return l
}

func limitsText(b []byte) string {
	return cmpOr(strings.Join(admin.LimitWords(teamLimits(b)), ", "), "none")
}

// prettyJSON indents a JSON column for people; "" for an empty object.
func prettyJSON(b []byte) string {
	if len(bytes.TrimSpace(b)) == 0 || string(bytes.TrimSpace(b)) == "{}" {
		return ""
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return string(b)
	}
	return out.String()
}

// userRow is one user as the users page lists them.
type userRow struct {
	store.User
	Label, Team string
	Teams       []string
}

// users lists the users, filtered by q (subject, email or name).
func (c *Console) users(w http.ResponseWriter, r *http.Request, v *viewer) {
	ctx := r.Context()
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	users, err := c.o.Store.Users(ctx, store.UserFilter{Query: q, Limit: maxUsers + 1})
	if err != nil {
		c.storeFailed(w, r, v, err)
		return
	}
	data := map[string]any{"Q": q}
	if len(users) > maxUsers {
		users, data["More"] = users[:maxUsers], maxUsers
	}
	names, err := c.teamNames(ctx)
	if err != nil {
		c.storeFailed(w, r, v, err)
		return
	}
	rows := make([]userRow, 0, len(users))
	for _, u := range users {
		rows = append(rows, userRow{User: u, Label: userName(u), Team: names[u.PrimaryTeamID]})
	}
	data["Users"] = rows
	c.render(w, r, http.StatusOK, "users", v, data)
}

// maxUsers is the most users the page lists at once; the search finds
// the others.
const maxUsers = 200

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

// user shows one user: their teams, keys, and usage of the last 30 days.
func (c *Console) user(w http.ResponseWriter, r *http.Request, v *viewer) {
	ctx := r.Context()
	u, err := c.o.Store.UserByID(ctx, r.PathValue("id"))
	if store.IsNotFound(err) {
		c.fail(w, r, v, http.StatusNotFound, "There is no such user.")
		return
	}
	if err != nil {
		c.storeFailed(w, r, v, err)
		return
	}
	teams, err := c.o.Store.TeamsOf(ctx, u.ID)
	if err != nil {
		c.storeFailed(w, r, v, err)
		return
	}
	keys, err := c.o.Store.KeysOf(ctx, u.ID)
	if err != nil {
		c.storeFailed(w, r, v, err)
		return
	}
	now := c.o.Now()
	rep, err := c.usageOf(ctx, now.Add(-30*24*time.Hour), now.Add(time.Second), store.ByModel, scope{UserID: u.ID})
	if err != nil {
		c.storeFailed(w, r, v, err)
		return
	}
	c.render(w, r, http.StatusOK, "user", v, map[string]any{"Title": "User " + userName(u), "U": u, "Label": userName(u),
		"Teams": teams, "Keys": keys, "Usage": rep, "Limits": limitsText(u.Limits), "Now": now})
}

// teamRow is one team as the teams page lists it.
type teamRow struct {
	store.Team
	Members              int
	Limits, MemberLimits string
}

func (c *Console) teams(w http.ResponseWriter, r *http.Request, v *viewer) {
	ctx := r.Context()
	teams, err := c.o.Store.Teams(ctx)
	if err != nil {
		c.storeFailed(w, r, v, err)
		return
	}
	rows := make([]teamRow, 0, len(teams))
	for _, t := range teams {
		members, err := c.o.Store.Members(ctx, t.ID)
		if err != nil {
			c.storeFailed(w, r, v, err)
			return
		}
		rows = append(rows, teamRow{Team: t, Members: len(members), Limits: limitsText(t.Limits), MemberLimits: limitsText(t.MemberLimits)})
	}
	c.render(w, r, http.StatusOK, "teams", v, map[string]any{"Teams": rows})
}

// team shows one team: members, limits, model allowlist, managed
// settings, and its usage of the last 30 days.
func (c *Console) team(w http.ResponseWriter, r *http.Request, v *viewer) {
	ctx := r.Context()
	t, err := c.o.Store.TeamByID(ctx, r.PathValue("id"))
	if store.IsNotFound(err) {
		c.fail(w, r, v, http.StatusNotFound, "There is no such team.")
		return
	}
	if err != nil {
		c.storeFailed(w, r, v, err)
		return
	}
	members, err := c.o.Store.Members(ctx, t.ID)
	if err != nil {
		c.storeFailed(w, r, v, err)
		return
	}
	rows := make([]userRow, 0, len(members))
	for _, u := range members {
		rows = append(rows, userRow{User: u, Label: userName(u)})
	}
	now := c.o.Now()
	rep, err := c.usageOf(ctx, now.Add(-30*24*time.Hour), now.Add(time.Second), store.ByModel, scope{TeamID: t.ID})
	if err != nil {
		c.storeFailed(w, r, v, err)
		return
	}
	c.render(w, r, http.StatusOK, "team", v, map[string]any{"Title": "Team " + t.Name, "T": t, "Members": rows,
		"Limits": limitsText(t.Limits), "MemberLimits": limitsText(t.MemberLimits), "Settings": prettyJSON(t.ClaudeCode), "Usage": rep})
}
