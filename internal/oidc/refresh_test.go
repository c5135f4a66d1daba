package oidc

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tollgate/tollgate/internal/oidc/oidctest"
	"golang.org/x/oauth2"
)

// signIn runs a browser sign-in and returns its Identity, with the IdP's
// refresh token.
func signIn(t *testing.T, p *Provider) Identity {
	t.Helper()
	verifier := oauth2.GenerateVerifier()
	code := authorize(t, p, "state", "nonce", verifier)
	id, err := p.Exchange(context.Background(), redirectURI, code, verifier, "nonce")
	if err != nil {
		t.Fatal(err)
	}
	if id.RefreshToken == "" {
		t.Fatal("Exchange gave no refresh token; the IdP advertises offline_access")
	}
	return id
}

func TestRefresh(t *testing.T) {
	moved := oidctest.User{Sub: "alice-sub", Email: "alice@example.com", Name: "Alice", Groups: []string{"eng", "ops"}}
	tests := []struct {
		name        string
		opts        []oidctest.Option
		change      func(*oidctest.IdP)
		want        []string // the groups refreshed
		wantReason  string   // ErrInvalidToken with this reason
		unavailable bool
		kept        bool // the IdP rotates no refresh token
	}{
		{name: "unchanged", want: []string{"eng"}},
		{name: "groups changed", change: func(i *oidctest.IdP) { i.SetUser(moved) }, want: []string{"eng", "ops"}},
		{
			name: "groups changed, no ID token", opts: []oidctest.Option{oidctest.NoRefreshIDToken()},
			change: func(i *oidctest.IdP) { i.SetUser(moved) }, want: []string{"eng", "ops"},
		},
		{
			name: "groups changed, in userinfo only", opts: []oidctest.Option{oidctest.GroupsInUserinfoOnly()},
			change: func(i *oidctest.IdP) { i.SetUser(moved) }, want: []string{"eng", "ops"},
		},
		{name: "no rotation", opts: []oidctest.Option{oidctest.NoRefreshRotation()}, want: []string{"eng"}, kept: true},
		{name: "refresh tokens revoked", change: (*oidctest.IdP).RevokeRefreshTokens, wantReason: reasonRevoked},
		{name: "user deleted", change: func(i *oidctest.IdP) { i.DeleteUser("alice-sub") }, wantReason: reasonRevoked},
		{name: "IdP down", change: func(i *oidctest.IdP) { i.SetDown(true) }, unavailable: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idp, p, clk := setup(t, nil, tt.opts...)
			first := signIn(t, p)
			clk.Advance(10 * time.Minute)
			if tt.change != nil {
				tt.change(idp)
			}
			id, err := p.Refresh(context.Background(), first.RefreshToken)
			switch {
			case tt.unavailable:
				if !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrInvalidToken) {
					t.Fatalf("Refresh: %v, want ErrUnavailable", err)
				}
				return
			case tt.wantReason != "":
				if !errors.Is(err, ErrInvalidToken) || Reason(err) != tt.wantReason {
					t.Fatalf("Refresh: %v (reason %q), want ErrInvalidToken with reason %q", err, Reason(err), tt.wantReason)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			want := Identity{Subject: "alice@example.com", Sub: "alice-sub", Email: "alice@example.com", Name: "Alice", Groups: tt.want, HasGroups: true,
				Issuer: idp.URL, Expiry: start.Add(10*time.Minute + time.Hour), RefreshToken: id.RefreshToken}
			if diff := cmp.Diff(want, id); diff != "" {
				t.Errorf("identity (-want +got):\n%s", diff)
			}
			if tt.kept {
				if id.RefreshToken != first.RefreshToken {
					t.Errorf("refresh token %q, want the old one kept", id.RefreshToken)
				}
				return
			}
			// The IdP rotated its refresh token: the new one is good once,
			// the old one no more.
			if id.RefreshToken == "" || id.RefreshToken == first.RefreshToken {
				t.Fatalf("refresh token %q, want a new one", id.RefreshToken)
			}
			if _, err := p.Refresh(context.Background(), first.RefreshToken); !errors.Is(err, ErrInvalidToken) || Reason(err) != reasonRevoked {
				t.Errorf("the old refresh token again: %v, want revoked", err)
			}
			if _, err := p.Refresh(context.Background(), id.RefreshToken); err != nil {
				t.Errorf("the new refresh token: %v", err)
			}
		})
	}
}

func TestRefreshRefusals(t *testing.T) {
	_, p, _ := setup(t, nil)
	if _, err := p.Refresh(context.Background(), ""); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("no refresh token: %v", err)
	}
	if _, err := p.Refresh(context.Background(), "made-up"); !errors.Is(err, ErrInvalidToken) || Reason(err) != reasonRevoked {
		t.Errorf("an unknown refresh token: %v, want revoked", err)
	}
	// A wrong client secret is the gateway's fault, not a revocation.
	idp, good, _ := setup(t, nil)
	first := signIn(t, good)
	bad, err := New(Config{Issuer: idp.URL, ClientID: idp.ClientID, ClientSecret: "wrong", Now: func() time.Time { return start }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bad.Refresh(context.Background(), first.RefreshToken); !errors.Is(err, ErrInvalidToken) || Reason(err) != reasonOther {
		t.Errorf("a wrong client secret: %v (reason %q), want ErrInvalidToken, reason other", err, Reason(err))
	}
}

// TestRefreshBounded: a token endpoint that never answers holds a
// refresh no longer than its context: ErrUnavailable when it ends.
func TestRefreshBounded(t *testing.T) {
	arrived := make(chan struct{}, 1)
	var holding atomic.Bool // once signed in
	hold := roundTripper(func(r *http.Request) (*http.Response, error) {
		if holding.Load() && strings.HasSuffix(r.URL.Path, "/token") {
			arrived <- struct{}{}
			<-r.Context().Done()
			return nil, r.Context().Err()
		}
		return http.DefaultTransport.RoundTrip(r)
	})
	_, p, _ := setup(t, func(c *Config) { c.HTTPClient = &http.Client{Transport: hold} })
	first := signIn(t, p)
	holding.Store(true)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-arrived
		cancel()
	}()
	if _, err := p.Refresh(ctx, first.RefreshToken); !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.Canceled) {
		t.Errorf("a refresh the IdP never answers: %v, want ErrUnavailable wrapping context.Canceled", err)
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
