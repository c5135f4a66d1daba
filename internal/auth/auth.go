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

// Errors returned by Check. The gateway renders them in the client's
// dialect, with the status Status gives.
var (
	ErrMissingKey    = errors.New("missing API key: send it in the x-api-key header or as Authorization: Bearer <key>")
	ErrBothKeys      = errors.New("send the API key in x-api-key or in Authorization: Bearer, not both")
	ErrMalformedAuth = errors.New("malformed Authorization header: expected \"Bearer <key>\"")
	// ErrDuplicateKey is two x-api-key or two Authorization headers. It
	// matches ErrBothKeys too: either way more than one credential came.
	ErrDuplicateKey error = &duplicateError{}
	// ErrInvalidKey is every key that does not authenticate. Revoked and
	// expired keys are ErrRevokedKey and ErrExpiredKey, which match
	// ErrInvalidKey and say no more to the client than it does ("invalid
	// API key"), so that a stolen key's owner cannot learn its state;
	// Reason tells them apart for the log and the ledger.
	ErrInvalidKey       = errors.New("invalid API key")
	ErrRevokedKey error = &keyError{reason: "revoked"}
	ErrExpiredKey error = &keyError{reason: "expired"}
	// ErrUnavailable means the key could not be checked: the database is
	// unreachable and the key is not in the cache.
	ErrUnavailable = errors.New("API keys cannot be checked right now: the key database is unreachable")
	// ErrThrottled means the key failed to authenticate too often from
	// the client's address, or the address is slowed by its failures: the
	// request is refused without looking its key up. The error Check
	// returns is a *ThrottledError, which carries the retry-after.
	ErrThrottled = errors.New("too many failed authentications from this address; try again later")
)

// keyError is a key that exists but may not be used: to the client it is
// an invalid key like any other.
type keyError struct{ reason string }

func (e *keyError) Error() string        { return ErrInvalidKey.Error() }
func (e *keyError) Is(target error) bool { return target == ErrInvalidKey }

type duplicateError struct{}

func (*duplicateError) Error() string {
	return "send the API key once: the request has more than one x-api-key or Authorization header"
}
func (*duplicateError) Is(target error) bool { return target == ErrBothKeys }

// Status is the HTTP status for an error of Check: 400 for more than one
// credential, 429 for a throttled address, 503 when keys cannot be
// checked, 401 for everything else (missing, malformed or invalid keys).
func Status(err error) int {
	switch {
	case errors.Is(err, ErrBothKeys):
		return http.StatusBadRequest
	case errors.Is(err, ErrThrottled):
		return http.StatusTooManyRequests
	case errors.Is(err, ErrUnavailable):
		return http.StatusServiceUnavailable
	}
	return http.StatusUnauthorized
}

// Reason names why Check refused a request, for logs and the ledger, never
// for the client: missing, both_keys, duplicate_key, malformed, unknown_key,
// revoked, expired, throttled or unavailable ("" for nil, "other" for an
// error Check does not return).
func Reason(err error) string {
	var ke *keyError
	var se *signInError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &ke):
		return ke.reason
	case errors.As(err, &se):
		return se.reason
	case errors.Is(err, ErrInvalidKey):
		return "unknown_key"
	case errors.Is(err, ErrDuplicateKey):
		return "duplicate_key"
	case errors.Is(err, ErrBothKeys):
		return "both_keys"
	case errors.Is(err, ErrMissingKey):
		return "missing"
	case errors.Is(err, ErrMalformedAuth):
		return "malformed"
	case errors.Is(err, ErrThrottled):
		return "throttled"
	case errors.Is(err, ErrUnavailable):
		return "unavailable"
	}
	return "other"
}

// KeyFromRequest returns the key presented in x-api-key or in
// Authorization: Bearer (KeyFrom with the default places).
func KeyFromRequest(r *http.Request) (string, error) { return KeyFrom(r, Places{}) }

// Places are where a client protocol's requests may carry their key:
// Authorization: Bearer always, Headers that hold the key as it is (nil:
// X-Api-Key), and a query parameter (Query, "" none).
type Places struct {
	Headers []string
	Query   string
}

