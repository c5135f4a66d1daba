package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Team is a group of users that shares model access, limits and Claude
// Code settings; usage can be charged to it.
type Team struct {
	ID, Name  string   // "team_" + random; Name is unique
	IDPGroups []string // the IdP groups whose members are its members
	Models    []string // allowlist; empty allows every model
	// Limits are the team's own (all members together), MemberLimits each
	// member's unless the user has their own: JSON objects, "{}" when none.
	Limits       []byte
	MemberLimits []byte
	// ClaudeCode is a JSON object, {"managed_settings": {...}}, or "{}".
	ClaudeCode           []byte
	Source               string // "config" | "admin"
	CreatedAt, UpdatedAt time.Time
}

// ErrDuplicateTeam is returned when a team's id or name is already stored.
var ErrDuplicateTeam = errors.New("a team with this id or name already exists")

const teamColumns = "id, name, idp_groups, models, limits, member_limits, claude_code, source, created_at, updated_at"

// CreateTeam stores a new team.
func (s *Store) CreateTeam(ctx context.Context, t Team) error {
	return s.createTeam(ctx, s.db, t)
}

// execer is a *sql.DB or a *sql.Tx.
type execer interface {
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
}

func (s *Store) createTeam(ctx context.Context, db execer, t Team) error {
	groups, err := jsonList(t.IDPGroups)
	if err != nil {
		return err
	}
	models, err := jsonList(t.Models)
	if err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, s.rebind("INSERT INTO teams ("+teamColumns+") VALUES (?,?,?,?,?,?,?,?,?,?)"),
		cleanText(t.ID), cleanText(t.Name), groups, models, orEmpty(t.Limits), orEmpty(t.MemberLimits), orEmpty(t.ClaudeCode),
		cleanText(t.Source), t.CreatedAt.UnixMilli(), t.UpdatedAt.UnixMilli())
	if err != nil && isUniqueViolation(err) {
		return ErrDuplicateTeam
	}
	return err
}

// TeamByID returns a team; IsNotFound(err) when there is none.
func (s *Store) TeamByID(ctx context.Context, id string) (Team, error) {
	return s.oneTeam(ctx, s.db, "id = ?", cleanText(id))
}

// TeamByName returns a team; IsNotFound(err) when there is none.
func (s *Store) TeamByName(ctx context.Context, name string) (Team, error) {
	return s.oneTeam(ctx, s.db, "name = ?", cleanText(name))
}

func (s *Store) oneTeam(ctx context.Context, db querier, where string, arg any) (Team, error) {
	teams, err := s.queryTeams(ctx, db, "SELECT "+teamColumns+" FROM teams WHERE "+where, arg)
	if err != nil {
		return Team{}, err
	}
	if len(teams) == 0 {
		return Team{}, errNoRows
	}
	return teams[0], nil
}

// Teams lists every team by name.
func (s *Store) Teams(ctx context.Context) ([]Team, error) {
	return s.queryTeams(ctx, s.db, "SELECT "+teamColumns+" FROM teams ORDER BY name, id")
}

// TeamUpdate changes the fields that are set; UpdateTeam stamps UpdatedAt.
type TeamUpdate struct {
	Name              *string
	IDPGroups, Models *[]string
	// Limits, MemberLimits and ClaudeCode replace the stored JSON; nil
	// leaves it.
	Limits, MemberLimits, ClaudeCode []byte
}

// UpdateTeam applies u at now and returns the team as stored;
// ErrDuplicateTeam when the new name is another team's.
func (s *Store) UpdateTeam(ctx context.Context, id string, u TeamUpdate, now time.Time) (Team, error) {
	sets, args, err := teamSets(u)
	if err != nil {
		return Team{}, err
	}
	if len(sets) > 0 {
		sets, args = append(sets, "updated_at = ?"), append(args, now.UnixMilli())
	}
	if err := s.updateRow(ctx, "teams", sets, args, id); err != nil {
		if isUniqueViolation(err) {
			return Team{}, ErrDuplicateTeam
		}
		return Team{}, err
	}
	return s.TeamByID(ctx, id)
}

