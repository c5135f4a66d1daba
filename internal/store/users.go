package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// User is a person: made at their first sign-in through the identity
// provider, or by the admin API.
type User struct {
	ID            string // "usr_" + random, made by the caller
	Subject       string // the IdP identity (the configured user claim); required, unique
	Email, Name   string
	PrimaryTeamID string // the team usage is charged to by default; "" for none
	// Limits is a JSON object like a key's limits, "{}" when none.
	Limits []byte
	// Models is the user's own allowlist; empty leaves it to the team's.
	Models []string
	// Disabled is a deprovisioned user: they lose access, their records stay.
	Disabled bool
	// Admin is a console operator, from admin_groups at the last sign-in.
	Admin      bool
	Source     string // "idp" | "admin"
	CreatedAt  time.Time
	LastSeenAt *time.Time
}

// ErrDuplicateUser is returned when a user's id or subject is already stored.
var ErrDuplicateUser = errors.New("a user with this id or subject already exists")

const userColumns = "id, subject, email, name, primary_team_id, limits, models, disabled, admin, source, created_at, last_seen_at"

// CreateUser stores a new user.
func (s *Store) CreateUser(ctx context.Context, u User) error {
	models, err := jsonList(u.Models)
	if err != nil {
		return err
	}
	_, err = s.db.ExecContext(ctx, s.rebind("INSERT INTO users ("+userColumns+") VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"),
		cleanText(u.ID), cleanText(u.Subject), cleanText(u.Email), cleanText(u.Name), cleanText(u.PrimaryTeamID),
		orEmpty(u.Limits), models, u.Disabled, u.Admin, cleanText(u.Source), u.CreatedAt.UnixMilli(), millisOrNil(u.LastSeenAt))
	if err != nil && isUniqueViolation(err) {
		return ErrDuplicateUser
	}
	return err
}

// UserByID returns a user; IsNotFound(err) when there is none.
func (s *Store) UserByID(ctx context.Context, id string) (User, error) {
	return s.oneUser(ctx, "id = ?", cleanText(id))
}

// UserBySubject returns the user of an IdP identity; IsNotFound(err) when
// there is none.
func (s *Store) UserBySubject(ctx context.Context, subject string) (User, error) {
	return s.oneUser(ctx, "subject = ?", cleanText(subject))
}

func (s *Store) oneUser(ctx context.Context, where string, arg any) (User, error) {
	users, err := s.queryUsers(ctx, s.db, "SELECT "+userColumns+" FROM users WHERE "+where, arg)
	if err != nil {
		return User{}, err
	}
	if len(users) == 0 {
		return User{}, errNoRows
	}
	return users[0], nil
}

// UserFilter selects users; zero fields match everyone.
type UserFilter struct {
	TeamID string // members of this team
	// Query matches users whose subject, email or name holds it, whatever
	// the case of ASCII letters.
	Query string
	Limit int // 0: all
}

// Users lists users by subject.
func (s *Store) Users(ctx context.Context, f UserFilter) ([]User, error) {
	var where []string
	var args []any
	if f.TeamID != "" {
		where = append(where, "id IN (SELECT user_id FROM team_members WHERE team_id = ?)")
		args = append(args, cleanText(f.TeamID))
	}
	if f.Query != "" {
		like := "%" + likeEscaper.Replace(strings.ToLower(cleanText(f.Query))) + "%"
		where = append(where, `(LOWER(subject) LIKE ? ESCAPE '\' OR LOWER(email) LIKE ? ESCAPE '\' OR LOWER(name) LIKE ? ESCAPE '\')`)
		args = append(args, like, like, like)
	}
	q := "SELECT " + userColumns + " FROM users"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY subject, id"
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	return s.queryUsers(ctx, s.db, q, args...)
}

// likeEscaper escapes LIKE's wildcards (with ESCAPE '\').
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// UserUpdate changes the fields that are set.
type UserUpdate struct {
	Email, Name, PrimaryTeamID *string
	Limits                     []byte // nil leaves it
	Models                     *[]string
	Disabled, Admin            *bool
	LastSeenAt                 *time.Time
}

