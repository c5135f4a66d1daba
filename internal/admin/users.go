package admin

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"net/http"
	"strings"
	"time"

	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/limit"
	"github.com/tollgate/tollgate/internal/store"
)

// Bounds on what a user holds.
const (
	maxSubjectLen = 256 // bytes
	maxEmailLen   = 320 // bytes (RFC 5321's path limit)
)

var idEncoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// newID returns prefix and 80 random bits, as key ids are made.
func newID(prefix string) string {
	var b [10]byte
	rand.Read(b[:])
	return prefix + idEncoding.EncodeToString(b[:])
}

func conflict(format string, args ...any) *Error {
	e := invalid(format, args...)
	e.Status, e.Type = http.StatusConflict, "conflict_error"
	return e
}

// CreateUser makes a user (source "admin"); one given a primary team is
// made its member.
func (s *Service) CreateUser(ctx context.Context, req CreateUser) (UserView, error) {
	if err := checkText("subject", req.Subject, maxSubjectLen, true); err != nil {
		return UserView{}, err
	}
	if strings.TrimSpace(req.Subject) == "" {
		return UserView{}, invalid("subject: required, and not blank")
	}
	if err := checkPersonText(req.Email, req.Name); err != nil {
		return UserView{}, err
	}
	if err := s.checkModels(req.Models); err != nil {
		return UserView{}, err
	}
	var own limit.Limits
	if req.Limits != nil {
		own = *req.Limits
	}
	limits, err := encodeLimits("limits", own)
	if err != nil {
		return UserView{}, err
	}
	if req.PrimaryTeamID != "" {
		if _, err := s.team(ctx, "primary_team_id", req.PrimaryTeamID); err != nil {
			return UserView{}, err
		}
	}
	u := store.User{ID: newID("usr_"), Subject: req.Subject, Email: req.Email, Name: req.Name, PrimaryTeamID: req.PrimaryTeamID,
		Limits: limits, Models: req.Models, Disabled: req.Disabled, Admin: req.Admin, Source: "admin",
		CreatedAt: s.now().UTC().Truncate(time.Millisecond)}
	if err := s.store.CreateUser(ctx, u); err == store.ErrDuplicateUser {
		return UserView{}, conflict("subject: a user with subject %q already exists", req.Subject)
	} else if err != nil {
		return UserView{}, err
	}
	if u.PrimaryTeamID != "" {
		if err := s.store.AddMember(ctx, u.PrimaryTeamID, u.ID, store.MemberAdmin); err != nil {
			return UserView{}, err
		}
	}
	s.log.Info("admin: user created", "user_id", u.ID, "subject", u.Subject)
	s.audit(ctx, ActionUserCreated, "user", u.ID, map[string]any{"subject": u.Subject, "primary_team_id": u.PrimaryTeamID})
	return s.User(ctx, u.ID)
}

func checkPersonText(email, name string) error {
	if err := checkText("email", email, maxEmailLen, true); err != nil {
		return err
	}
	return checkText("name", name, maxNameLen, true)
}

// encodeLimits validates a limits object and encodes it for the store.
func encodeLimits(field string, l limit.Limits) ([]byte, error) {
	if err := l.Validate(); err != nil {
		return nil, invalid("%s.%v", field, err)
	}
	return jsonx.Marshal(l)
}

// UserQuery selects users.
type UserQuery struct {
	TeamID string // members of this team
	Query  string // subject, email or name contains it (ASCII case ignored)
}

// Users lists users by subject.
func (s *Service) Users(ctx context.Context, q UserQuery) (UserList, error) {
	if err := checkParam("team_id", q.TeamID); err != nil {
		return UserList{}, err
	}
	if err := checkParam("q", q.Query); err != nil {
		return UserList{}, err
	}
	if q.TeamID != "" {
		if _, err := s.team(ctx, "team_id", q.TeamID); err != nil {
			return UserList{}, err
		}
	}
	users, err := s.store.Users(ctx, store.UserFilter{TeamID: q.TeamID, Query: q.Query})
	if err != nil {
		return UserList{}, err
	}
	return s.userList(ctx, users)
}

// userList shows users with their teams, read a team at a time.
func (s *Service) userList(ctx context.Context, users []store.User) (UserList, error) {
	teams, err := s.store.Teams(ctx)
	if err != nil {
		return UserList{}, err
	}
	of := map[string][]TeamRef{}
	for _, t := range teams {
		members, err := s.store.Members(ctx, t.ID)
		if err != nil {
			return UserList{}, err
		}
		for _, m := range members {
			of[m.ID] = append(of[m.ID], TeamRef{ID: t.ID, Name: t.Name})
		}
	}
	out := UserList{Object: "list", Data: make([]UserView, 0, len(users))}
	for _, u := range users {
		out.Data = append(out.Data, userView(u, of[u.ID]))
	}
	return out, nil
}

