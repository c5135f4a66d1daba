package oidc

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tollgate/tollgate/internal/oidc/oidctest"
	"golang.org/x/oauth2"
)

const redirectURI = "http://gateway.test/auth/callback"

// authorize sends a browser's request to the URL AuthCodeURL gives and
// returns the code and state the IdP redirects back with.
func authorize(t *testing.T, p *Provider, state, nonce, verifier string) (code string) {
	t.Helper()
	u, err := p.AuthCodeURL(context.Background(), redirectURI, state, nonce, verifier)
	if err != nil {
		t.Fatal(err)
	}
	browser := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := browser.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("authorize: %s", resp.Status)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(loc.String(), redirectURI+"?") {
		t.Fatalf("redirected to %s, want %s", loc, redirectURI)
	}
	if got := loc.Query().Get("state"); got != state {
		t.Fatalf("state %q came back as %q", state, got)
	}
	if e := loc.Query().Get("error"); e != "" {
		t.Fatalf("authorize: %s: %s", e, loc.Query().Get("error_description"))
	}
	return loc.Query().Get("code")
}

func TestAuthCodeURL(t *testing.T) {
	_, p, _ := setup(t, nil)
	u, err := p.AuthCodeURL(context.Background(), redirectURI, "st", "no", "verifier-verifier-verifier-verifier-verifier")
	if err != nil {
		t.Fatal(err)
	}
	q, _ := url.Parse(u)
	want := map[string]string{
		"response_type":         "code",
		"client_id":             "tollgate-test",
		"redirect_uri":          redirectURI,
		"state":                 "st",
		"nonce":                 "no",
		"code_challenge_method": "S256",
		"code_challenge":        oauth2.S256ChallengeFromVerifier("verifier-verifier-verifier-verifier-verifier"),
		// The fake advertises offline_access.
		"scope": "openid profile email offline_access",
	}
	for k, v := range want {
		if got := q.Query().Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if _, err := p.AuthCodeURL(context.Background(), redirectURI, "st", "", "v"); err == nil {
		t.Error("AuthCodeURL without a nonce succeeded")
	}
}

func TestScopes(t *testing.T) {
	_, p, _ := setup(t, func(c *Config) { c.Scopes = []string{"email", "groups"} })
	u, err := p.AuthCodeURL(context.Background(), redirectURI, "s", "n", "v")
	if err != nil {
		t.Fatal(err)
	}
	q, _ := url.Parse(u)
	if got := q.Query().Get("scope"); got != "openid email groups" {
		t.Errorf("scope %q, want openid added to the configured ones", got)
	}
}

func TestExchange(t *testing.T) {
	f := false
	tests := []struct {
		name       string
		opts       []oidctest.Option
		user       *oidctest.User
		nonce      string // given to Exchange; "" is the one sent
		verifier   string // given to Exchange; "" is the one sent
		want       Identity
		wantReason string
		wantGrant  string // the token endpoint's error, when it refuses
	}{
		{name: "good", want: Identity{Subject: "alice@example.com", Sub: "alice-sub", Email: "alice@example.com", Name: "Alice", Groups: []string{"eng"}, HasGroups: true}},
		{name: "nonce does not match", nonce: "another-nonce", wantReason: reasonOther},
		{name: "PKCE verifier does not match", verifier: oauth2.GenerateVerifier(), wantReason: reasonOther, wantGrant: "invalid_grant"},
		{name: "issued to another client", opts: []oidctest.Option{oidctest.WithIDTokenClaims(map[string]any{"aud": []string{"tollgate-test", "other"}, "azp": "other"})}, wantReason: reasonAudience},
		{name: "ID token for another audience", opts: []oidctest.Option{oidctest.WithIDTokenClaims(map[string]any{"aud": "tollgate"})}, wantReason: reasonAudience},
		{name: "email not verified", user: &oidctest.User{Sub: "m", Email: "mallory@example.com", EmailVerified: &f}, wantReason: reasonMissingClaim},
		{
			name: "groups from userinfo", opts: []oidctest.Option{oidctest.GroupsInUserinfoOnly()},
			want: Identity{Subject: "alice@example.com", Sub: "alice-sub", Email: "alice@example.com", Name: "Alice", Groups: []string{"eng"}, HasGroups: true},
		},
		{
			name: "client_secret_post only", opts: []oidctest.Option{oidctest.WithAuthMethods("client_secret_post")},
			want: Identity{Subject: "alice@example.com", Sub: "alice-sub", Email: "alice@example.com", Name: "Alice", Groups: []string{"eng"}, HasGroups: true},
		},
		{
			name: "client_secret_basic only", opts: []oidctest.Option{oidctest.WithAuthMethods("client_secret_basic")},
			want: Identity{Subject: "alice@example.com", Sub: "alice-sub", Email: "alice@example.com", Name: "Alice", Groups: []string{"eng"}, HasGroups: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idp, p, _ := setup(t, nil, tt.opts...)
			if tt.user != nil {
				idp.SetUser(*tt.user)
			}
			nonce, verifier := "nonce-"+tt.name, oauth2.GenerateVerifier()
			code := authorize(t, p, "state-1", nonce, verifier)
			if tt.nonce != "" {
				nonce = tt.nonce
			}
			if tt.verifier != "" {
				verifier = tt.verifier
			}
			id, err := p.Exchange(context.Background(), redirectURI, code, verifier, nonce)
			if tt.wantReason != "" {
				if !errors.Is(err, ErrInvalidToken) || Reason(err) != tt.wantReason {
					t.Fatalf("Exchange: %v (reason %q), want ErrInvalidToken with reason %q", err, Reason(err), tt.wantReason)
				}
				var re *oauth2.RetrieveError
				if tt.wantGrant != "" && (!errors.As(err, &re) || re.ErrorCode != tt.wantGrant) {
					t.Errorf("the token endpoint did not refuse with %s: %v", tt.wantGrant, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.want.Issuer = idp.URL
			tt.want.Expiry = start.Add(time.Hour)
			if id.RefreshToken == "" {
				t.Error("no refresh token, although offline_access was asked for")
			}
			tt.want.RefreshToken = id.RefreshToken
			if diff := cmp.Diff(tt.want, id); diff != "" {
				t.Errorf("identity (-want +got):\n%s", diff)
			}
			// A code is good once.
			if _, err := p.Exchange(context.Background(), redirectURI, code, verifier, nonce); !errors.Is(err, ErrInvalidToken) {
				t.Errorf("second exchange of a code: %v, want ErrInvalidToken", err)
			}
		})
	}
}

func TestExchangeWrongClientSecret(t *testing.T) {
	_, p, _ := setup(t, func(c *Config) { c.ClientSecret = "wrong" })
	verifier := oauth2.GenerateVerifier()
	code := authorize(t, p, "s", "n", verifier)
	_, err := p.Exchange(context.Background(), redirectURI, code, verifier, "n")
	var re *oauth2.RetrieveError
	if !errors.Is(err, ErrInvalidToken) || !errors.As(err, &re) || re.ErrorCode != "invalid_client" {
		t.Fatalf("wrong secret: %v, want the IdP's invalid_client", err)
	}
}

func TestExchangeIdPDown(t *testing.T) {
	idp, p, _ := setup(t, nil)
	verifier := oauth2.GenerateVerifier()
	code := authorize(t, p, "s", "n", verifier)
	idp.SetDown(true)
	_, err := p.Exchange(context.Background(), redirectURI, code, verifier, "n")
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("IdP down at the exchange: %v, want ErrUnavailable", err)
	}
}