// UpdateUser applies u and returns the user as stored.
func (s *Store) UpdateUser(ctx context.Context, id string, u UserUpdate) (User, error) {
	var sets []string
	var args []any
	for _, f := range []struct {
		col string
		v   *string
	}{{"email", u.Email}, {"name", u.Name}, {"primary_team_id", u.PrimaryTeamID}} {
		if f.v != nil {
			sets, args = append(sets, f.col+" = ?"), append(args, cleanText(*f.v))
		}
	}
	if u.Limits != nil {
		sets, args = append(sets, "limits = ?"), append(args, orEmpty(u.Limits))
	}
	if u.Models != nil {
		m, err := jsonList(*u.Models)
		if err != nil {
			return User{}, err
		}
		sets, args = append(sets, "models = ?"), append(args, m)
	}
	if u.Disabled != nil {
		sets, args = append(sets, "disabled = ?"), append(args, *u.Disabled)
	}
	if u.Admin != nil {
		sets, args = append(sets, "admin = ?"), append(args, *u.Admin)
	}
	if u.LastSeenAt != nil {
		sets, args = append(sets, "last_seen_at = ?"), append(args, u.LastSeenAt.UnixMilli())
	}
	if err := s.updateRow(ctx, "users", sets, args, id); err != nil {
		return User{}, err
	}
	return s.UserByID(ctx, id)
}

// updateRow runs UPDATE table SET sets WHERE id = id; IsNotFound when no
// row has that id. With no sets it does nothing.
func (s *Store) updateRow(ctx context.Context, table string, sets []string, args []any, id string) error {
	if len(sets) == 0 {
		return nil
	}
	res, err := s.db.ExecContext(ctx, s.rebind("UPDATE "+table+" SET "+strings.Join(sets, ", ")+" WHERE id = ?"), append(args, cleanText(id))...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return errNoRows
	}
	return nil
}

// DeleteUser deletes a user and their team memberships, and at now in the same
// transaction revokes their keys, sign-ins and tokens: what they
// could call the gateway with goes with them. Their ledger records stay.
func (s *Store) DeleteUser(ctx context.Context, id string, now time.Time) error {
	id = cleanText(id)
	ms := now.UnixMilli()
	return s.execSteps(ctx, []step{
		{"UPDATE keys SET revoked = ? WHERE user_id = ?", []any{true, id}},
		{"UPDATE token_families SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL", []any{ms, id}},
		{"UPDATE tokens SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL", []any{ms, id}},
		{"DELETE FROM team_members WHERE user_id = ?", []any{id}},
		{"DELETE FROM users WHERE id = ?", []any{id}},
	})
}

// step is a statement of execSteps.
type step struct {
	q    string
	args []any
}

// execSteps runs statements in order in one transaction. The last one
// must change a row: IsNotFound(err) when it changes none, and nothing
// is changed.
func (s *Store) execSteps(ctx context.Context, steps []step) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		for i, st := range steps {
			res, err := tx.ExecContext(ctx, s.rebind(st.q), st.args...)
			if err != nil {
				return err
			}
			if i == len(steps)-1 {
				if n, err := res.RowsAffected(); err == nil && n == 0 {
					return errNoRows
				}
			}
		}
		return nil
	})
}

// inTx runs fn in a transaction, committed when fn returns nil.
func (s *Store) inTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// querier is a *sql.DB or a *sql.Tx.
type querier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

func (s *Store) queryUsers(ctx context.Context, db querier, q string, args ...any) ([]User, error) {
	rows, err := db.QueryContext(ctx, s.rebind(q), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []User
	for rows.Next() {
		var u User
		var limits, models string
		var created int64
		var seen sql.NullInt64
		if err := rows.Scan(&u.ID, &u.Subject, &u.Email, &u.Name, &u.PrimaryTeamID, &limits, &models, &u.Disabled, &u.Admin,
			&u.Source, &created, &seen); err != nil {
			return nil, err
		}
		u.Limits = []byte(limits)
		if err := json.Unmarshal([]byte(models), &u.Models); err != nil {
			return nil, fmt.Errorf("user %s: models: %w", u.ID, err)
		}
		u.CreatedAt = time.UnixMilli(created).UTC()
		u.LastSeenAt = timeOrNil(seen)
		out = append(out, u)
	}
	return out, rows.Err()
}

// jsonList renders a list of names as the JSON array a column holds.
func jsonList(l []string) (string, error) {
	clean := make([]string, len(l))
	for i, v := range l {
		clean[i] = cleanText(v)
	}
	b, err := json.Marshal(clean)
	return string(b), err
}

// isForeignKeyViolation recognises a reference to a row that does not
// exist, in either database.
func isForeignKeyViolation(err error) bool {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Code == "23503" // foreign_key_violation
	}
	var lite *sqlite.Error
	if errors.As(err, &lite) {
		return lite.Code() == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
	}
	return false
}