// User returns one user, with their teams.
func (s *Service) User(ctx context.Context, id string) (UserView, error) {
	u, err := s.user(ctx, "id", id)
	if err != nil {
		return UserView{}, err
	}
	teams, err := s.store.TeamsOf(ctx, id)
	if err != nil {
		return UserView{}, err
	}
	refs := make([]TeamRef, len(teams))
	for i, t := range teams {
		refs[i] = TeamRef{ID: t.ID, Name: t.Name}
	}
	return userView(u, refs), nil
}

// user reads a user; a missing one is 404 when field is the path's id,
// else 400 naming field.
func (s *Service) user(ctx context.Context, field, id string) (store.User, error) {
	return lookup(ctx, "user", field, id, s.store.UserByID)
}

// lookup reads what by id with get: a missing one is 404 when field is
// the path's id, else 400 naming field.
func lookup[T any](ctx context.Context, what, field, id string, get func(context.Context, string) (T, error)) (T, error) {
	var zero T
	if err := checkParam(field, id); err != nil {
		return zero, err
	}
	v, err := get(ctx, id)
	if store.IsNotFound(err) {
		if field == "id" {
			return zero, notFound(what, id)
		}
		return zero, invalid("%s: no %s with id %q", field, what, id)
	}
	return v, err
}

// UserPatch is a decoded PATCH /admin/users/{id}: nil fields stay.
type UserPatch struct {
	Email, Name   *string
	PrimaryTeamID *string // "" for none
	Limits        *limit.Limits
	Models        *[]string
	Disabled      *bool
	Admin         *bool
}

// UpdateUser changes a user. Disabling them revokes their sign-in tokens
// and ends their console sessions.
func (s *Service) UpdateUser(ctx context.Context, id string, p UserPatch) (UserView, error) {
	cur, err := s.user(ctx, "id", id)
	if err != nil {
		return UserView{}, err
	}
	u := store.UserUpdate{Email: p.Email, Name: p.Name, PrimaryTeamID: p.PrimaryTeamID, Models: p.Models,
		Disabled: p.Disabled, Admin: p.Admin}
	var fields []string
	if p.Email != nil || p.Name != nil {
		email, name := cur.Email, cur.Name
		if p.Email != nil {
			email, fields = *p.Email, append(fields, "email")
		}
		if p.Name != nil {
			name, fields = *p.Name, append(fields, "name")
		}
		if err := checkPersonText(email, name); err != nil {
			return UserView{}, err
		}
	}
	if p.PrimaryTeamID != nil {
		fields = append(fields, "primary_team_id")
		if err := s.checkMember(ctx, "primary_team_id", id, *p.PrimaryTeamID); err != nil {
			return UserView{}, err
		}
	}
	if p.Limits != nil {
		fields = append(fields, "limits")
		if u.Limits, err = encodeLimits("limits", *p.Limits); err != nil {
			return UserView{}, err
		}
	}
	if p.Models != nil {
		fields = append(fields, "models")
		if err := s.checkModels(*p.Models); err != nil {
			return UserView{}, err
		}
	}
	if p.Admin != nil {
		fields = append(fields, "admin")
	}
	if _, err := s.store.UpdateUser(ctx, id, u); store.IsNotFound(err) {
		return UserView{}, notFound("user", id)
	} else if err != nil {
		return UserView{}, err
	}
	if len(fields) > 0 {
		s.audit(ctx, ActionUserUpdated, "user", id, map[string]any{"fields": fields})
	}
	if p.Disabled != nil && *p.Disabled != cur.Disabled {
		if *p.Disabled {
			if err := s.signOut(ctx, id); err != nil {
				return UserView{}, err
			}
			s.log.Info("admin: user disabled", "user_id", id, "subject", cur.Subject)
			s.audit(ctx, ActionUserDisabled, "user", id, map[string]any{"subject": cur.Subject})
		} else {
			s.log.Info("admin: user enabled", "user_id", id, "subject", cur.Subject)
			s.audit(ctx, ActionUserEnabled, "user", id, map[string]any{"subject": cur.Subject})
		}
	}
	return s.User(ctx, id)
}

