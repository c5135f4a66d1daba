package identity

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/tollgate/tollgate/internal/auth"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/oidc"
	"github.com/tollgate/tollgate/internal/store"
)

// seenEvery is how often a user's last-seen time is written: not on every
// request a cached token makes.
const seenEvery = time.Minute

// provision finds or creates the user an IdP identity names, brings their
// name, console role and team memberships up to date with the IdP's
// groups, and returns them with the team they act in: their primary team.
// A disabled user is refused. signIn marks an interactive sign-in (audited;
// a bearer JWT's first use is audited as the user's creation only).
func (s *Service) provision(ctx context.Context, r *http.Request, id oidc.Identity, signIn bool) (store.User, string, error) {
	if id.Subject == "" {
		return store.User{}, "", auth.SignInError("missing_user_claim")
	}
	now := s.now()
	teams, err := s.st.Teams(ctx)
	if err != nil {
		return store.User{}, "", s.unavailable(err)
	}
	matched := s.teamsFor(teams, id.Groups)
	admin := false
	for _, g := range id.Groups {
		admin = admin || s.admins[g]
	}
	u, err := s.st.UserBySubject(ctx, id.Subject)
	switch {
	case store.IsNotFound(err):
		u = store.User{ID: newID("usr_"), Subject: id.Subject, Email: id.Email, Name: id.Name, Admin: admin && id.HasGroups,
			Source: "idp", CreatedAt: now, LastSeenAt: &now, Limits: []byte("{}")}
		if len(matched) > 0 {
			u.PrimaryTeamID = matched[0].ID
		}
		if err := s.st.CreateUser(ctx, u); err != nil {
			if !errors.Is(err, store.ErrDuplicateUser) {
				return store.User{}, "", s.unavailable(err)
			}
			// Made by another request meanwhile: take that one.
			if u, err = s.st.UserBySubject(ctx, id.Subject); err != nil {
				return store.User{}, "", s.unavailable(err)
			}
		} else {
			s.audit(ctx, r, store.AuditEvent{ActorKind: "user", ActorID: u.ID, Action: "user_provisioned",
				TargetKind: "user", TargetID: u.ID, Detail: detail(map[string]any{"subject": u.Subject, "groups": id.Groups})})
		}
	case err != nil:
		return store.User{}, "", s.unavailable(err)
	}
	if u.Disabled {
		if signIn {
			s.audit(ctx, r, store.AuditEvent{ActorKind: "user", ActorID: u.ID, Action: "signin_refused",
				TargetKind: "user", TargetID: u.ID, Detail: detail(map[string]any{"reason": "disabled"})})
		}
		return store.User{}, "", auth.SignInError("disabled_user")
	}
	var up store.UserUpdate
	changed := false
	if id.Email != "" && id.Email != u.Email {
		up.Email, changed = &id.Email, true
	}
	if id.Name != "" && id.Name != u.Name {
		up.Name, changed = &id.Name, true
	}
	if id.HasGroups && admin != u.Admin {
		up.Admin, changed = &admin, true
	}
	if u.LastSeenAt == nil || now.Sub(*u.LastSeenAt) >= seenEvery {
		up.LastSeenAt, changed = &now, true
	}
	if changed {
		if u, err = s.st.UpdateUser(ctx, u.ID, up); err != nil {
			return store.User{}, "", s.unavailable(err)
		}
	}
	// A token without the groups claim (another client of the IdP, a
	// token asked for without the groups scope) says nothing of the
	// user's teams: they stay as they are, and so does the console role.
	primary := u.PrimaryTeamID
	if id.HasGroups {
		if primary, err = s.syncTeams(ctx, u, matched); err != nil {
			return store.User{}, "", err
		}
	} else {
		admin = u.Admin
	}
	if signIn {
		s.audit(ctx, r, store.AuditEvent{ActorKind: "user", ActorID: u.ID, Action: "signin", TargetKind: "user", TargetID: u.ID,
			Detail: detail(map[string]any{"subject": u.Subject, "team": primary, "admin": admin})})
	}
	return u, primary, nil
}

