package auth

import (
	"context"

	"github.com/tollgate/tollgate/internal/limit"
)

// Person is a user of the gateway, as a request sees them: signed in
// through the company's identity provider (an IdP-issued JWT or a token
// the gateway minted at sign-in), or the owner of the virtual key used.
// A person acts within one team: the team of their sign-in, or the key's.
type Person struct {
	UserID  string
	Subject string // the IdP's name for them (their email, by default)
	TeamID  string // "" when they belong to no team
	Team    string // the team's name, for messages

	// Limits are the user's own limits over the team's per-member
	// defaults; TeamLimits hold for the whole team.
	Limits     limit.Limits
	TeamLimits limit.Limits

	// teamModels and userModels hold the names and aliases the team's
	// list and the user's own allow; a model must be allowed by both, by
	// any of its names. nil allows every model.
	teamModels, userModels map[string]struct{}
	// Admin operates the console (a member of identity.oidc.admin_groups).
	Admin bool
}

// NewPerson returns a person who may call the models both lists allow (an
// empty list allows all).
func NewPerson(p Person, teamModels, userModels []string) *Person {
	if len(teamModels) > 0 {
		p.teamModels = toSet(teamModels)
	}
	if len(userModels) > 0 {
		p.userModels = toSet(userModels)
	}
	return &p
}

func toSet(names []string) map[string]struct{} {
	s := make(map[string]struct{}, len(names))
	for _, n := range names {
		s[n] = struct{}{}
	}
	return s
}

// AllowsModel reports whether the person may call the model with this name
// and aliases; a nil person may call every model.
func (p *Person) AllowsModel(name string, aliases []string) bool {
	return p == nil || allows(p.teamModels, name, aliases) && allows(p.userModels, name, aliases)
}

// allows reports whether a list allows a model by any of its names (a nil
// list allows all).
func allows(list map[string]struct{}, name string, aliases []string) bool {
	if list == nil {
		return true
	}
	if _, ok := list[name]; ok {
		return true
	}
	for _, a := range aliases {
		if _, ok := list[a]; ok {
			return true
		}
	}
	return false
}

// People resolves the credentials that are not the master key nor a
// virtual key (IdP-issued JWTs, tokens minted at sign-in), and the owners
// of virtual keys. Package identity implements it.
type People interface {
	// Handles reports whether credential has the shape of one of its
	// tokens: a credential it does not handle is never sent to it, and one
	// it handles is never looked up as a virtual key.
	Handles(credential string) bool
	// Authenticate returns the person a credential it handles names. Its
	// refusals match ErrInvalidKey (or ErrUnavailable when the IdP or the
	// database cannot be reached).
	Authenticate(ctx context.Context, credential string) (*Person, error)
	// Owner returns the person who owns a virtual key, acting in teamID
	// ("": their primary team). A user who no longer exists, or is
	// disabled, fails with ErrInvalidKey: their keys stop working.
	Owner(ctx context.Context, userID, teamID string) (*Person, error)
	// Known reports whether the credential with this digest authenticated
	// a person recently (as far as memory tells): the failed-auth throttle
	// lets it through from an address slowed by others' failures.
	Known(sum [32]byte) bool
}

// ErrSignInInvalid is a sign-in token or IdP token that does not
// authenticate. It matches ErrInvalidKey; the client learns only that its
// token is not valid, and the reason (SignInError) goes to the log.
var ErrSignInInvalid error = &signInError{reason: "invalid_token"}

// SignInError is a refused sign-in credential with its reason (expired,
// audience, disabled_user…), for the log and the ledger.
func SignInError(reason string) error { return &signInError{reason: reason} }

type signInError struct{ reason string }

func (e *signInError) Error() string {
	return "the sign-in token is not valid (expired, revoked, or not issued for this gateway); sign in again"
}
func (e *signInError) Is(target error) bool { return target == ErrInvalidKey }
