package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// TokenFamily is one sign-in: the tokens minted at it and at each
// rotation of its refresh token share its ID.
type TokenFamily struct {
	ID, UserID, TeamID, Client string
	// IdPRefresh is the IdP's refresh token, sealed by the caller; nil
	// when the IdP gave none.
	IdPRefresh []byte
	CreatedAt  time.Time
	// ExpiresAt is the absolute end of the sign-in: no token of the
	// family is good after it, however often it was refreshed.
	ExpiresAt time.Time
	RevokedAt *time.Time
}

const familyColumns = "id, user_id, team_id, client, idp_refresh, created_at, expires_at, revoked_at"

// CreateTokenFamily stores a new sign-in and its first tokens in one
// transaction. A token's FamilyID is f.ID when empty, and must be it
// otherwise.
func (s *Store) CreateTokenFamily(ctx context.Context, f TokenFamily, tokens ...Token) error {
	return s.inTx(ctx, func(tx *sql.Tx) error { return s.createFamily(ctx, tx, f, tokens) })
}

func (s *Store) createFamily(ctx context.Context, tx *sql.Tx, f TokenFamily, tokens []Token) error {
	if f.ID == "" {
		return errors.New("store: a token family needs an id")
	}
	if _, err := tx.ExecContext(ctx, s.rebind("INSERT INTO token_families ("+familyColumns+") VALUES (?,?,?,?,?,?,?,?)"),
		cleanText(f.ID), cleanText(f.UserID), cleanText(f.TeamID), cleanText(f.Client), nilIfEmpty(f.IdPRefresh),
		f.CreatedAt.UnixMilli(), f.ExpiresAt.UnixMilli(), millisOrNil(f.RevokedAt)); err != nil {
		return err
	}
	return s.insertTokens(ctx, tx, f.ID, tokens)
}

// TokenFamily returns a sign-in by its id; IsNotFound(err) when there is
// none.
func (s *Store) TokenFamily(ctx context.Context, id string) (TokenFamily, error) {
	return scanFamily(s.db.QueryRowContext(ctx, s.rebind("SELECT "+familyColumns+" FROM token_families WHERE id = ?"), cleanText(id)))
}

// insertTokens stores tokens of family: a token without a FamilyID gets
// family's, one with another is refused.
func (s *Store) insertTokens(ctx context.Context, tx *sql.Tx, family string, tokens []Token) error {
	for _, t := range tokens {
		if t.FamilyID == "" {
			t.FamilyID = family
		} else if t.FamilyID != family {
			return fmt.Errorf("store: a token of family %q given to family %q", t.FamilyID, family)
		}
		if err := s.createToken(ctx, tx, t); err != nil {
			return err
		}
	}
	return nil
}

func scanFamily(row *sql.Row) (TokenFamily, error) {
	var f TokenFamily
	var created, expires int64
	var revoked sql.NullInt64
	if err := row.Scan(&f.ID, &f.UserID, &f.TeamID, &f.Client, &f.IdPRefresh, &created, &expires, &revoked); err != nil {
		return TokenFamily{}, err
	}
	if len(f.IdPRefresh) == 0 {
		f.IdPRefresh = nil
	}
	f.CreatedAt, f.ExpiresAt = time.UnixMilli(created).UTC(), time.UnixMilli(expires).UTC()
	f.RevokedAt = timeOrNil(revoked)
	return f, nil
}

// nilIfEmpty stores an empty byte slice as NULL.
func nilIfEmpty(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return b
}
