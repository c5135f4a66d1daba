package cli

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/tollgate/tollgate/internal/admin"
)

// peopleBackend is what the users, teams and audit commands act on.
type peopleBackend interface {
	CreateUser(ctx context.Context, req admin.CreateUser) (admin.UserView, error)
	Users(ctx context.Context, q admin.UserQuery) (admin.UserList, error)
	User(ctx context.Context, id string) (admin.UserView, error)
	UpdateUser(ctx context.Context, id string, p admin.UserPatch) (admin.UserView, error)
	DeleteUser(ctx context.Context, id string) (admin.UserView, error)
	UserKeys(ctx context.Context, id string) (admin.KeyList, error)
	CreateTeam(ctx context.Context, req admin.CreateTeam) (admin.TeamView, error)
	Teams(ctx context.Context) (admin.TeamList, error)
	Team(ctx context.Context, id string) (admin.TeamView, error)
	UpdateTeam(ctx context.Context, id string, p admin.TeamPatch) (admin.TeamView, error)
	DeleteTeam(ctx context.Context, id string) (admin.TeamView, error)
	Members(ctx context.Context, teamID string) (admin.UserList, error)
	AddMember(ctx context.Context, teamID, userID string) (admin.UserView, error)
	RemoveMember(ctx context.Context, teamID, userID string) (admin.UserView, error)
	Audit(ctx context.Context, q admin.AuditQuery) (admin.AuditPage, error)
	Sessions(ctx context.Context, q admin.SessionQuery) (admin.SessionList, error)
}

func (r *remote) CreateUser(ctx context.Context, req admin.CreateUser) (admin.UserView, error) {
	var u admin.UserView
	return u, r.do(ctx, http.MethodPost, "/admin/users", req, &u)
}

func (r *remote) Users(ctx context.Context, q admin.UserQuery) (admin.UserList, error) {
	v := url.Values{}
	if q.TeamID != "" {
		v.Set("team_id", q.TeamID)
	}
	if q.Query != "" {
		v.Set("q", q.Query)
	}
	var l admin.UserList
	return l, r.do(ctx, http.MethodGet, withQuery("/admin/users", v), nil, &l)
}

func (r *remote) User(ctx context.Context, id string) (admin.UserView, error) {
	var u admin.UserView
	return u, r.do(ctx, http.MethodGet, "/admin/users/"+url.PathEscape(id), nil, &u)
}

// UpdateUser sends the patch's set fields, as PATCH /admin/users/{id} takes them.
func (r *remote) UpdateUser(ctx context.Context, id string, p admin.UserPatch) (admin.UserView, error) {
	body := map[string]any{}
	if p.Email != nil {
		body["email"] = *p.Email
	}
	if p.Name != nil {
		body["name"] = *p.Name
	}
	if p.PrimaryTeamID != nil {
		body["primary_team_id"] = *p.PrimaryTeamID
	}
	if p.Limits != nil {
		body["limits"] = *p.Limits
	}
	if p.Models != nil {
		body["models"] = *p.Models
	}
	if p.Disabled != nil {
		body["disabled"] = *p.Disabled
	}
	if p.Admin != nil {
		body["admin"] = *p.Admin
	}
	var u admin.UserView
	return u, r.do(ctx, http.MethodPatch, "/admin/users/"+url.PathEscape(id), body, &u)
}

func (r *remote) DeleteUser(ctx context.Context, id string) (admin.UserView, error) {
	var u admin.UserView
	return u, r.do(ctx, http.MethodDelete, "/admin/users/"+url.PathEscape(id), nil, &u)
}

func (r *remote) UserKeys(ctx context.Context, id string) (admin.KeyList, error) {
	var l admin.KeyList
	return l, r.do(ctx, http.MethodGet, "/admin/users/"+url.PathEscape(id)+"/keys", nil, &l)
}

func (r *remote) CreateTeam(ctx context.Context, req admin.CreateTeam) (admin.TeamView, error) {
	var t admin.TeamView
	return t, r.do(ctx, http.MethodPost, "/admin/teams", req, &t)
}

