package oidc

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// AuthCodeURL is where to send a browser to sign in: the IdP's
// authorization endpoint with the code flow, PKCE (S256 of verifier),
// state and nonce. The caller keeps state, nonce and verifier (in a
// short-lived cookie, say) for Exchange.
func (p *Provider) AuthCodeURL(ctx context.Context, redirectURI, state, nonce, verifier string) (string, error) {
	if state == "" || nonce == "" || verifier == "" {
		return "", errors.New("oidc: state, nonce and verifier are all required")
	}
	d, err := p.discover(ctx)
	if err != nil {
		return "", err
	}
	return p.oauth2(d, redirectURI).AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)), nil
}

func (p *Provider) oauth2(d *discovery, redirectURI string) *oauth2.Config {
	return &oauth2.Config{
		ClientID:     p.cfg.ClientID,
		ClientSecret: p.cfg.ClientSecret,
		Endpoint:     d.endpoint,
		RedirectURL:  redirectURI,
		Scopes:       p.scopes(d),
	}
}

// scopes are the configured scopes (with openid, without which there is no
// ID token), or the defaults: offline_access only when the IdP offers it,
// as some refuse a request for a scope they do not know.
func (p *Provider) scopes(d *discovery) []string {
	if len(p.cfg.Scopes) > 0 {
		if slices.Contains(p.cfg.Scopes, oidc.ScopeOpenID) {
			return p.cfg.Scopes
		}
		return append([]string{oidc.ScopeOpenID}, p.cfg.Scopes...)
	}
	s := []string{oidc.ScopeOpenID, "profile", "email"}
	if slices.Contains(d.scopes, oidc.ScopeOfflineAccess) {
		s = append(s, oidc.ScopeOfflineAccess)
	}
	return s
}

// Exchange finishes a sign-in: it redeems code (with the PKCE verifier)
// at the token endpoint and verifies the ID token that comes back (aud is
// the client id, nonce as sent, iss, algorithm). A false email_verified is
// refused. When the ID token lacks the user or groups claim, the userinfo
// endpoint's claims fill them in. Identity.RefreshToken is the IdP's
// refresh token, "" when it gave none (it gives one when offline_access
// was asked for, which the default scopes do when it is advertised).
func (p *Provider) Exchange(ctx context.Context, redirectURI, code, verifier, nonce string) (Identity, error) {
	if code == "" || verifier == "" || nonce == "" {
		return Identity{}, failf(reasonOther, "code, verifier and nonce are all required")
	}
	d, err := p.discover(ctx)
	if err != nil {
		return Identity{}, err
	}
	cctx := context.WithValue(ctx, oauth2.HTTPClient, p.cfg.HTTPClient)
	tok, err := p.oauth2(d, redirectURI).Exchange(cctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode < 500 {
			// The IdP refused the code: used, expired, or the
			// verifier or redirect URI does not match.
			return Identity{}, fail(reasonOther, fmt.Errorf("token endpoint: %w", err))
		}
		return Identity{}, unavailable(fmt.Errorf("token endpoint: %w", err))
	}
	rawID, _ := tok.Extra("id_token").(string)
	if rawID == "" {
		return Identity{}, failf(reasonMissingClaim, "token response has no id_token")
	}
	claims, idt, err := p.verifyIDToken(ctx, rawID, tok)
	if err != nil {
		return Identity{}, err
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(nonce)) != 1 {
		return Identity{}, failf(reasonOther, "nonce does not match")
	}
	return p.tokenIdentity(ctx, d, tok, claims, idt)
}

// verifyIDToken verifies an ID token from the token endpoint: signature,
// iss, aud (our client id), times, azp, and at_hash against the access
// token that came with it. The nonce is the caller's to check.
func (p *Provider) verifyIDToken(ctx context.Context, rawID string, tok *oauth2.Token) (map[string]any, *oidc.IDToken, error) {
	claims, idt, err := p.verify(ctx, rawID, []string{p.cfg.ClientID}, p.now())
	if err != nil {
		return nil, nil, err
	}
	// An ID token for several audiences names the one it was issued to
	// (OpenID Connect Core 1.0 §3.1.3.7): that must be us.
	if azp, ok := claims["azp"]; ok && claimString(azp) != p.cfg.ClientID {
		return nil, nil, fail(reasonAudience, fmt.Errorf("azp %q is not our client id", claimString(azp)))
	}
	if idt.AccessTokenHash != "" {
		if err := idt.VerifyAccessToken(tok.AccessToken); err != nil {
			return nil, nil, fail(reasonSignature, err)
		}
	}
	return claims, idt, nil
}

// tokenIdentity is the Identity of verified ID token claims, filled in
// from userinfo where they lack the user or groups claim, with the IdP's
// refresh token.
func (p *Provider) tokenIdentity(ctx context.Context, d *discovery, tok *oauth2.Token, claims map[string]any, idt *oidc.IDToken) (Identity, error) {
	if p.lacksClaims(claims) && d.userinfoURL != "" {
		if err := p.mergeUserInfo(ctx, d, tok, idt.Subject, claims); err != nil {
			return Identity{}, err
		}
	}
	if emailUnverified(claims) {
		return Identity{}, failf(reasonMissingClaim, "email_verified is false")
	}
	id, err := p.identity(claims, idt)
	if err != nil {
		return Identity{}, err
	}
	id.RefreshToken = tok.RefreshToken
	return id, nil
}

func (p *Provider) lacksClaims(claims map[string]any) bool {
	_, user := lookup(claims, p.cfg.UserClaim, p.userPtr)
	_, groups := lookup(claims, p.cfg.GroupsClaim, p.groupPtr)
	return !user || !groups
}

// mergeUserInfo adds to claims those the userinfo endpoint has and the ID
// token lacks. The userinfo sub must be the ID token's (OpenID Connect
// Core 1.0 §5.3.2), or its claims are someone else's.
func (p *Provider) mergeUserInfo(ctx context.Context, d *discovery, tok *oauth2.Token, sub string, claims map[string]any) error {
	extra, err := p.userInfo(ctx, d, tok)
	if err != nil {
		return err
	}
	if got := claimString(extra["sub"]); got != sub {
		return fail(reasonOther, fmt.Errorf("userinfo sub %q is not the ID token's %q", got, sub))
	}
	for k, v := range extra {
		if _, ok := claims[k]; !ok {
			claims[k] = v
		}
	}
	return nil
}

// userInfo fetches the userinfo endpoint's claims with tok's access token.
func (p *Provider) userInfo(ctx context.Context, d *discovery, tok *oauth2.Token) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	ui, err := d.op.UserInfo(p.client(ctx), oauth2.StaticTokenSource(tok))
	if err != nil {
		return nil, unavailable(fmt.Errorf("userinfo: %w", err))
	}
	var raw json.RawMessage
	if err := ui.Claims(&raw); err != nil {
		return nil, fail(reasonMalformed, fmt.Errorf("userinfo: %w", err))
	}
	claims, err := decodeClaims(raw)
	if err != nil {
		return nil, fail(reasonMalformed, fmt.Errorf("userinfo: %w", err))
	}
	return claims, nil
}
