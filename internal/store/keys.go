package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Key is a virtual API key. Only a hash of its secret is stored, with a
// short prefix of it to recognise the key in lists.
type Key struct {
	ID         string
	Name       string
	Hash       []byte // SHA-256 of the secret
	Prefix     string
	Models     []string // allowed model names or aliases; empty allows all
	Metadata   []byte   // a JSON object, "{}" when none
	CreatedAt  time.Time
	ExpiresAt  *time.Time
	LastUsedAt *time.Time
	Revoked    bool
	// Limits and ModelLimits are JSON objects (the admin API's limits and
	// model_limits); "{}" when none.
	Limits      []byte
	ModelLimits []byte
	// UserID is the user the key belongs to, TeamID the team its usage is
	// charged to; "" for none.
	UserID, TeamID string
}

// Expired reports whether the key has expired at now.
func (k *Key) Expired(now time.Time) bool { return k.ExpiresAt != nil && !now.Before(*k.ExpiresAt) }

// ErrDuplicateKey is returned when a key's id or hash is already stored.
var ErrDuplicateKey = errors.New("a key with this id or secret already exists")

const keyColumns = "id, name, hash, prefix, models, metadata, created_at, expires_at, last_used_at, revoked, limits, model_limits, user_id, team_id"

// CreateKey stores a new key. Text the database cannot hold (invalid
// UTF-8, NUL) is stored with U+FFFD in its place, as in every text column
// this package writes.
func (s *Store) CreateKey(ctx context.Context, k Key) error {
	models, err := json.Marshal(nonNil(k.Models))
	if err != nil {
		return err
	}
	meta := k.Metadata
	if len(meta) == 0 {
		meta = []byte("{}")
	}
	_, err = s.db.ExecContext(ctx, s.rebind("INSERT INTO keys ("+keyColumns+") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)"),
		cleanText(k.ID), cleanText(k.Name), k.Hash, cleanText(k.Prefix), string(models), cleanBytes(meta), k.CreatedAt.UnixMilli(),
		millisOrNil(k.ExpiresAt), millisOrNil(k.LastUsedAt), k.Revoked, orEmpty(k.Limits), orEmpty(k.ModelLimits),
		nullText(k.UserID), nullText(k.TeamID))
	if err != nil && isUniqueViolation(err) {
		return ErrDuplicateKey
	}
	return err
}

// KeyByID returns a key; IsNotFound(err) when there is none.
func (s *Store) KeyByID(ctx context.Context, id string) (Key, error) {
	return s.oneKey(ctx, "id = ?", cleanText(id))
}

// KeyByHash returns the key whose secret hashes to hash.
func (s *Store) KeyByHash(ctx context.Context, hash []byte) (Key, error) {
	return s.oneKey(ctx, "hash = ?", hash)
}

func (s *Store) oneKey(ctx context.Context, where string, arg any) (Key, error) {
	rows, err := s.db.QueryContext(ctx, s.rebind("SELECT "+keyColumns+" FROM keys WHERE "+where), arg)
	if err != nil {
		return Key{}, err
	}
	keys, err := scanKeys(rows)
	if err != nil {
		return Key{}, err
	}
	if len(keys) == 0 {
		return Key{}, errNoRows
	}
	return keys[0], nil
}

// Keys lists every key, newest first.
func (s *Store) Keys(ctx context.Context) ([]Key, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT "+keyColumns+" FROM keys ORDER BY created_at DESC, id DESC")
	if err != nil {
		return nil, err
	}
	return scanKeys(rows)
}

// KeysOf lists a user's keys, newest first.
func (s *Store) KeysOf(ctx context.Context, userID string) ([]Key, error) {
	rows, err := s.db.QueryContext(ctx, s.rebind("SELECT "+keyColumns+" FROM keys WHERE user_id = ? ORDER BY created_at DESC, id DESC"),
		cleanText(userID))
	if err != nil {
		return nil, err
	}
	return scanKeys(rows)
}

