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

// RefreshGrace is how long after a refresh token's use a second use is
// taken for a retry (a response lost on the way, two processes of one
// client refreshing at once) rather than a stolen copy's: it is refused
// without revoking the sign-in.
const RefreshGrace = 30 * time.Second

var (
	// ErrTokenReused is a refresh token used a second time: its family
	// should be revoked.
	ErrTokenReused = errors.New("refresh token already used")
	// ErrTokenJustUsed is a refresh token used a second time within
	// RefreshGrace of its first use: refused, but its family is left be.
	ErrTokenJustUsed = errors.New("refresh token used moments ago")
	// ErrTokenInvalid is a token that was revoked, has expired, or is not
	// a refresh token where one was expected.
	ErrTokenInvalid = errors.New("token revoked or expired")
)

const tokenColumns = "hash, kind, user_id, team_id, family_id, client, created_at, expires_at, used_at, revoked_at"

// tokenSelect reads a token as its family makes it: revoked when the
// family is (a token minted while the family was being revoked escaped
// the UPDATE of tokens), expired when the family has ended.
const tokenSelect = "SELECT t.hash, t.kind, t.user_id, t.team_id, t.family_id, t.client, t.created_at, " +
	"CASE WHEN f.expires_at < t.expires_at THEN f.expires_at ELSE t.expires_at END, t.used_at, " +
	"COALESCE(t.revoked_at, f.revoked_at) FROM tokens t LEFT JOIN token_families f ON f.id = t.family_id"

// CreateToken stores a new token.
func (s *Store) CreateToken(ctx context.Context, t Token) error {
	return s.createToken(ctx, s.db, t)
}

func (s *Store) createToken(ctx context.Context, db execer, t Token) error {
	_, err := db.ExecContext(ctx, s.rebind("INSERT INTO tokens ("+tokenColumns+") VALUES (?,?,?,?,?,?,?,?,?,?)"),
		t.Hash, cleanText(t.Kind), cleanText(t.UserID), cleanText(t.TeamID), cleanText(t.FamilyID), cleanText(t.Client),
		t.CreatedAt.UnixMilli(), t.ExpiresAt.UnixMilli(), millisOrNil(t.UsedAt), millisOrNil(t.RevokedAt))
	return err
}

// TokenByHash returns a token whatever its state (revoked, expired); the
// caller judges it. RevokedAt is set when its family was revoked, and
// ExpiresAt is no later than its family's end. IsNotFound(err) when there
// is none.
func (s *Store) TokenByHash(ctx context.Context, hash []byte) (Token, error) {
	return s.scanToken(s.db.QueryRowContext(ctx, s.rebind(tokenSelect+" WHERE t.hash = ?"), hash))
}

// UseRefreshToken marks a refresh token used at now and returns it, in
// one statement, so that of two replicas exchanging the same token only
// one succeeds. A token used before is returned with ErrTokenReused; one
// revoked, expired at now or not a refresh token gives ErrTokenInvalid;
// IsNotFound(err) when there is none.
//
// Deprecated: it marks the token used before its successors are stored,
// and does not look at its family; use RotateRefreshToken.
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