// teamsFor lists the teams whose IdP groups meet groups, in the order of
// the configuration (teams made through the admin API after those, by
// name): the first is a new member's primary team.
func (s *Service) teamsFor(teams []store.Team, groups []string) []store.Team {
	var out []store.Team
	for _, t := range teams {
		for _, g := range t.IDPGroups {
			if slices.Contains(groups, g) {
				out = append(out, t)
				break
			}
		}
	}
	order := func(name string) int {
		for i, t := range s.cfg.Teams {
			if t.Name == name {
				return i
			}
		}
		return len(s.cfg.Teams)
	}
	slices.SortStableFunc(out, func(a, b store.Team) int { return order(a.Name) - order(b.Name) })
	return out
}

// syncTeams makes the user's IdP memberships those of matched (the
// memberships an operator made through the admin API stay), writing only
// when something differs, and returns the team the user acts in: their
// primary team, or, when they are no longer in it, the first matched.
func (s *Service) syncTeams(ctx context.Context, u store.User, matched []store.Team) (string, error) {
	current, err := s.st.TeamsOf(ctx, u.ID)
	if err != nil {
		return "", s.unavailable(err)
	}
	want := make([]string, len(matched))
	for i, t := range matched {
		want[i] = t.ID
	}
	held := len(current) == len(want)
	for _, id := range want {
		held = held && slices.ContainsFunc(current, func(t store.Team) bool { return t.ID == id })
	}
	primaryOK := u.PrimaryTeamID == "" && len(want) == 0 || slices.Contains(want, u.PrimaryTeamID)
	if held && primaryOK {
		return u.PrimaryTeamID, nil
	}
	fallback := ""
	switch {
	case slices.Contains(want, u.PrimaryTeamID):
		fallback = u.PrimaryTeamID
	case len(want) > 0:
		fallback = want[0]
	}
	if err := s.st.SyncIdPTeams(ctx, u.ID, want, fallback); err != nil {
		return "", s.unavailable(err)
	}
	after, err := s.st.UserByID(ctx, u.ID)
	if err != nil {
		return "", s.unavailable(err)
	}
	return after.PrimaryTeamID, nil
}

// SyncConfigTeams creates or updates the configured teams (at start and on
// reload). Teams made through the admin API are left as they are.
func (s *Service) SyncConfigTeams(ctx context.Context, teams []config.Team) error {
	for _, t := range teams {
		st, err := StoreTeam(t)
		if err != nil {
			return fmt.Errorf("identity.teams %q: %w", t.Name, err)
		}
		st.ID, st.Source = newID("team_"), "config"
		st.CreatedAt, st.UpdatedAt = s.now(), s.now()
		if _, err := s.st.UpsertTeamByName(ctx, st); err != nil {
			return fmt.Errorf("identity.teams %q: %w", t.Name, err)
		}
	}
	s.cfg.Teams = teams
	s.Forget()
	return nil
}

// StoreTeam is a configured team as the database keeps it (without id).
func StoreTeam(t config.Team) (store.Team, error) {
	limits, err := limitsJSON(t.Limits)
	if err != nil {
		return store.Team{}, fmt.Errorf("limits: %w", err)
	}
	member, err := limitsJSON(t.MemberLimits)
	if err != nil {
		return store.Team{}, fmt.Errorf("member_limits: %w", err)
	}
	cc := []byte("{}")
	if t.ClaudeCode.ManagedSettings != nil {
		if cc, err = jsonx.Marshal(map[string]any{"managed_settings": t.ClaudeCode.ManagedSettings}); err != nil {
			return store.Team{}, fmt.Errorf("claude_code.managed_settings: %w", err)
		}
	}
	return store.Team{Name: t.Name, IDPGroups: t.IDPGroups, Models: t.Models, Limits: limits, MemberLimits: member, ClaudeCode: cc}, nil
}

func limitsJSON(v config.LimitValues) ([]byte, error) {
	l, err := v.Limit()
	if err != nil {
		return nil, err
	}
	return jsonx.Marshal(l)
}

// detail renders an audit event's detail object.
func detail(m map[string]any) []byte {
	b, err := jsonx.Marshal(m)
	if err != nil {
		return []byte("{}")
	}
	return b
}
