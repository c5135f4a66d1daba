// Package auth extracts and checks the credential a client presents.
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

// Principal is who a request acts as.
type Principal struct {
	// Master is true for the configured master key.
	Master bool
}

// Authenticator checks presented keys. It is safe for concurrent use.
type Authenticator struct {
	masterHash [sha256.Size]byte
}

// New returns an Authenticator that accepts masterKey.
func New(masterKey string) *Authenticator {
	return &Authenticator{masterHash: sha256.Sum256([]byte(masterKey))}
}

// Check authenticates the request's key. Keys are compared by SHA-256
// digest in constant time, so neither content nor length leaks by timing.
func (a *Authenticator) Check(r *http.Request) (Principal, error) {
	key, err := KeyFromRequest(r)
	if err != nil {
		return Principal{}, err
	}
	sum := sha256.Sum256([]byte(key))
	if subtle.ConstantTimeCompare(sum[:], a.masterHash[:]) == 1 {
		return Principal{Master: true}, nil
	}
	return Principal{}, ErrInvalidKey
}
