// Package auth extracts and checks the credential a client presents: the
// configured master key, or a virtual key from the database, looked up
// through an in-memory cache.
package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"
)

// Errors returned by Check. The gateway renders them in the client's dialect.
var (
	ErrMissingKey    = errors.New("missing API key: send it in the x-api-key header or as Authorization: Bearer <key>")
	ErrBothKeys      = errors.New("send the API key in x-api-key or in Authorization: Bearer, not both")
	ErrMalformedAuth = errors.New("malformed Authorization header: expected \"Bearer <key>\"")
	ErrInvalidKey    = errors.New("invalid API key")
	ErrRevokedKey    = errors.New("this API key has been revoked")
	ErrExpiredKey    = errors.New("this API key has expired")
	// ErrUnavailable means the key could not be checked: the database is
	// unreachable and the key is not in the cache.
	ErrUnavailable = errors.New("API keys cannot be checked right now: the key database is unreachable")
)

// KeyFromRequest returns the key presented in x-api-key or in
// Authorization: Bearer. Presenting both is an error, even when they agree,
// so there is never doubt about which credential was used.
func KeyFromRequest(r *http.Request) (string, error) {
	xkey := r.Header.Get("X-Api-Key")
	authz := r.Header.Get("Authorization")
	switch {
	case xkey != "" && authz != "":
		return "", ErrBothKeys
	case xkey != "":
		return strings.TrimSpace(xkey), nil
	case authz == "":
		return "", ErrMissingKey
	}
	scheme, token, ok := strings.Cut(authz, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return "", ErrMalformedAuth
	}
	return strings.TrimSpace(token), nil
}

// Principal is who a request acts as: the master key, or a virtual key.
type Principal struct {
	// Master is true for the configured master key.
	Master bool
	// Key is the virtual key; nil for the master key.
	Key *Key
}

// KeyID is the virtual key's id, "" for the master key.
func (p Principal) KeyID() string {
	if p.Key == nil {
		return ""
	}
	return p.Key.ID
}

// Authenticator checks presented keys. It is safe for concurrent use.
type Authenticator struct {
	masterHash [sha256.Size]byte
	keys       *Cache // nil: the master key only
}

// New returns an Authenticator that accepts masterKey and, when keys is
// not nil, the virtual keys it finds.
func New(masterKey string, keys *Cache) *Authenticator {
	return &Authenticator{masterHash: sha256.Sum256([]byte(masterKey)), keys: keys}
}

// Check authenticates the request's key. The master key is compared by
// SHA-256 digest in constant time, so neither content nor length leaks by
// timing; virtual keys are found by the digest, which is all that is stored.
func (a *Authenticator) Check(r *http.Request) (Principal, error) {
	key, err := KeyFromRequest(r)
	if err != nil {
		return Principal{}, err
	}
	sum := sha256.Sum256([]byte(key))
	if subtle.ConstantTimeCompare(sum[:], a.masterHash[:]) == 1 {
		return Principal{Master: true}, nil
	}
	if a.keys == nil || !strings.HasPrefix(key, SecretPrefix) {
		return Principal{}, ErrInvalidKey
	}
	k, err := a.keys.Lookup(r.Context(), sum)
	if err != nil {
		return Principal{}, err
	}
	return Principal{Key: k}, nil
}

// Keys is the virtual-key cache, nil when there is none.
func (a *Authenticator) Keys() *Cache { return a.keys }
