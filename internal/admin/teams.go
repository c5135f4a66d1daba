package admin

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/limit"
	"github.com/tollgate/tollgate/internal/store"
)

// Bounds on what a team holds.
const (
	maxGroups          = 256
	maxGroupLen        = 256 // bytes
	maxClaudeCodeBytes = 64 << 10
)

// SourceConfig marks the teams of the configuration file: the admin API
// may change their members, not the teams.
const SourceConfig = "config"

// CreateTeam makes a team (source "admin").
func (s *Service) CreateTeam(ctx context.Context, req CreateTeam) (TeamView, error) {
	if err := s.checkName(req.Name); err != nil {
		return TeamView{}, err
	}
	if err := checkGroups(req.IDPGroups); err != nil {
		return TeamView{}, err
	}
	if err := s.checkModels(req.Models); err != nil {
		return TeamView{}, err
	}
	var own, each limit.Limits
	if req.Limits != nil {
		own = *req.Limits
	}
	if req.MemberLimits != nil {
		each = *req.MemberLimits
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	t := store.Team{ID: newID("team_"), Name: req.Name, IDPGroups: req.IDPGroups, Models: req.Models, Source: "admin",
		CreatedAt: now, UpdatedAt: now}
	var err error
	if t.Limits, err = encodeLimits("limits", own); err != nil {
		return TeamView{}, err
	}
	if t.MemberLimits, err = encodeLimits("member_limits", each); err != nil {
		return TeamView{}, err
	}
	if t.ClaudeCode, err = encodeClaudeCode(req.ClaudeCode); err != nil {
		return TeamView{}, err
	}
	if err := s.store.CreateTeam(ctx, t); err == store.ErrDuplicateTeam {
		return TeamView{}, conflict("name: a team named %q already exists", req.Name)
	} else if err != nil {
		return TeamView{}, err
	}
	s.log.Info("admin: team created", "team_id", t.ID, "name", t.Name)
	s.audit(ctx, ActionTeamCreated, "team", t.ID, map[string]any{"name": t.Name})
	return teamView(t, 0), nil
}

func checkGroups(groups []string) error {
	if len(groups) > maxGroups {
		return invalid("idp_groups: at most %d groups, not %d", maxGroups, len(groups))
	}
	for i, g := range groups {
		if strings.TrimSpace(g) == "" {
			return invalid("idp_groups[%d]: empty group name", i)
		}
		if err := checkText(fmt.Sprintf("idp_groups[%d]", i), g, maxGroupLen, true); err != nil {
			return err
		}
	}
	return nil
}

// encodeClaudeCode validates a team's Claude Code settings and encodes
// them for the store; nil is none.
func encodeClaudeCode(c *ClaudeCode) ([]byte, error) {
	if c == nil || len(c.ManagedSettings) == 0 || string(c.ManagedSettings) == "null" {
		return []byte("{}"), nil
	}
	v := c.ManagedSettings
	if v.Kind() != '{' {
		return nil, invalid("claude_code.managed_settings: must be a JSON object (Claude Code's managed-settings.json)")
	}
	if len(v) > 4*maxClaudeCodeBytes {
		return nil, invalid("claude_code.managed_settings: at most 64 KiB")
	}
	m := v.Clone()
	if err := m.Compact(); err != nil {
		_, msg := jsonx.ExplainAt("claude_code.managed_settings", err)
		return nil, invalid("%s", msg)
	}
	if len(m) > maxClaudeCodeBytes {
		return nil, invalid("claude_code.managed_settings: at most 64 KiB")
	}
	if err := checkMetadataStrings(m); err != nil {
		return nil, invalid("claude_code.managed_settings: %s", strings.TrimPrefix(err.Error(), "metadata: "))
	}
	return jsonx.Marshal(ClaudeCode{ManagedSettings: m})
}

// Teams lists every team by name, with its number of members.
func (s *Service) Teams(ctx context.Context) (TeamList, error) {
	teams, err := s.store.Teams(ctx)
	if err != nil {
		return TeamList{}, err
	}
	out := TeamList{Object: "list", Data: make([]TeamView, 0, len(teams))}
	for _, t := range teams {
		members, err := s.store.Members(ctx, t.ID)
		if err != nil {
			return TeamList{}, err
		}
		out.Data = append(out.Data, teamView(t, len(members)))
	}
	return out, nil
}

// Team returns one team.
func (s *Service) Team(ctx context.Context, id string) (TeamView, error) {
	t, err := s.team(ctx, "id", id)
	if err != nil {
		return TeamView{}, err
	}
	members, err := s.store.Members(ctx, id)
	if err != nil {
		return TeamView{}, err
	}
	return teamView(t, len(members)), nil
}

// team reads a team; a missing one is 404 when field is the path's id,
// else 400 naming field.
func (s *Service) team(ctx context.Context, field, id string) (store.Team, error) {
	return lookup(ctx, "team", field, id, s.store.TeamByID)
}

// editable reads a team the admin API may change: not one of the
// configuration file's.
func (s *Service) editable(ctx context.Context, id string) (store.Team, error) {
	t, err := s.team(ctx, "id", id)
	if err != nil {
		return store.Team{}, err
	}
	if t.Source == SourceConfig {
		return store.Team{}, conflict("team %q (%s) is managed by the configuration file: edit identity.teams in the config file "+
			"and reload; its members can be changed here", t.Name, id)
	}
	return t, nil
}

// TeamPatch is a decoded PATCH /admin/teams/{id}: nil fields stay; the
// others replace the team's as a whole.
type TeamPatch struct {
	Name                 *string
	IDPGroups, Models    *[]string
	Limits, MemberLimits *limit.Limits
	ClaudeCode           **ClaudeCode // a nil *ClaudeCode removes the settings
}

// UpdateTeam changes a team of the admin API's.
func (s *Service) UpdateTeam(ctx context.Context, id string, p TeamPatch) (TeamView, error) {
	if _, err := s.editable(ctx, id); err != nil {
		return TeamView{}, err
	}
	u := store.TeamUpdate{Name: p.Name, IDPGroups: p.IDPGroups, Models: p.Models}
	var fields []string
	var err error
	if p.Name != nil {
		fields = append(fields, "name")
		if err := s.checkName(*p.Name); err != nil {
			return TeamView{}, err
		}
	}
	if p.IDPGroups != nil {
		fields = append(fields, "idp_groups")
		if err := checkGroups(*p.IDPGroups); err != nil {
			return TeamView{}, err
		}
	}
	if p.Models != nil {
		fields = append(fields, "models")
		if err := s.checkModels(*p.Models); err != nil {
			return TeamView{}, err
		}
	}
	if p.Limits != nil {
		fields = append(fields, "limits")
		if u.Limits, err = encodeLimits("limits", *p.Limits); err != nil {
			return TeamView{}, err
		}
	}
	if p.MemberLimits != nil {
		fields = append(fields, "member_limits")
		if u.MemberLimits, err = encodeLimits("member_limits", *p.MemberLimits); err != nil {
			return TeamView{}, err
		}
	}
	if p.ClaudeCode != nil {
		fields = append(fields, "claude_code")
		if u.ClaudeCode, err = encodeClaudeCode(*p.ClaudeCode); err != nil {
			return TeamView{}, err
		}
	}
	t, err := s.store.UpdateTeam(ctx, id, u, s.now())
	switch {
	case err == store.ErrDuplicateTeam:
		return TeamView{}, conflict("name: a team named %q already exists", *p.Name)
	case store.IsNotFound(err):
		return TeamView{}, notFound("team", id)
	case err != nil:
		return TeamView{}, err
	}
	s.log.Info("admin: team updated", "team_id", id)
	s.audit(ctx, ActionTeamUpdated, "team", id, map[string]any{"fields": fields})
	members, err := s.store.Members(ctx, id)
	if err != nil {
		return TeamView{}, err
	}
	return teamView(t, len(members)), nil
}

// DeleteTeam deletes a team of the admin API's and its memberships.
func (s *Service) DeleteTeam(ctx context.Context, id string) (TeamView, error) {
	t, err := s.editable(ctx, id)
	if err != nil {
		return TeamView{}, err
	}
	members, err := s.store.Members(ctx, id)
	if err != nil {
		return TeamView{}, err
	}
	if err := s.store.DeleteTeam(ctx, id); store.IsNotFound(err) {
		return TeamView{}, notFound("team", id)
	} else if err != nil {
		return TeamView{}, err
	}
	s.log.Info("admin: team deleted", "team_id", id, "name", t.Name)
	s.audit(ctx, ActionTeamDeleted, "team", id, map[string]any{"name": t.Name, "members": len(members)})
	return teamView(t, len(members)), nil
}

// Members lists a team's members by subject.
func (s *Service) Members(ctx context.Context, teamID string) (UserList, error) {
	if _, err := s.team(ctx, "id", teamID); err != nil {
		return UserList{}, err
	}
	users, err := s.store.Members(ctx, teamID)
	if err != nil {
		return UserList{}, err
	}
	return s.userList(ctx, users)
}

// AddMember makes a user a member of a team (source "admin": sign-ins
// leave it alone), also of a team of the configuration file's. It
// returns the user.
func (s *Service) AddMember(ctx context.Context, teamID, userID string) (UserView, error) {
	t, err := s.team(ctx, "id", teamID)
	if err != nil {
		return UserView{}, err
	}
	if _, err := s.memberUser(ctx, userID); err != nil {
		return UserView{}, err
	}
	if err := s.store.AddMember(ctx, teamID, userID, store.MemberAdmin); store.IsNotFound(err) {
		return UserView{}, notFound("team or user", teamID+", "+userID)
	} else if err != nil {
		return UserView{}, err
	}
	s.log.Info("admin: team member added", "team_id", teamID, "user_id", userID)
	s.audit(ctx, ActionMemberAdded, "team", teamID, map[string]any{"team": t.Name, "user_id": userID})
	return s.User(ctx, userID)
}

// RemoveMember ends a membership; the user's primary team, when it was
// this one, becomes none. It returns the user.
func (s *Service) RemoveMember(ctx context.Context, teamID, userID string) (UserView, error) {
	t, err := s.team(ctx, "id", teamID)
	if err != nil {
		return UserView{}, err
	}
	u, err := s.memberUser(ctx, userID)
	if err != nil {
		return UserView{}, err
	}
	v, err := s.User(ctx, userID)
	if err != nil {
		return UserView{}, err
	}
	member := false
	for _, ref := range v.Teams {
		member = member || ref.ID == teamID
	}
	if !member {
		return UserView{}, &Error{Status: 404, Type: "not_found_error",
			Message: fmt.Sprintf("user %q is not a member of team %q (%s)", userID, teamID, t.Name)}
	}
	if err := s.store.RemoveMember(ctx, teamID, userID); err != nil {
		return UserView{}, err
	}
	if u.PrimaryTeamID == teamID {
		none := ""
		if _, err := s.store.UpdateUser(ctx, userID, store.UserUpdate{PrimaryTeamID: &none}); err != nil {
			return UserView{}, err
		}
	}
	s.log.Info("admin: team member removed", "team_id", teamID, "user_id", userID)
	s.audit(ctx, ActionMemberRemoved, "team", teamID, map[string]any{"team": t.Name, "user_id": userID})
	return s.User(ctx, userID)
}

// memberUser reads the user of a membership path: 404 when missing.
func (s *Service) memberUser(ctx context.Context, userID string) (store.User, error) {
	if err := checkParam("user_id", userID); err != nil {
		return store.User{}, err
	}
	return s.user(ctx, "id", userID)
}

func teamView(t store.Team, members int) TeamView {
	v := TeamView{ID: t.ID, Object: "team", Name: t.Name, IDPGroups: nonNil(t.IDPGroups), Models: nonNil(t.Models),
		Source: t.Source, Members: members, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
	// Stored by encodeLimits and encodeClaudeCode; an unreadable value
	// shows as none.
	if len(t.Limits) > 0 {
		jsonx.Unmarshal(t.Limits, &v.Limits)
	}
	if len(t.MemberLimits) > 0 {
		jsonx.Unmarshal(t.MemberLimits, &v.MemberLimits)
	}
	if len(t.ClaudeCode) > 0 {
		jsonx.Unmarshal(t.ClaudeCode, &v.ClaudeCode)
	}
	return v
}
