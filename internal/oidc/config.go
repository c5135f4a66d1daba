package oidc

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Config is the relying party's side of an OpenID Connect provider, as
// tollgate's configuration gives it (identity.oidc).
type Config struct {
	Issuer       string
	ClientID     string
	ClientSecret string
	// UserClaim names the claim that identifies the user: "email" unless
	// set, else a top-level claim ("sub") or a JSON pointer ("/a/b").
	UserClaim string
	// GroupsClaim names the claim holding the user's groups, a string or an
	// array of strings: "groups" unless set; a JSON pointer is allowed.
	GroupsClaim string
	// Audiences are the aud values accepted on bearer JWTs the IdP issued;
	// [ClientID] unless set.
	Audiences []string
	// Scopes asked for at sign-in; openid, profile, email and (when the IdP
	// advertises it) offline_access unless set.
	Scopes []string
	// Algorithms are the signature algorithms accepted; RS256, RS384,
	// RS512, ES256, ES384 and PS256 unless set. Only asymmetric ones are
	// allowed: with "none" or HS* anyone holding the public key could mint
	// tokens.
	Algorithms []string
	// Leeway is the clock skew allowed on exp, nbf and iat; 60s unless set.
	Leeway time.Duration
	// HTTPClient makes discovery, JWKS, token and userinfo calls; nil is a
	// client with 5s timeouts. Response bodies are capped either way.
	HTTPClient *http.Client
	// Now is the clock; time.Now unless set.
	Now    func() time.Time
	Logger *slog.Logger
}

const (
	defaultUserClaim   = "email"
	defaultGroupsClaim = "groups"
	defaultLeeway      = 60 * time.Second
)

var defaultAlgorithms = []string{"RS256", "RS384", "RS512", "ES256", "ES384", "PS256"}

// allowedAlgorithms are those a configuration may name: the asymmetric
// JWS algorithms go-jose verifies.
var allowedAlgorithms = map[string]bool{
	"RS256": true, "RS384": true, "RS512": true,
	"ES256": true, "ES384": true, "ES512": true,
	"PS256": true, "PS384": true, "PS512": true,
	"EdDSA": true,
}

// Validate reports what is wrong with c, all of it at once.
func (c Config) Validate() error {
	var errs []error
	if c.Issuer == "" {
		errs = append(errs, errors.New("issuer is required"))
	} else if u, err := url.Parse(c.Issuer); err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		errs = append(errs, fmt.Errorf("issuer %q is not an http(s) URL", c.Issuer))
	} else if u.RawQuery != "" || u.Fragment != "" {
		errs = append(errs, fmt.Errorf("issuer %q must not have a query or fragment", c.Issuer))
	}
	if c.ClientID == "" {
		errs = append(errs, errors.New("client_id is required"))
	}
	for _, a := range c.Algorithms {
		switch {
		case strings.EqualFold(a, "none"):
			errs = append(errs, errors.New(`algorithm "none" is never accepted`))
		case strings.HasPrefix(strings.ToUpper(a), "HS"):
			errs = append(errs, fmt.Errorf("algorithm %q is symmetric: a token signed with the IdP's public key as the secret would pass", a))
		case !allowedAlgorithms[a]:
			errs = append(errs, fmt.Errorf("algorithm %q is not supported", a))
		}
	}
	for _, claim := range []string{c.UserClaim, c.GroupsClaim} {
		if claim == "/" {
			errs = append(errs, fmt.Errorf("claim pointer %q names no claim", claim))
		}
	}
	if slices.Contains(c.Audiences, "") {
		errs = append(errs, errors.New("audiences must not contain an empty string"))
	}
	if c.Leeway < 0 || c.Leeway > 10*time.Minute {
		errs = append(errs, fmt.Errorf("leeway %s is outside 0 to 10m", c.Leeway))
	}
	return errors.Join(errs...)
}

// withDefaults fills in what c leaves unset.
func (c Config) withDefaults() Config {
	if c.UserClaim == "" {
		c.UserClaim = defaultUserClaim
	}
	if c.GroupsClaim == "" {
		c.GroupsClaim = defaultGroupsClaim
	}
	if len(c.Audiences) == 0 {
		c.Audiences = []string{c.ClientID}
	}
	if len(c.Algorithms) == 0 {
		c.Algorithms = defaultAlgorithms
	}
	if c.Leeway == 0 {
		c.Leeway = defaultLeeway
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	c.HTTPClient = boundedClient(c.HTTPClient)
	return c
}