// defaultKeyHeaders are the key headers of Places without any.
var defaultKeyHeaders = []string{"X-Api-Key"}

// KeyFrom returns the key presented in one of the places. Presenting
// more than one, even when they agree, is an error, and so is presenting
// any of them twice, so there is never doubt about which credential was
// used.
func KeyFrom(r *http.Request, p Places) (string, error) {
	headers := p.Headers
	if headers == nil {
		headers = defaultKeyHeaders
	}
	var key, from string
	found := 0
	for _, h := range headers {
		vs := r.Header[h]
		if len(vs) > 1 {
			return "", ErrDuplicateKey
		}
		if len(vs) == 1 && vs[0] != "" {
			key, from = vs[0], h
			found++
		}
	}
	authzs := r.Header["Authorization"]
	if len(authzs) > 1 {
		return "", ErrDuplicateKey
	}
	authz := ""
	if len(authzs) == 1 {
		authz = authzs[0]
	}
	if authz != "" {
		found++
	}
	if p.Query != "" && r.URL.RawQuery != "" {
		switch vs := r.URL.Query()[p.Query]; {
		case len(vs) > 1:
			return "", ErrDuplicateKey
		case len(vs) == 1 && vs[0] != "":
			key, from = vs[0], "?"+p.Query
			found++
		}
	}
	switch {
	case found > 1:
		return "", p.both()
	case from != "":
		return strings.TrimSpace(key), nil
	case authz == "":
		return "", p.missing()
	}
	scheme, token, ok := strings.Cut(authz, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return "", ErrMalformedAuth
	}
	return strings.TrimSpace(token), nil
}

// missing is ErrMissingKey, saying where this protocol's key goes.
func (p Places) missing() error {
	if p.Headers == nil && p.Query == "" {
		return ErrMissingKey
	}
	var where []string
	for _, h := range p.Headers {
		where = append(where, "the "+strings.ToLower(h)+" header")
	}
	if p.Query != "" {
		where = append(where, "the "+p.Query+" query parameter")
	}
	where = append(where, "Authorization: Bearer <key>")
	return &missingError{"missing API key: send it in " + strings.Join(where[:len(where)-1], ", ") + " or as " + where[len(where)-1]}
}

// both is ErrBothKeys, naming this protocol's places.
func (p Places) both() error {
	if p.Headers == nil && p.Query == "" {
		return ErrBothKeys
	}
	return &bothError{}
}

// missingError is ErrMissingKey in other words.
type missingError struct{ msg string }

func (e *missingError) Error() string        { return e.msg }
func (e *missingError) Is(target error) bool { return target == ErrMissingKey }

// bothError is ErrBothKeys in other words.
type bothError struct{}

func (*bothError) Error() string {
	return "send the API key once: the request carries it in more than one place (header, query parameter, Authorization)"
}
func (*bothError) Is(target error) bool { return target == ErrBothKeys }

// Principal is who a request acts as: the master key, a virtual key, or
// a person signed in through the identity provider.
type Principal struct {
	// Master is true for the configured master key.
	Master bool
	// Key is the virtual key; nil for the master key and for a person's
	// sign-in token.
	Key *Key
	// Person is who the request is for: the signed-in user, or the owner
	// of the virtual key; nil for the master key and for keys no user owns.
	Person *Person
}

// KeyID is the virtual key's id, "" for the master key.
func (p Principal) KeyID() string {
	if p.Key == nil {
		return ""
	}
	return p.Key.ID
}

// AllowsModel reports whether the principal may call the model with this
// name and aliases: the master key may call every model. A model it may
// not call should be answered exactly as a model that does not exist, so
// that a key learns nothing of the models outside its list.
func (p Principal) AllowsModel(name string, aliases []string) bool {
	return (p.Key == nil || p.Key.AllowsModel(name, aliases)) && p.Person.AllowsModel(name, aliases)
}

// Authenticator checks presented keys. It is safe for concurrent use.
type Authenticator struct {
	masterHash [sha256.Size]byte
	keys       *Cache    // nil: the master key only
	throttle   *Throttle // nil: failures are not throttled
	people     People    // nil: no sign-in tokens, and keys have no owners
}

