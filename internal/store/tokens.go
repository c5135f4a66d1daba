package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Token is a sign-in token the gateway minted. Only the SHA-256 of its
// secret is stored.
type Token struct {
	Hash                 []byte // SHA-256 of the secret
	Kind                 string // TokenAccess | TokenRefresh
	UserID               string
	TeamID               string // the team its usage is charged to; "" for the user's primary
	FamilyID             string // shared by the tokens of one sign-in (the refresh rotation chain)
	Client               string // "claude-code", "console", …
	CreatedAt, ExpiresAt time.Time
	// UsedAt is when a refresh token was exchanged (rotated): a second
	// use is a stolen copy's.
	UsedAt    *time.Time
	RevokedAt *time.Time
}

// Token kinds.
const (
	TokenAccess  = "access"
	TokenRefresh = "refresh"
)

var (
	// ErrTokenReused is a refresh token used a second time: its family
	// should be revoked.
	ErrTokenReused = errors.New("refresh token already used")
	// ErrTokenInvalid is a token that was revoked, has expired, or is not
	// a refresh token where one was expected.
	ErrTokenInvalid = errors.New("token revoked or expired")
)

const tokenColumns = "hash, kind, user_id, team_id, family_id, client, created_at, expires_at, used_at, revoked_at"

// CreateToken stores a new token.
func (s *Store) CreateToken(ctx context.Context, t Token) error {
	_, err := s.db.ExecContext(ctx, s.rebind("INSERT INTO tokens ("+tokenColumns+") VALUES (?,?,?,?,?,?,?,?,?,?)"),
		t.Hash, cleanText(t.Kind), cleanText(t.UserID), cleanText(t.TeamID), cleanText(t.FamilyID), cleanText(t.Client),
		t.CreatedAt.UnixMilli(), t.ExpiresAt.UnixMilli(), millisOrNil(t.UsedAt), millisOrNil(t.RevokedAt))
	return err
}

// TokenByHash returns a token whatever its state (revoked, expired); the
// caller judges it. IsNotFound(err) when there is none.
func (s *Store) TokenByHash(ctx context.Context, hash []byte) (Token, error) {
	return s.scanToken(s.db.QueryRowContext(ctx, s.rebind("SELECT "+tokenColumns+" FROM tokens WHERE hash = ?"), hash))
}

// UseRefreshToken marks a refresh token used at now and returns it, in
// one statement, so that of two replicas exchanging the same token only
// one succeeds. A token used before is returned with ErrTokenReused; one
// revoked, expired at now or not a refresh token gives ErrTokenInvalid;
// IsNotFound(err) when there is none.
func (s *Store) UseRefreshToken(ctx context.Context, hash []byte, now time.Time) (Token, error) {
	ms := now.UnixMilli()
	t, err := s.scanToken(s.db.QueryRowContext(ctx, s.rebind("UPDATE tokens SET used_at = ? WHERE hash = ? AND kind = ? "+
		"AND used_at IS NULL AND revoked_at IS NULL AND expires_at > ? RETURNING "+tokenColumns), ms, hash, TokenRefresh, ms))
	if !IsNotFound(err) {
		return t, err
	}
	t, err = s.TokenByHash(ctx, hash)
	switch {
	case err != nil:
		return Token{}, err
	case t.Kind != TokenRefresh || t.RevokedAt != nil:
		return t, ErrTokenInvalid
	case t.UsedAt != nil:
		return t, ErrTokenReused
	default: // expired
		return t, ErrTokenInvalid
	}
}

// RevokeTokenFamily revokes every token of a sign-in not revoked yet and
// returns how many.
func (s *Store) RevokeTokenFamily(ctx context.Context, familyID string, now time.Time) (int64, error) {
	return s.revokeTokens(ctx, "family_id = ?", cleanText(familyID), now)
}

// RevokeUserTokens revokes every token of a user not revoked yet (signed
// out everywhere, disabled) and returns how many.
func (s *Store) RevokeUserTokens(ctx context.Context, userID string, now time.Time) (int64, error) {
	return s.revokeTokens(ctx, "user_id = ?", cleanText(userID), now)
}

func (s *Store) revokeTokens(ctx context.Context, where string, arg any, now time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, s.rebind("UPDATE tokens SET revoked_at = ? WHERE "+where+" AND revoked_at IS NULL"), now.UnixMilli(), arg)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// DeleteExpiredTokens deletes the tokens that expired before before and
// returns how many. A used refresh token is kept until it expires, so
// that its reuse is recognised until then.
func (s *Store) DeleteExpiredTokens(ctx context.Context, before time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, s.rebind("DELETE FROM tokens WHERE expires_at < ?"), before.UnixMilli())
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (s *Store) scanToken(row *sql.Row) (Token, error) {
	var t Token
	var created, expires int64
	var used, revoked sql.NullInt64
	if err := row.Scan(&t.Hash, &t.Kind, &t.UserID, &t.TeamID, &t.FamilyID, &t.Client, &created, &expires, &used, &revoked); err != nil {
		return Token{}, err
	}
	t.CreatedAt, t.ExpiresAt = time.UnixMilli(created).UTC(), time.UnixMilli(expires).UTC()
	t.UsedAt, t.RevokedAt = timeOrNil(used), timeOrNil(revoked)
	return t, nil
}