func teamSets(u TeamUpdate) ([]string, []any, error) {
	var sets []string
	var args []any
	if u.Name != nil {
		sets, args = append(sets, "name = ?"), append(args, cleanText(*u.Name))
	}
	for _, f := range []struct {
		col string
		v   *[]string
	}{{"idp_groups", u.IDPGroups}, {"models", u.Models}} {
		if f.v != nil {
			l, err := jsonList(*f.v)
			if err != nil {
				return nil, nil, err
			}
			sets, args = append(sets, f.col+" = ?"), append(args, l)
		}
	}
	for _, f := range []struct {
		col string
		v   []byte
	}{{"limits", u.Limits}, {"member_limits", u.MemberLimits}, {"claude_code", u.ClaudeCode}} {
		if f.v != nil {
			sets, args = append(sets, f.col+" = ?"), append(args, orEmpty(f.v))
		}
	}
	return sets, args, nil
}

// UpsertTeamByName creates t, or when a team of its name exists sets its
// groups, models, limits, Claude Code settings and source to t's, keeping
// its id and creation time: how the teams of the configuration file are
// applied at each start. It returns the team as stored.
func (s *Store) UpsertTeamByName(ctx context.Context, t Team) (Team, error) {
	var out Team
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		cur, err := s.oneTeam(ctx, tx, "name = ?", cleanText(t.Name))
		switch {
		case IsNotFound(err):
			if err := s.createTeam(ctx, tx, t); err != nil {
				return err
			}
		case err != nil:
			return err
		default:
			groups, models := nonNil(t.IDPGroups), nonNil(t.Models)
			sets, args, err := teamSets(TeamUpdate{IDPGroups: &groups, Models: &models, Limits: orEmptyJSON(t.Limits),
				MemberLimits: orEmptyJSON(t.MemberLimits), ClaudeCode: orEmptyJSON(t.ClaudeCode)})
			if err != nil {
				return err
			}
			sets = append(sets, "source = ?", "updated_at = ?")
			args = append(args, cleanText(t.Source), t.UpdatedAt.UnixMilli(), cur.ID)
			if _, err := tx.ExecContext(ctx, s.rebind("UPDATE teams SET "+strings.Join(sets, ", ")+" WHERE id = ?"), args...); err != nil {
				return err
			}
		}
		out, err = s.oneTeam(ctx, tx, "name = ?", cleanText(t.Name))
		return err
	})
	return out, err
}

func orEmptyJSON(b []byte) []byte {
	if len(b) == 0 {
		return []byte("{}")
	}
	return b
}

// DeleteTeam deletes a team and its memberships; the users whose primary
// team it was are left with none. Keys charged to it keep its id (their
// records name a team that no longer exists).
func (s *Store) DeleteTeam(ctx context.Context, id string) error {
	id = cleanText(id)
	return s.execSteps(ctx, []step{
		{"DELETE FROM team_members WHERE team_id = ?", []any{id}},
		{"UPDATE users SET primary_team_id = '' WHERE primary_team_id = ?", []any{id}},
		{"DELETE FROM teams WHERE id = ?", []any{id}},
	})
}

// Membership sources.
const (
	MemberIdP   = "idp"   // from the IdP's groups, resynced at each sign-in
	MemberAdmin = "admin" // added by the admin API, left alone by sign-ins
)

// AddMember makes a user a member of a team; a membership that exists is
// left as it is (with its source). IsNotFound when the team or the user
// does not exist.
func (s *Store) AddMember(ctx context.Context, teamID, userID, source string) error {
	return s.addMember(ctx, s.db, teamID, userID, source, time.Now())
}

func (s *Store) addMember(ctx context.Context, db execer, teamID, userID, source string, now time.Time) error {
	_, err := db.ExecContext(ctx, s.rebind("INSERT INTO team_members (team_id, user_id, source, created_at) VALUES (?,?,?,?) "+
		"ON CONFLICT (team_id, user_id) DO NOTHING"), cleanText(teamID), cleanText(userID), cleanText(source), now.UnixMilli())
	if err != nil && isForeignKeyViolation(err) {
		return fmt.Errorf("team %q or user %q: %w", teamID, userID, errNoRows)
	}
	return err
}