// RotateRefreshToken exchanges a refresh token for next (its successors,
// of its family), in one transaction: the token is marked used at now
// only if next is stored, so that a failure leaves it good for a retry.
// idpRefresh, when not nil, replaces the family's IdPRefresh.
//
// The token must be a refresh token, unrevoked and unexpired at now, of
// a family unrevoked and unexpired at now: ErrTokenInvalid otherwise,
// IsNotFound(err) when there is none. A token used before is returned
// with ErrTokenReused (the caller revokes its family), or with
// ErrTokenJustUsed when that use was less than RefreshGrace before now
// (the caller refuses, and revokes nothing). The old token is returned
// whatever the outcome, when it exists.
//
// The family's row is locked before the token's, in the order
// RevokeTokenFamily takes them: rotations and revocations of one family
// take turns without deadlocking, and a rotation's tokens are either
// seen by the revocation or refused after it.
func (s *Store) RotateRefreshToken(ctx context.Context, oldHash []byte, now time.Time, idpRefresh []byte, next ...Token) (old Token, err error) {
	ms := now.UnixMilli()
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if old, err = s.scanToken(tx.QueryRowContext(ctx, s.rebind(tokenSelect+" WHERE t.hash = ?"), oldHash)); err != nil {
			return err
		}
		var famRevoked sql.NullInt64
		var famExpires int64
		switch err := tx.QueryRowContext(ctx, s.rebind("SELECT revoked_at, expires_at FROM token_families WHERE id = ?"+s.forUpdate()),
			old.FamilyID).Scan(&famRevoked, &famExpires); {
		case IsNotFound(err):
			return ErrTokenInvalid // a token of no family cannot be rotated
		case err != nil:
			return err
		case famRevoked.Valid || famExpires <= ms:
			return ErrTokenInvalid
		}
		// The compare-and-set on the token: of two rotations at once, the
		// second waits for the first and finds the token used.
		res, err := tx.ExecContext(ctx, s.rebind("UPDATE tokens SET used_at = ? WHERE hash = ? AND kind = ? "+
			"AND used_at IS NULL AND revoked_at IS NULL AND expires_at > ?"), ms, oldHash, TokenRefresh, ms)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			// Read again: a rotation that came first has committed.
			if old, err = s.scanToken(tx.QueryRowContext(ctx, s.rebind(tokenSelect+" WHERE t.hash = ?"), oldHash)); err != nil {
				return err
			}
			return refusal(old, now)
		}
		t := now.UTC().Truncate(time.Millisecond)
		old.UsedAt = &t
		if idpRefresh != nil {
			if _, err := tx.ExecContext(ctx, s.rebind("UPDATE token_families SET idp_refresh = ? WHERE id = ?"),
				nilIfEmpty(idpRefresh), old.FamilyID); err != nil {
				return err
			}
		}
		return s.insertTokens(ctx, tx, old.FamilyID, next)
	})
	return old, err
}

// refusal says why a refresh token cannot be rotated at now.
func refusal(t Token, now time.Time) error {
	switch {
	case t.Kind != TokenRefresh || t.RevokedAt != nil:
		return ErrTokenInvalid
	case t.UsedAt != nil && now.Sub(*t.UsedAt) < RefreshGrace:
		return ErrTokenJustUsed
	case t.UsedAt != nil:
		return ErrTokenReused
	default: // expired
		return ErrTokenInvalid
	}
}

// forUpdate locks the rows a SELECT reads until the transaction ends;
// SQLite's write transactions hold the whole database.
func (s *Store) forUpdate() string {
	if s.dialect == Postgres {
		return " FOR UPDATE"
	}
	return ""
}

// RevokeTokenFamily revokes a sign-in, and every token of it not revoked
// yet, and returns how many tokens.
func (s *Store) RevokeTokenFamily(ctx context.Context, familyID string, now time.Time) (int64, error) {
	return s.revokeTokens(ctx, "id = ?", "family_id = ?", cleanText(familyID), now)
}

// RevokeUserTokens revokes every sign-in and every token of a user not
// revoked yet (signed out everywhere, disabled) and returns how many
// tokens.
func (s *Store) RevokeUserTokens(ctx context.Context, userID string, now time.Time) (int64, error) {
	return s.revokeTokens(ctx, "user_id = ?", "user_id = ?", cleanText(userID), now)
}

// revokeTokens revokes the families, then the tokens, in that order (see
// RotateRefreshToken).
func (s *Store) revokeTokens(ctx context.Context, families, tokens string, arg any, now time.Time) (n int64, err error) {
	ms := now.UnixMilli()
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, s.rebind("UPDATE token_families SET revoked_at = ? WHERE "+families+" AND revoked_at IS NULL"), ms, arg); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, s.rebind("UPDATE tokens SET revoked_at = ? WHERE "+tokens+" AND revoked_at IS NULL"), ms, arg)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

// DeleteExpiredTokens deletes the tokens that expired before before, with
// those of the sign-ins that ended before it, and returns how many; then
// those sign-ins. A used refresh token is kept until it expires, so that
// its reuse is recognised until then.
func (s *Store) DeleteExpiredTokens(ctx context.Context, before time.Time) (n int64, err error) {
	ms := before.UnixMilli()
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		// A token of a family ended goes with it: without its family it
		// would read as good until its own expiry.
		res, err := tx.ExecContext(ctx, s.rebind("DELETE FROM tokens WHERE expires_at < ? "+
			"OR family_id IN (SELECT id FROM token_families WHERE expires_at < ?)"), ms, ms)
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, s.rebind("DELETE FROM token_families WHERE expires_at < ?"), ms)
		return err
	})
	return n, err
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