// signOut revokes a user's sign-in tokens and ends their console
// sessions; this process forgets their keys, so that it reads their
// state again.
func (s *Service) signOut(ctx context.Context, id string) error {
	n, err := s.store.RevokeUserTokens(ctx, id, s.now())
	if err != nil {
		return err
	}
	if s.keys != nil {
		keys, err := s.store.KeysOf(ctx, id)
		if err != nil {
			return err
		}
		for _, k := range keys {
			s.keys.Invalidate(k.ID)
		}
	}
	if err := s.store.DeleteUserSessions(ctx, id); err != nil {
		return err
	}
	if n > 0 {
		s.audit(ctx, ActionTokenRevoked, "user", id, map[string]any{"tokens": n})
	}
	return nil
}

// DeleteUser deletes a user and their memberships, and revokes their keys
// and sign-in tokens. Their ledger records stay.
func (s *Service) DeleteUser(ctx context.Context, id string) (UserView, error) {
	v, err := s.User(ctx, id)
	if err != nil {
		return UserView{}, err
	}
	keys, err := s.store.KeysOf(ctx, id)
	if err != nil {
		return UserView{}, err
	}
	if err := s.signOut(ctx, id); err != nil {
		return UserView{}, err
	}
	if err := s.store.DeleteUser(ctx, id, s.now()); store.IsNotFound(err) {
		return UserView{}, notFound("user", id)
	} else if err != nil {
		return UserView{}, err
	}
	var revoked []string
	for _, k := range keys {
		s.invalidate(k.ID)
		if !k.Revoked {
			revoked = append(revoked, k.ID)
			s.audit(ctx, ActionKeyRevoked, "key", k.ID, map[string]any{"name": k.Name, "user_id": id})
		}
	}
	s.log.Info("admin: user deleted", "user_id", id, "subject", v.Subject, "keys_revoked", len(revoked))
	s.audit(ctx, ActionUserDeleted, "user", id, map[string]any{"subject": v.Subject, "keys_revoked": nonNil(revoked)})
	return v, nil
}

// UserKeys lists a user's keys, newest first.
func (s *Service) UserKeys(ctx context.Context, userID string) (KeyList, error) {
	if _, err := s.user(ctx, "id", userID); err != nil {
		return KeyList{}, err
	}
	keys, err := s.store.KeysOf(ctx, userID)
	if err != nil {
		return KeyList{}, err
	}
	out := KeyList{Object: "list", Data: make([]KeyView, 0, len(keys))}
	for _, k := range keys {
		out.Data = append(out.Data, keyView(k))
	}
	return out, nil
}

// checkOwner checks a key's user and team: the user exists and is not
// disabled; the team exists, and the user is its member.
func (s *Service) checkOwner(ctx context.Context, userID, teamID string) error {
	if userID != "" {
		u, err := s.user(ctx, "user_id", userID)
		if err != nil {
			return err
		}
		if u.Disabled {
			return invalid("user_id: user %q (%s) is disabled", userID, u.Subject)
		}
	}
	if teamID == "" {
		return nil
	}
	if userID == "" {
		_, err := s.team(ctx, "team_id", teamID)
		return err
	}
	return s.checkMember(ctx, "team_id", userID, teamID)
}

// checkMember checks that teamID ("" passes) is a team the user is a
// member of.
func (s *Service) checkMember(ctx context.Context, field, userID, teamID string) error {
	if teamID == "" {
		return nil
	}
	t, err := s.team(ctx, field, teamID)
	if err != nil {
		return err
	}
	teams, err := s.store.TeamsOf(ctx, userID)
	if err != nil {
		return err
	}
	for _, m := range teams {
		if m.ID == teamID {
			return nil
		}
	}
	return invalid("%s: user %q is not a member of team %q (%s); add them with PUT /admin/teams/%s/members/%s",
		field, userID, teamID, t.Name, teamID, userID)
}

func userView(u store.User, teams []TeamRef) UserView {
	v := UserView{ID: u.ID, Object: "user", Subject: u.Subject, Email: u.Email, Name: u.Name,
		PrimaryTeamID: nullable(u.PrimaryTeamID), Teams: teams, Models: nonNil(u.Models), Disabled: u.Disabled,
		Admin: u.Admin, Source: u.Source, CreatedAt: u.CreatedAt, LastSeenAt: u.LastSeenAt}
	if v.Teams == nil {
		v.Teams = []TeamRef{}
	}
	if len(u.Limits) > 0 {
		jsonx.Unmarshal(u.Limits, &v.Limits) // stored by encodeLimits; an unreadable value shows as none
	}
	return v
}