func (r *remote) Teams(ctx context.Context) (admin.TeamList, error) {
	var l admin.TeamList
	return l, r.do(ctx, http.MethodGet, "/admin/teams", nil, &l)
}

func (r *remote) Team(ctx context.Context, id string) (admin.TeamView, error) {
	var t admin.TeamView
	return t, r.do(ctx, http.MethodGet, "/admin/teams/"+url.PathEscape(id), nil, &t)
}

// UpdateTeam sends the patch's set fields, as PATCH /admin/teams/{id} takes them.
func (r *remote) UpdateTeam(ctx context.Context, id string, p admin.TeamPatch) (admin.TeamView, error) {
	body := map[string]any{}
	if p.Name != nil {
		body["name"] = *p.Name
	}
	if p.IDPGroups != nil {
		body["idp_groups"] = *p.IDPGroups
	}
	if p.Models != nil {
		body["models"] = *p.Models
	}
	if p.Limits != nil {
		body["limits"] = *p.Limits
	}
	if p.MemberLimits != nil {
		body["member_limits"] = *p.MemberLimits
	}
	if p.ClaudeCode != nil {
		body["claude_code"] = *p.ClaudeCode
	}
	var t admin.TeamView
	return t, r.do(ctx, http.MethodPatch, "/admin/teams/"+url.PathEscape(id), body, &t)
}

func (r *remote) DeleteTeam(ctx context.Context, id string) (admin.TeamView, error) {
	var t admin.TeamView
	return t, r.do(ctx, http.MethodDelete, "/admin/teams/"+url.PathEscape(id), nil, &t)
}

func (r *remote) Members(ctx context.Context, teamID string) (admin.UserList, error) {
	var l admin.UserList
	return l, r.do(ctx, http.MethodGet, "/admin/teams/"+url.PathEscape(teamID)+"/members", nil, &l)
}

func (r *remote) AddMember(ctx context.Context, teamID, userID string) (admin.UserView, error) {
	var u admin.UserView
	return u, r.do(ctx, http.MethodPut, "/admin/teams/"+url.PathEscape(teamID)+"/members/"+url.PathEscape(userID), nil, &u)
}

func (r *remote) RemoveMember(ctx context.Context, teamID, userID string) (admin.UserView, error) {
	var u admin.UserView
	return u, r.do(ctx, http.MethodDelete, "/admin/teams/"+url.PathEscape(teamID)+"/members/"+url.PathEscape(userID), nil, &u)
}

func (r *remote) Audit(ctx context.Context, q admin.AuditQuery) (admin.AuditPage, error) {
	v := url.Values{}
	for name, s := range map[string]string{"actor_id": q.ActorID, "action": q.Action, "target_id": q.TargetID} {
		if s != "" {
			v.Set(name, s)
		}
	}
	setWindow(v, q.Since, q.Until, q.Limit)
	if q.Before > 0 {
		v.Set("before", strconv.FormatInt(q.Before, 10))
	}
	var p admin.AuditPage
	return p, r.do(ctx, http.MethodGet, withQuery("/admin/audit", v), nil, &p)
}

func (r *remote) Sessions(ctx context.Context, q admin.SessionQuery) (admin.SessionList, error) {
	v := url.Values{}
	for name, s := range map[string]string{"user_id": q.UserID, "team_id": q.TeamID, "key_id": q.KeyID} {
		if s != "" {
			v.Set(name, s)
		}
	}
	setWindow(v, q.Since, q.Until, q.Limit)
	var l admin.SessionList
	return l, r.do(ctx, http.MethodGet, withQuery("/admin/sessions", v), nil, &l)
}

// setWindow sets since, until and limit, those that are not zero.
func setWindow(v url.Values, since, until time.Time, limit int) {
	for name, t := range map[string]time.Time{"since": since, "until": until} {
		if !t.IsZero() {
			v.Set(name, t.UTC().Format(time.RFC3339Nano))
		}
	}
	if limit > 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
}

// withQuery is path with v's parameters, if any.
func withQuery(path string, v url.Values) string {
	if len(v) == 0 {
		return path
	}
	return path + "?" + v.Encode()
}
