package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Session is an operator console session. ID is the SHA-256 (hex) of the
// cookie's secret.
type Session struct {
	ID        string
	KeyID     string // the virtual key signed in; "" for the master key or a user
	UserID    string // the user signed in; "" for a key
	Admin     bool   // the user was a console operator when they signed in
	CSRF      string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// ErrNoSession is a session that does not exist or has expired.
var ErrNoSession = errors.New("no such session")

// PutSession stores a new session.
func (s *Store) PutSession(ctx context.Context, se Session) error {
	_, err := s.db.ExecContext(ctx, s.rebind("INSERT INTO console_sessions (id, key_id, csrf, created_at, expires_at, user_id, admin) VALUES (?,?,?,?,?,?,?)"),
		se.ID, cleanText(se.KeyID), se.CSRF, se.CreatedAt.UnixMilli(), se.ExpiresAt.UnixMilli(), cleanText(se.UserID), se.Admin)
	return err
}

// SessionByID returns the session id if it has not expired at now.
func (s *Store) SessionByID(ctx context.Context, id string, now time.Time) (Session, error) {
	var se Session
	var created, expires int64
	err := s.db.QueryRowContext(ctx, s.rebind("SELECT id, key_id, csrf, created_at, expires_at, user_id, admin FROM console_sessions WHERE id = ? AND expires_at > ?"),
		id, now.UnixMilli()).Scan(&se.ID, &se.KeyID, &se.CSRF, &created, &expires, &se.UserID, &se.Admin)
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, ErrNoSession
	}
	if err != nil {
		return Session{}, err
	}
	se.CreatedAt, se.ExpiresAt = time.UnixMilli(created).UTC(), time.UnixMilli(expires).UTC()
	return se, nil
}

// DeleteSession ends a session (signing out); a missing one is no error.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	_, err := s.db.ExecContext(ctx, s.rebind("DELETE FROM console_sessions WHERE id = ?"), id)
	return err
}

// DeleteKeySessions ends every session of a virtual key (revoked).
func (s *Store) DeleteKeySessions(ctx context.Context, keyID string) error {
	_, err := s.db.ExecContext(ctx, s.rebind("DELETE FROM console_sessions WHERE key_id = ? AND key_id <> ''"), keyID)
	return err
}

// DeleteUserSessions ends every console session of a user (disabled,
// deleted, or signed out everywhere).
func (s *Store) DeleteUserSessions(ctx context.Context, userID string) error {
	_, err := s.db.ExecContext(ctx, s.rebind("DELETE FROM console_sessions WHERE user_id = ? AND user_id <> ''"), cleanText(userID))
	return err
}

// PurgeSessions deletes the sessions expired at now.
func (s *Store) PurgeSessions(ctx context.Context, now time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, s.rebind("DELETE FROM console_sessions WHERE expires_at <= ?"), now.UnixMilli())
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