// Option configures an Authenticator.
type Option func(*Authenticator)

// WithThrottle refuses keys that failed to authenticate too often from a
// client's address, and slows addresses that fail too often (nil: no
// throttle).
func WithThrottle(t *Throttle) Option { return func(a *Authenticator) { a.throttle = t } }

// WithPeople accepts the credentials of people signed in through the
// identity provider, and resolves the owners of virtual keys.
func WithPeople(p People) Option { return func(a *Authenticator) { a.people = p } }

// New returns an Authenticator that accepts masterKey and, when keys is
// not nil, the virtual keys it finds.
func New(masterKey string, keys *Cache, opts ...Option) *Authenticator {
	a := &Authenticator{masterHash: sha256.Sum256([]byte(masterKey)), keys: keys}
	for _, o := range opts {
		o(a)
	}
	return a
}

// Check authenticates the request's key. The master key is compared by
// SHA-256 digest in constant time, so neither content nor length leaks by
// timing; virtual keys are found by the digest, which is all that is stored.
//
// With a throttle, a key that failed too often from the client's address,
// or any key from an address slowed by its failures that is not known
// valid, is refused with a *ThrottledError (ErrThrottled) before it is
// looked up (see Throttle), and every invalid key (ErrInvalidKey: unknown,
// revoked or expired) counts as a failure of the key and of the address.
func (a *Authenticator) Check(r *http.Request) (Principal, error) {
	return a.CheckFrom(r, Places{})
}

// CheckFrom is Check for a protocol whose keys come in other places.
func (a *Authenticator) CheckFrom(r *http.Request, p Places) (Principal, error) {
	key, err := KeyFrom(r, p)
	if err != nil {
		return Principal{}, err
	}
	return a.CheckKey(r, key)
}

// CheckKey is Check for a key given otherwise than in r's headers (the
// console's sign-in form): the same keys, throttle and errors.
func (a *Authenticator) CheckKey(r *http.Request, key string) (Principal, error) {
	sum := sha256.Sum256([]byte(key))
	t := a.throttle
	if t == nil {
		return a.checkKey(r, key, sum)
	}
	if t.refusing() {
		if err := t.Check(t.ClientAddr(r), CredentialOf(sum), a.knownValid(sum)); err != nil {
			return Principal{}, err
		}
	}
	p, err := a.checkKey(r, key, sum)
	if errors.Is(err, ErrInvalidKey) {
		t.Fail(t.ClientAddr(r), CredentialOf(sum))
	}
	return p, err
}

// knownValid reports whether the key with this digest is valid as far as
// memory tells: the master key, or a virtual key the cache holds.
func (a *Authenticator) knownValid(sum [sha256.Size]byte) bool {
	if subtle.ConstantTimeCompare(sum[:], a.masterHash[:]) == 1 {
		return true
	}
	return a.keys != nil && a.keys.holds(sum) || a.people != nil && a.people.Known(sum)
}

func (a *Authenticator) checkKey(r *http.Request, key string, sum [sha256.Size]byte) (Principal, error) {
	if key == "" {
		return Principal{}, ErrInvalidKey
	}
	if subtle.ConstantTimeCompare(sum[:], a.masterHash[:]) == 1 {
		return Principal{Master: true}, nil
	}
	if !strings.HasPrefix(key, SecretPrefix) {
		// Not a virtual key's shape: a person's token, or nothing. A token
		// is never looked up as a key, nor a key as a token.
		if a.people == nil || !a.people.Handles(key) {
			return Principal{}, ErrInvalidKey
		}
		p, err := a.people.Authenticate(r.Context(), key)
		if err != nil {
			return Principal{}, err
		}
		return Principal{Person: p}, nil
	}
	if a.keys == nil {
		return Principal{}, ErrInvalidKey
	}
	k, err := a.keys.Lookup(r.Context(), sum)
	if err != nil {
		return Principal{}, err
	}
	if k.UserID == "" || a.people == nil {
		return Principal{Key: k}, nil
	}
	p, err := a.people.Owner(r.Context(), k.UserID, k.TeamID)
	if err != nil {
		return Principal{}, err
	}
	return Principal{Key: k, Person: p}, nil
}
