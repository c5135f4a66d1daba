package oidctest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

const redirect = "http://app.test/callback"

func config(i *IdP) *oauth2.Config {
	return &oauth2.Config{
		ClientID:     i.ClientID,
		ClientSecret: i.ClientSecret,
		RedirectURL:  redirect,
		Scopes:       []string{"openid", "email", "offline_access"},
		Endpoint:     oauth2.Endpoint{AuthURL: i.URL + "/authorize", TokenURL: i.URL + "/token"},
	}
}

var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// visit requests u as a browser would and returns where it is sent.
func visit(t *testing.T, u string) (*url.URL, int) {
	t.Helper()
	resp, err := noRedirects.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, _ := url.Parse(resp.Header.Get("Location"))
	return loc, resp.StatusCode
}

func TestAuthorizeRefuses(t *testing.T) {
	i := New(t)
	verifier := oauth2.GenerateVerifier()
	good := url.Values{
		"client_id":             {i.ClientID},
		"redirect_uri":          {redirect},
		"response_type":         {"code"},
		"scope":                 {"openid email"},
		"state":                 {"st"},
		"nonce":                 {"no"},
		"code_challenge":        {oauth2.S256ChallengeFromVerifier(verifier)},
		"code_challenge_method": {"S256"},
	}
	tests := []struct {
		name       string
		edit       func(url.Values)
		wantStatus int    // 400: answered here; 302: sent back
		wantError  string // the error sent back, "" for a code
	}{
		{"good", func(url.Values) {}, http.StatusFound, ""},
		{"unknown client", func(v url.Values) { v.Set("client_id", "x") }, http.StatusBadRequest, ""},
		{"no redirect_uri", func(v url.Values) { v.Del("redirect_uri") }, http.StatusBadRequest, ""},
		{"relative redirect_uri", func(v url.Values) { v.Set("redirect_uri", "/cb") }, http.StatusBadRequest, ""},
		{"implicit flow", func(v url.Values) { v.Set("response_type", "token") }, http.StatusFound, "unsupported_response_type"},
		{"no openid scope", func(v url.Values) { v.Set("scope", "email") }, http.StatusFound, "invalid_scope"},
		{"plain PKCE", func(v url.Values) { v.Set("code_challenge_method", "plain") }, http.StatusFound, "invalid_request"},
		{"no PKCE", func(v url.Values) { v.Del("code_challenge"); v.Del("code_challenge_method") }, http.StatusFound, "invalid_request"},
		{"no state", func(v url.Values) { v.Del("state") }, http.StatusFound, "invalid_request"},
		{"no nonce", func(v url.Values) { v.Del("nonce") }, http.StatusFound, "invalid_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := url.Values{}
			for k, s := range good {
				v[k] = append([]string(nil), s...)
			}
			tt.edit(v)
			loc, status := visit(t, i.URL+"/authorize?"+v.Encode())
			if status != tt.wantStatus {
				t.Fatalf("status %d, want %d", status, tt.wantStatus)
			}
			if status != http.StatusFound {
				return
			}
			if !strings.HasPrefix(loc.String(), redirect+"?") {
				t.Fatalf("sent to %s", loc)
			}
			q := loc.Query()
			if q.Get("error") != tt.wantError {
				t.Errorf("error %q (%s), want %q", q.Get("error"), q.Get("error_description"), tt.wantError)
			}
			if tt.wantError == "" && q.Get("code") == "" {
				t.Error("no code")
			}
			if q.Get("state") != v.Get("state") {
				t.Errorf("state %q, want %q", q.Get("state"), v.Get("state"))
			}
		})
	}
}

// signIn runs /authorize and returns the code.
func signIn(t *testing.T, i *IdP, c *oauth2.Config, verifier string) string {
	t.Helper()
	loc, status := visit(t, c.AuthCodeURL("st", oauth2.SetAuthURLParam("nonce", "n"), oauth2.S256ChallengeOption(verifier)))
	if status != http.StatusFound || loc.Query().Get("code") == "" {
		t.Fatalf("authorize: %d %s", status, loc)
	}
	return loc.Query().Get("code")
}

