package oidc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// Refresh asks the IdP again who the user of a sign-in is: it redeems
// refreshToken (the IdP's, from Exchange or an earlier Refresh) at the
// token endpoint with the client's credentials. An ID token in the answer
// is verified as Exchange verifies one, without a nonce (OpenID Connect
// Core 1.0 §12.2); without one, the userinfo endpoint answers for the new
// access token. User and groups claims are read as Exchange reads them.
// Identity.RefreshToken is the IdP's new refresh token, or refreshToken
// when it rotates none.
//
// The caller checks that Identity.Subject is still the sign-in's user.
// A refusal of the token (invalid_grant: revoked, expired, the user
// removed) is ErrInvalidToken with Reason "revoked"; an IdP that cannot
// be reached or fails (5xx) is ErrUnavailable.
func (p *Provider) Refresh(ctx context.Context, refreshToken string) (Identity, error) {
	if refreshToken == "" {
		return Identity{}, failf(reasonOther, "no refresh token")
	}
	d, err := p.discover(ctx)
	if err != nil {
		return Identity{}, err
	}
	tok, err := p.redeemRefresh(ctx, d, refreshToken)
	if err != nil {
		return Identity{}, err
	}
	var id Identity
	if rawID, _ := tok.Extra("id_token").(string); rawID != "" {
		claims, idt, err := p.verifyIDToken(ctx, rawID, tok)
		if err != nil {
			return Identity{}, err
		}
		id, err = p.tokenIdentity(ctx, d, tok, claims, idt)
		if err != nil {
			return Identity{}, err
		}
	} else {
		if d.userinfoURL == "" {
			return Identity{}, failf(reasonMissingClaim, "the refresh gave no id_token, and the IdP has no userinfo endpoint")
		}
		claims, err := p.userInfo(ctx, d, tok)
		if err != nil {
			return Identity{}, err
		}
		sub := claimString(claims["sub"])
		if sub == "" {
			return Identity{}, failf(reasonMissingClaim, "userinfo has no sub")
		}
		if emailUnverified(claims) {
			return Identity{}, failf(reasonMissingClaim, "email_verified is false")
		}
		// The access token's lifetime stands for the ID token's, by our
		// clock (oauth2 reckons Expiry by the machine's).
		var expiry time.Time
		if tok.ExpiresIn > 0 {
			expiry = p.now().Add(time.Duration(tok.ExpiresIn) * time.Second)
		}
		if id, err = p.identity(claims, &oidc.IDToken{Issuer: p.cfg.Issuer, Subject: sub, Expiry: expiry}); err != nil {
			return Identity{}, err
		}
	}
	id.RefreshToken = tok.RefreshToken
	if id.RefreshToken == "" {
		id.RefreshToken = refreshToken
	}
	return id, nil
}

// redeemRefresh makes the refresh_token grant, bounded by fetchTimeout.
func (p *Provider) redeemRefresh(ctx context.Context, d *discovery, refreshToken string) (*oauth2.Token, error) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	cctx := context.WithValue(ctx, oauth2.HTTPClient, p.cfg.HTTPClient)
	tok, err := p.oauth2(d, "").TokenSource(cctx, &oauth2.Token{RefreshToken: refreshToken}).Token()
	if err == nil {
		return tok, nil
	}
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.Response == nil || re.Response.StatusCode >= 500 {
		return nil, unavailable(fmt.Errorf("token endpoint: %w", err))
	}
	if re.ErrorCode == "invalid_grant" {
		return nil, fail(reasonRevoked, fmt.Errorf("token endpoint: %w", err))
	}
	// invalid_client and the like: our configuration, not the user.
	return nil, fail(reasonOther, fmt.Errorf("token endpoint: %w", err))
}
