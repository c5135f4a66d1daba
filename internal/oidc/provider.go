// Package oidc is tollgate's OpenID Connect relying party: it verifies
// JWTs an identity provider issued (sent as bearer tokens) and signs
// browsers in with the authorization code flow. It knows nothing of
// users, teams or storage: it turns a token into an Identity.
package oidc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"
	"golang.org/x/oauth2"
)

const (
	// keysRefetch spaces JWKS fetches caused by an unknown key id.
	keysRefetch = 10 * time.Second
	// retryAfterFailure spaces attempts while the IdP cannot be reached.
	retryAfterFailure = 2 * time.Second
)

// Provider is one configured IdP. Discovery is lazy: New fetches nothing,
// so tollgate starts while the IdP is briefly down, and the first request
// that needs the IdP fetches (and caches) its discovery document.
type Provider struct {
	cfg      Config
	algs     map[string]bool
	joseAlgs []jose.SignatureAlgorithm
	userPtr  []string // nil for a top-level claim
	groupPtr []string

	disc  fetched[*discovery]
	keys  *keySet
	cache *tokenCache

	verifications atomic.Int64 // signature checks made, for tests
}

// discovery is what the IdP's discovery document says, with what is built
// from it.
type discovery struct {
	op          *oidc.Provider
	endpoint    oauth2.Endpoint
	jwksURL     string
	userinfoURL string
	scopes      []string // scopes_supported
	verifier    *oidc.IDTokenVerifier
}

// New checks cfg and returns a Provider; it does not contact the IdP.
func New(cfg Config) (*Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("oidc: %w", err)
	}
	cfg = cfg.withDefaults()
	p := &Provider{
		cfg:      cfg,
		algs:     make(map[string]bool, len(cfg.Algorithms)),
		userPtr:  pointer(cfg.UserClaim),
		groupPtr: pointer(cfg.GroupsClaim),
		disc:     fetched[*discovery]{retry: retryAfterFailure},
		cache:    newTokenCache(maxCachedTokens),
	}
	for _, a := range cfg.Algorithms {
		p.algs[a] = true
		p.joseAlgs = append(p.joseAlgs, jose.SignatureAlgorithm(a))
	}
	p.keys = &keySet{p: p, f: fetched[map[string][]jose.JSONWebKey]{refetch: keysRefetch, retry: retryAfterFailure}}
	return p, nil
}

func (p *Provider) now() time.Time { return p.cfg.Now() }

// client puts the bounded HTTP client where go-oidc and oauth2 look for it.
func (p *Provider) client(ctx context.Context) context.Context {
	return oidc.ClientContext(ctx, p.cfg.HTTPClient)
}

// discover returns the discovery document, fetching it if need be.
func (p *Provider) discover(ctx context.Context) (*discovery, error) {
	d, err := p.disc.get(ctx, p.now, nil, p.fetchDiscovery)
	if err != nil {
		return nil, unavailable(err)
	}
	return d, nil
}

func (p *Provider) fetchDiscovery(ctx context.Context) (*discovery, error) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	// go-oidc compares the document's issuer with ours, exactly.
	op, err := oidc.NewProvider(p.client(ctx), p.cfg.Issuer)
	if err != nil {
		p.cfg.Logger.Warn("oidc discovery failed", "issuer", p.cfg.Issuer, "error", err)
		return nil, fmt.Errorf("discovery: %w", err)
	}
	var meta struct {
		JWKSURL     string   `json:"jwks_uri"`
		Scopes      []string `json:"scopes_supported"`
		AuthMethods []string `json:"token_endpoint_auth_methods_supported"`
	}
	if err := op.Claims(&meta); err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	if meta.JWKSURL == "" {
		return nil, errors.New("discovery: no jwks_uri")
	}
	d := &discovery{
		op:          op,
		endpoint:    op.Endpoint(),
		jwksURL:     meta.JWKSURL,
		userinfoURL: op.UserInfoEndpoint(),
		scopes:      meta.Scopes,
	}
	// The default method is client_secret_basic (OpenID Connect Discovery
	// 1.0 §3); use the form body only when the IdP does not take Basic.
	d.endpoint.AuthStyle = oauth2.AuthStyleInHeader
	if len(meta.AuthMethods) > 0 && !slices.Contains(meta.AuthMethods, "client_secret_basic") &&
		slices.Contains(meta.AuthMethods, "client_secret_post") {
		d.endpoint.AuthStyle = oauth2.AuthStyleInParams
	}
	// go-oidc parses the JWS (with our algorithm list) and its standard
	// claims; issuer, audience and times are checked here, with leeway,
	// and the signature by keySet, which spaces its fetches.
	d.verifier = oidc.NewVerifier(p.cfg.Issuer, p.keys, &oidc.Config{
		SkipClientIDCheck:    true,
		SkipExpiryCheck:      true,
		SkipIssuerCheck:      true,
		SupportedSigningAlgs: p.cfg.Algorithms,
	})
	p.cfg.Logger.Info("oidc discovery", "issuer", p.cfg.Issuer, "jwks_uri", meta.JWKSURL)
	return d, nil
}