func TestTokenEndpoint(t *testing.T) {
	i := New(t)
	c := config(i)
	ctx := context.Background()
	verifier := oauth2.GenerateVerifier()

	code := signIn(t, i, c, verifier)
	if _, err := c.Exchange(ctx, code, oauth2.VerifierOption(oauth2.GenerateVerifier())); !isGrantError(err, "invalid_grant") {
		t.Errorf("wrong verifier: %v, want invalid_grant", err)
	}
	if _, err := c.Exchange(ctx, code, oauth2.VerifierOption(verifier)); !isGrantError(err, "invalid_grant") {
		t.Errorf("code used twice: %v, want invalid_grant", err)
	}

	code = signIn(t, i, c, verifier)
	other := *c
	other.RedirectURL = "http://app.test/elsewhere"
	if _, err := other.Exchange(ctx, code, oauth2.VerifierOption(verifier)); !isGrantError(err, "invalid_grant") {
		t.Errorf("other redirect_uri: %v, want invalid_grant", err)
	}

	code = signIn(t, i, c, verifier)
	wrong := *c
	wrong.ClientSecret = "nope"
	if _, err := wrong.Exchange(ctx, code, oauth2.VerifierOption(verifier)); !isGrantError(err, "invalid_client") {
		t.Errorf("wrong secret: %v, want invalid_client", err)
	}

	code = signIn(t, i, c, verifier)
	tok, err := c.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	if tok.Extra("id_token") == nil || tok.RefreshToken == "" || tok.AccessToken == "" {
		t.Fatalf("token response lacks a token: %+v", tok)
	}
	info := userinfo(t, i, tok.AccessToken)
	if info["email"] != "alice@example.com" || info["sub"] != "alice-sub" {
		t.Errorf("userinfo %v", info)
	}

	// Refresh tokens work once: each refresh hands out the next one.
	tok.Expiry = time.Unix(1, 0) // expired: the source refreshes
	next, err := c.TokenSource(ctx, tok).Token()
	if err != nil {
		t.Fatal(err)
	}
	if next.AccessToken == tok.AccessToken || next.RefreshToken == tok.RefreshToken {
		t.Error("refresh returned the same tokens")
	}
	if _, err := c.TokenSource(ctx, tok).Token(); !isGrantError(err, "invalid_grant") {
		t.Errorf("refresh token used twice: %v, want invalid_grant", err)
	}
}

func isGrantError(err error, code string) bool {
	var re *oauth2.RetrieveError
	return errors.As(err, &re) && re.ErrorCode == code
}

func userinfo(t *testing.T, i *IdP, token string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, i.URL+"/userinfo", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("userinfo: %s", resp.Status)
	}
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestUserinfoRefusesUnknownToken(t *testing.T) {
	i := New(t)
	req, _ := http.NewRequest(http.MethodGet, i.URL+"/userinfo", nil)
	req.Header.Set("Authorization", "Bearer "+i.Sign(map[string]any{"sub": "x"}))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("userinfo with a token it did not issue: %s", resp.Status)
	}
}

func TestWithHost(t *testing.T) {
	i := New(t, WithHost("localhost"))
	if !strings.HasPrefix(i.URL, "http://localhost:") {
		t.Fatalf("URL %s, want it on localhost", i.URL)
	}
	resp, err := http.Get(i.URL + "/.well-known/openid-configuration")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if doc["issuer"] != i.URL || doc["jwks_uri"] != i.URL+"/jwks" {
		t.Errorf("discovery document %v does not name %s", doc, i.URL)
	}
	if d, _ := i.Fetches(); d != 1 {
		t.Errorf("Fetches counted %d discovery fetches, want 1", d)
	}
}

// TestRefreshFollowsDirectory: a refresh gives tokens for the user as the
// directory has them now, and none once they are removed or their
// refresh tokens revoked.
func TestRefreshFollowsDirectory(t *testing.T) {
	i := New(t)
	c := config(i)
	ctx := context.Background()
	refresh := func(rt string) (*oauth2.Token, error) {
		return c.TokenSource(ctx, &oauth2.Token{RefreshToken: rt}).Token()
	}
	verifier := oauth2.GenerateVerifier()
	alice, err := c.Exchange(ctx, signIn(t, i, c, verifier), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	i.SetUser(User{Sub: "bob-sub", Email: "bob@example.com", Groups: []string{"sales"}})
	bob, err := c.Exchange(ctx, signIn(t, i, c, verifier), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}

	// Alice's groups change; Bob signing in since changes nothing of hers.
	i.SetUser(User{Sub: "alice-sub", Email: "alice@example.com", Groups: []string{"eng", "ops"}})
	next, err := refresh(alice.RefreshToken)
	if err != nil {
		t.Fatal(err)
	}
	if info := userinfo(t, i, next.AccessToken); info["sub"] != "alice-sub" || fmt.Sprint(info["groups"]) != "[eng ops]" {
		t.Errorf("refreshed userinfo %v, want alice in eng and ops", info)
	}

	i.DeleteUser("alice-sub")
	if _, err := refresh(next.RefreshToken); !isGrantError(err, "invalid_grant") {
		t.Errorf("a removed user's refresh: %v, want invalid_grant", err)
	}
	req, _ := http.NewRequest(http.MethodGet, i.URL+"/userinfo", nil)
	req.Header.Set("Authorization", "Bearer "+next.AccessToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a removed user's userinfo: %s, want 401", resp.Status)
	}

	i.RevokeRefreshTokens()
	if _, err := refresh(bob.RefreshToken); !isGrantError(err, "invalid_grant") {
		t.Errorf("a revoked refresh token: %v, want invalid_grant", err)
	}
}
