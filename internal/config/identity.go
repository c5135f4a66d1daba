package config

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"
)

// Identity configures people: users and teams, sign-in through an OpenID
// Connect provider, and Claude Code's gateway sign-in. Without OIDC the
// gateway knows only the master key and virtual keys; teams may still be
// configured, for keys and users made through the admin API.
type Identity struct {
	// PublicURL is the gateway's own address as browsers and clients reach
	// it (https://gw.example.com): the base of the sign-in redirects and
	// of what the OAuth discovery document advertises. Unset, each request's
	// own scheme and Host are used; set it behind a proxy that rewrites Host.
	PublicURL string       `yaml:"public_url"`
	OIDC      *OIDC        `yaml:"oidc"`
	Teams     []Team       `yaml:"teams"`
	Tokens    SignInTokens `yaml:"tokens"`
}

// OIDC is the company's identity provider.
type OIDC struct {
	// Issuer is the IdP's issuer URL; its discovery document and JWKS are
	// fetched from it (cached, refetched on an unknown key id).
	Issuer       string `yaml:"issuer"`
	ClientID     string `yaml:"client_id"`
	ClientSecret string `yaml:"client_secret"`
	// UserClaim names the user (default email, else e.g. sub); GroupsClaim
	// holds the groups that map users to teams (default groups). Either
	// may be a JSON pointer (/realm_access/roles).
	UserClaim   string `yaml:"user_claim"`
	GroupsClaim string `yaml:"groups_claim"`
	// AdminGroups are the groups whose members operate the console.
	AdminGroups []string `yaml:"admin_groups"`
	// Audiences are the `aud` values accepted on IdP-issued bearer JWTs
	// (default: client_id).
	Audiences []string `yaml:"audiences"`
	// Scopes asked for at sign-in (default openid profile email, and
	// offline_access when the IdP offers it).
	Scopes []string `yaml:"scopes"`
	// Algorithms allowed on IdP tokens (default RS256, RS384, RS512,
	// ES256, ES384, PS256). none and HS* are refused.
	Algorithms []string `yaml:"algorithms"`
}

// Team is a team created or updated at start and on reload.
type Team struct {
	Name      string   `yaml:"name"`
	IDPGroups []string `yaml:"idp_groups"`
	// Models the team's members may call (names or aliases); empty: all.
	Models []string `yaml:"models"`
	// Limits hold for the whole team; MemberLimits for each member, where
	// the member's own limits leave a field unset.
	Limits       LimitValues `yaml:"limits"`
	MemberLimits LimitValues `yaml:"member_limits"`
	ClaudeCode   ClaudeCode  `yaml:"claude_code"`
}

// ClaudeCode is what Claude Code's gateway sign-in delivers to a team's
// members.
type ClaudeCode struct {
	// ManagedSettings is a managed-settings.json document, served at
	// /managed/settings.
	ManagedSettings map[string]any `yaml:"managed_settings"`
}

// SignInTokens are the lifetimes of the tokens the gateway mints at sign-in.
type SignInTokens struct {
	// AccessTTL is an access token's life (default 10m): how long a
	// removed user keeps access at most. RefreshTTL is a refresh token's
	// (default 720h); each use rotates it.
	AccessTTL  time.Duration `yaml:"access_ttl"`
	RefreshTTL time.Duration `yaml:"refresh_ttl"`
	// ConsoleTTL is a console session's life after SSO (default 12h).
	ConsoleTTL time.Duration `yaml:"console_ttl"`
}

// Identity defaults.
const (
	DefaultAccessTTL  = 10 * time.Minute
	DefaultRefreshTTL = 30 * 24 * time.Hour
	DefaultConsoleTTL = 12 * time.Hour
)

func (c *Config) applyIdentityDefaults() {
	t := &c.Identity.Tokens
	if t.AccessTTL == 0 {
		t.AccessTTL = DefaultAccessTTL
	}
	if t.RefreshTTL == 0 {
		t.RefreshTTL = DefaultRefreshTTL
	}
	if t.ConsoleTTL == 0 {
		t.ConsoleTTL = DefaultConsoleTTL
	}
	if o := c.Identity.OIDC; o != nil {
		if o.UserClaim == "" {
			o.UserClaim = "email"
		}
		if o.GroupsClaim == "" {
			o.GroupsClaim = "groups"
		}
		if len(o.Audiences) == 0 && o.ClientID != "" {
			o.Audiences = []string{o.ClientID}
		}
	}
}

func (c *Config) validateIdentity(bad func(path, format string, args ...any)) {
	id := &c.Identity
	if id.OIDC != nil {
		o := id.OIDC
		if c.Database.URL == NoDatabase {
			bad("identity.oidc", "needs a database (users, teams and sign-in tokens are kept there); set database.url")
		}
		if err := checkIdentityURL(o.Issuer); err != nil {
			bad("identity.oidc.issuer", "%v", err)
		}
		if o.ClientID == "" {
			bad("identity.oidc.client_id", "is required")
		}
		for i, a := range o.Algorithms {
			if u := strings.ToUpper(a); u == "NONE" || strings.HasPrefix(u, "HS") {
				bad(fmt.Sprintf("identity.oidc.algorithms[%d]", i), "%q is not allowed: IdP tokens must be signed with the IdP's private key (RS*, ES*, PS*)", a)
			}
		}
	}
	if id.PublicURL != "" {
		if err := checkIdentityURL(id.PublicURL); err != nil {
			bad("identity.public_url", "%v", err)
		}
	}
	for name, d := range map[string]time.Duration{"access_ttl": id.Tokens.AccessTTL, "refresh_ttl": id.Tokens.RefreshTTL, "console_ttl": id.Tokens.ConsoleTTL} {
		if d < 0 {
			bad("identity.tokens."+name, "must not be negative")
		}
	}
	if a, r := id.Tokens.AccessTTL, id.Tokens.RefreshTTL; a > 0 && r > 0 && r < a {
		bad("identity.tokens.refresh_ttl", "%s is shorter than access_ttl (%s)", r, a)
	}
	seen := map[string]bool{}
	for i, t := range id.Teams {
		path := fmt.Sprintf("identity.teams[%d]", i)
		switch {
		case t.Name == "":
			bad(path+".name", "is required")
		case seen[t.Name]:
			bad(path+".name", "%q is configured twice", t.Name)
		}
		seen[t.Name] = true
		if _, err := t.Limits.Limit(); err != nil {
			bad(path+".limits", "%v", err)
		}
		if _, err := t.MemberLimits.Limit(); err != nil {
			bad(path+".member_limits", "%v", err)
		}
	}
}

// checkIdentityURL accepts https URLs, and http ones on loopback only (a
// gateway or IdP on the same machine).
func checkIdentityURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%q is not an absolute URL (https://host[/path])", s)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		h := u.Hostname()
		if ip := net.ParseIP(h); h == "localhost" || ip != nil && ip.IsLoopback() {
			return nil
		}
		return fmt.Errorf("%q: http is allowed only on loopback (localhost, 127.0.0.1, [::1]); use https", s)
	}
	return fmt.Errorf("%q: want an https URL", s)
}
