package store

import (
	"context"
	"time"
)

// LoginFlow is a browser sign-in in progress (OIDC authorisation code
// with PKCE), kept from the redirect to the IdP until its callback, which
// may reach another replica. It is taken once.
type LoginFlow struct {
	StateHash []byte // SHA-256 of the state parameter
	Nonce     string
	Verifier  string // the PKCE code verifier
	Purpose   string // what the sign-in is for: the console, a device code's approval, …
	UserCode  string // the device code being approved, "" for none
	Return    string // where to send the browser afterwards
	ExpiresAt time.Time
}

// PutLoginFlow stores a new flow.
func (s *Store) PutLoginFlow(ctx context.Context, f LoginFlow) error {
	_, err := s.db.ExecContext(ctx, s.rebind("INSERT INTO login_flows (state_hash, nonce, verifier, purpose, user_code, return_to, expires_at) "+
		"VALUES (?,?,?,?,?,?,?)"), f.StateHash, cleanText(f.Nonce), cleanText(f.Verifier), cleanText(f.Purpose), cleanText(f.UserCode),
		cleanText(f.Return), f.ExpiresAt.UnixMilli())
	return err
}

// TakeLoginFlow deletes the flow of a state and returns it: a state is
// good for one callback. IsNotFound(err) when there is none, or it had
// expired at now (it is deleted all the same).
func (s *Store) TakeLoginFlow(ctx context.Context, stateHash []byte, now time.Time) (LoginFlow, error) {
	var f LoginFlow
	var expires int64
	err := s.db.QueryRowContext(ctx, s.rebind("DELETE FROM login_flows WHERE state_hash = ? "+
		"RETURNING state_hash, nonce, verifier, purpose, user_code, return_to, expires_at"), stateHash).
		Scan(&f.StateHash, &f.Nonce, &f.Verifier, &f.Purpose, &f.UserCode, &f.Return, &expires)
	if err != nil {
		return LoginFlow{}, err
	}
	f.ExpiresAt = time.UnixMilli(expires).UTC()
	if !now.Before(f.ExpiresAt) {
		return LoginFlow{}, errNoRows
	}
	return f, nil
}