// RemoveMember ends a membership; a missing one is no error.
func (s *Store) RemoveMember(ctx context.Context, teamID, userID string) error {
	_, err := s.db.ExecContext(ctx, s.rebind("DELETE FROM team_members WHERE team_id = ? AND user_id = ?"),
		cleanText(teamID), cleanText(userID))
	return err
}

// TeamsOf lists the teams a user is a member of, by name.
func (s *Store) TeamsOf(ctx context.Context, userID string) ([]Team, error) {
	return s.queryTeams(ctx, s.db, "SELECT "+teamColumns+" FROM teams WHERE id IN (SELECT team_id FROM team_members WHERE user_id = ?) "+
		"ORDER BY name, id", cleanText(userID))
}

// Members lists a team's members by subject.
func (s *Store) Members(ctx context.Context, teamID string) ([]User, error) {
	return s.Users(ctx, UserFilter{TeamID: teamID})
}

// SyncIdPTeams makes the user's memberships from the IdP exactly teamIDs,
// in one transaction: it adds those missing (as MemberIdP), removes the
// other MemberIdP ones and leaves those the admin API added. When the
// user's primary team is then not one of their teams, it becomes primary
// ("" for none).
func (s *Store) SyncIdPTeams(ctx context.Context, userID string, teamIDs []string, primary string) error {
	userID = cleanText(userID)
	now := time.Now()
	return s.inTx(ctx, func(tx *sql.Tx) error {
		want := map[string]bool{}
		for _, id := range teamIDs {
			want[cleanText(id)] = true
		}
		rows, err := tx.QueryContext(ctx, s.rebind("SELECT team_id, source FROM team_members WHERE user_id = ?"), userID)
		if err != nil {
			return err
		}
		have := map[string]string{}
		for rows.Next() {
			var team, source string
			if err := rows.Scan(&team, &source); err != nil {
				rows.Close()
				return err
			}
			have[team] = source
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for team, source := range have {
			if source == MemberIdP && !want[team] {
				if _, err := tx.ExecContext(ctx, s.rebind("DELETE FROM team_members WHERE team_id = ? AND user_id = ?"), team, userID); err != nil {
					return err
				}
				delete(have, team)
			}
		}
		for team := range want {
			if _, ok := have[team]; !ok {
				if err := s.addMember(ctx, tx, team, userID, MemberIdP, now); err != nil {
					return err
				}
				have[team] = MemberIdP
			}
		}
		var cur string
		if err := tx.QueryRowContext(ctx, s.rebind("SELECT primary_team_id FROM users WHERE id = ?"), userID).Scan(&cur); err != nil {
			return err
		}
		if _, ok := have[cur]; !ok {
			if _, err := tx.ExecContext(ctx, s.rebind("UPDATE users SET primary_team_id = ? WHERE id = ?"), cleanText(primary), userID); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *Store) queryTeams(ctx context.Context, db querier, q string, args ...any) ([]Team, error) {
	rows, err := db.QueryContext(ctx, s.rebind(q), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Team
	for rows.Next() {
		var t Team
		var groups, models, limits, memberLimits, claude string
		var created, updated int64
		if err := rows.Scan(&t.ID, &t.Name, &groups, &models, &limits, &memberLimits, &claude, &t.Source, &created, &updated); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(groups), &t.IDPGroups); err != nil {
			return nil, fmt.Errorf("team %s: idp_groups: %w", t.ID, err)
		}
		if err := json.Unmarshal([]byte(models), &t.Models); err != nil {
			return nil, fmt.Errorf("team %s: models: %w", t.ID, err)
		}
		t.Limits, t.MemberLimits, t.ClaudeCode = []byte(limits), []byte(memberLimits), []byte(claude)
		t.CreatedAt, t.UpdatedAt = time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC()
		out = append(out, t)
	}
	return out, rows.Err()
}
