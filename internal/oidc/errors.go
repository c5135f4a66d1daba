package oidc

import (
	"context"
	"errors"
)

var (
	// ErrInvalidToken matches every failure to verify a token or a sign-in.
	ErrInvalidToken = errors.New("oidc: invalid token")
	// ErrUnavailable matches a failure to reach the IdP (discovery, JWKS,
	// token or userinfo endpoint); it does not match ErrInvalidToken.
	ErrUnavailable = errors.New("oidc: identity provider unavailable")
)

// Reasons a verification fails, for logs and metrics; never shown to clients.
const (
	reasonExpired      = "expired"
	reasonNotYetValid  = "not_yet_valid"
	reasonIssuer       = "issuer"
	reasonAudience     = "audience"
	reasonSignature    = "signature"
	reasonAlgorithm    = "algorithm"
	reasonUnknownKey   = "unknown_key"
	reasonMalformed    = "malformed"
	reasonMissingClaim = "missing_claim"
	reasonUnavailable  = "unavailable"
	reasonRevoked      = "revoked"
	reasonOther        = "other"
)

type verifyError struct {
	reason string
	err    error
}

func (e *verifyError) Error() string { return "oidc: " + e.reason + ": " + e.err.Error() }
func (e *verifyError) Unwrap() error { return e.err }

func (e *verifyError) Is(target error) bool {
	if e.reason == reasonUnavailable {
		return target == ErrUnavailable
	}
	return target == ErrInvalidToken
}

func fail(reason string, err error) error { return &verifyError{reason: reason, err: err} }

func failf(reason, msg string) error { return fail(reason, errors.New(msg)) }

func unavailable(err error) error { return fail(reasonUnavailable, err) }

// Reason says why err failed a verification: expired, not_yet_valid,
// issuer, audience, signature, algorithm, unknown_key, malformed,
// missing_claim, unavailable, revoked (the IdP refused a refresh token)
// or other. It is for logs, not for clients.
func Reason(err error) string {
	var ve *verifyError
	if errors.As(err, &ve) {
		return ve.reason
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return reasonUnavailable
	}
	return reasonOther
}

// cacheable says whether a failure may be remembered for the token: not
// when the IdP could not be asked, which the next attempt may fix.
func cacheable(err error) bool {
	return Reason(err) != reasonUnavailable
}