// KeyHashes returns the digests of the keys that are not revoked: what a
// replica keeps in memory to tell a key that exists from a guess without
// a query.
func (s *Store) KeyHashes(ctx context.Context) ([][]byte, error) {
	rows, err := s.db.QueryContext(ctx, s.rebind("SELECT hash FROM keys WHERE revoked = ?"), false)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]byte
	for rows.Next() {
		var h []byte
		if err := rows.Scan(&h); err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// KeyUpdate changes the fields that are set.
type KeyUpdate struct {
	Name      *string
	Models    *[]string
	Metadata  []byte      // nil leaves it
	ExpiresAt **time.Time // set to a nil *time.Time to remove the expiry
	Revoked   *bool
	// Limits and ModelLimits replace the stored JSON; nil leaves it.
	Limits      []byte
	ModelLimits []byte
	// UserID and TeamID set the key's user and team; "" for none.
	UserID, TeamID *string
}

// UpdateKey applies u and returns the key as stored.
func (s *Store) UpdateKey(ctx context.Context, id string, u KeyUpdate) (Key, error) {
	var sets []string
	var args []any
	if u.Name != nil {
		sets, args = append(sets, "name = ?"), append(args, cleanText(*u.Name))
	}
	if u.Models != nil {
		m, err := json.Marshal(nonNil(*u.Models))
		if err != nil {
			return Key{}, err
		}
		sets, args = append(sets, "models = ?"), append(args, string(m))
	}
	if u.Metadata != nil {
		sets, args = append(sets, "metadata = ?"), append(args, cleanBytes(u.Metadata))
	}
	if u.ExpiresAt != nil {
		sets, args = append(sets, "expires_at = ?"), append(args, millisOrNil(*u.ExpiresAt))
	}
	if u.Revoked != nil {
		sets, args = append(sets, "revoked = ?"), append(args, *u.Revoked)
	}
	if u.Limits != nil {
		sets, args = append(sets, "limits = ?"), append(args, orEmpty(u.Limits))
	}
	if u.ModelLimits != nil {
		sets, args = append(sets, "model_limits = ?"), append(args, orEmpty(u.ModelLimits))
	}
	if u.UserID != nil {
		sets, args = append(sets, "user_id = ?"), append(args, nullText(*u.UserID))
	}
	if u.TeamID != nil {
		sets, args = append(sets, "team_id = ?"), append(args, nullText(*u.TeamID))
	}
	if err := s.updateRow(ctx, "keys", sets, args, id); err != nil {
		return Key{}, err
	}
	return s.KeyByID(ctx, id)
}

// TouchKeys records when keys were last used; an older time never
// replaces a newer one (replicas flush in any order).
func (s *Store) TouchKeys(ctx context.Context, used map[string]time.Time) error {
	if len(used) == 0 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	q := s.rebind("UPDATE keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)")
	for id, t := range used {
		ms := t.UnixMilli()
		if _, err := tx.ExecContext(ctx, q, ms, cleanText(id), ms); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func scanKeys(rows *sql.Rows) ([]Key, error) {
	defer rows.Close()
	var out []Key
	for rows.Next() {
		var k Key
		var models, meta, limits, modelLimits string
		var created int64
		var expires, used sql.NullInt64
		var user, team sql.NullString
		if err := rows.Scan(&k.ID, &k.Name, &k.Hash, &k.Prefix, &models, &meta, &created, &expires, &used, &k.Revoked, &limits,
			&modelLimits, &user, &team); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(models), &k.Models); err != nil {
			return nil, fmt.Errorf("key %s: models: %w", k.ID, err)
		}
		k.Metadata = []byte(meta)
		k.Limits, k.ModelLimits = []byte(limits), []byte(modelLimits)
		k.CreatedAt = time.UnixMilli(created).UTC()
		k.ExpiresAt = timeOrNil(expires)
		k.LastUsedAt = timeOrNil(used)
		k.UserID, k.TeamID = user.String, team.String
		out = append(out, k)
	}
	return out, rows.Err()
}

// orEmpty stores an absent JSON object as {}.
func orEmpty(b []byte) string {
	if len(b) == 0 {
		return "{}"
	}
	return cleanBytes(b)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// nullText stores "" as NULL, in the columns where NULL means none.
func nullText(v string) any {
	if v == "" {
		return nil
	}
	return cleanText(v)
}

func millisOrNil(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMilli()
}

func timeOrNil(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := time.UnixMilli(v.Int64).UTC()
	return &t
}

// isUniqueViolation recognises a unique-constraint failure in either
// database.
func isUniqueViolation(err error) bool {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Code == "23505" // unique_violation
	}
	var lite *sqlite.Error
	if errors.As(err, &lite) {
		return lite.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || lite.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}
