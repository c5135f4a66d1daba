package oidc

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
)

// Identity is who a verified token says the user is.
type Identity struct {
	Subject string // the configured user claim's value (the email unless set otherwise)
	Sub     string // the token's sub
	Email   string
	Name    string
	Groups  []string
	// HasGroups is true when the token carries the groups claim at all (an
	// empty list included): a token without it says nothing of the
	// user's teams, which must then not change.
	HasGroups bool
	Issuer    string
	Expiry    time.Time
	// RefreshToken is the IdP's refresh token, from Exchange and Refresh
	// only; "" when the IdP gave none. It is a secret: store it sealed.
	RefreshToken string
}

// VerifyBearer verifies a JWT the IdP issued (an access token or an ID
// token) sent as a bearer token: its signature against the IdP's JWKS with
// an allowed algorithm, iss exactly, aud against Audiences, exp, nbf and
// iat with Leeway, and the user claim. Results, failures included, are
// cached by the token's SHA-256, a success until the token's exp.
func (p *Provider) VerifyBearer(ctx context.Context, raw string) (Identity, error) {
	if len(raw) > maxTokenBytes {
		return Identity{}, failf(reasonMalformed, "token too long")
	}
	key := tokenKey(raw)
	now := p.now()
	if e, ok := p.cache.get(key, now); ok {
		if e.err != nil {
			return Identity{}, e.err
		}
		id := e.id
		id.Groups = slices.Clone(id.Groups)
		return id, nil
	}
	claims, tok, err := p.verify(ctx, raw, p.cfg.Audiences, now)
	var id Identity
	if err == nil {
		id, err = p.identity(claims, tok)
	}
	if err != nil {
		if cacheable(err) && ctx.Err() == nil {
			p.cache.put(key, cacheEntry{err: err, until: now.Add(failureTTL)}, now)
		}
		return Identity{}, err
	}
	p.cache.put(key, cacheEntry{id: id, until: id.Expiry}, now)
	id.Groups = slices.Clone(id.Groups)
	return id, nil
}

// tokenBufs hold a token while it is hashed: []byte(raw) would copy it to
// the heap on every request.
var tokenBufs = sync.Pool{New: func() any { return new([maxTokenBytes]byte) }}

// tokenKey is the cache key of a token, its SHA-256.
func tokenKey(raw string) [sha256.Size]byte {
	buf := tokenBufs.Get().(*[maxTokenBytes]byte)
	n := copy(buf[:], raw)
	key := sha256.Sum256(buf[:n])
	tokenBufs.Put(buf)
	return key
}

// verify checks raw's signature, issuer, audience and times, and returns
// its claims.
func (p *Provider) verify(ctx context.Context, raw string, audiences []string, now time.Time) (map[string]any, *oidc.IDToken, error) {
	buf := headerBufs.Get().(*[maxHeaderBytes]byte)
	alg, ok := headerAlg(raw, buf)
	accepted := p.algs[alg]
	alg = strings.Clone(alg) // before buf goes back
	headerBufs.Put(buf)
	if !ok {
		return nil, nil, failf(reasonMalformed, "not a JWT")
	}
	if !accepted {
		return nil, nil, fail(reasonAlgorithm, fmt.Errorf("algorithm %q is not accepted", alg))
	}
	d, err := p.discover(ctx)
	if err != nil {
		return nil, nil, err
	}
	st := &verifyState{}
	tok, err := d.verifier.Verify(context.WithValue(ctx, verifyStateKey{}, st), raw)
	if err != nil {
		if st.err != nil {
			return nil, nil, st.err
		}
		if ctx.Err() != nil {
			return nil, nil, unavailable(ctx.Err())
		}
		return nil, nil, fail(reasonMalformed, err)
	}
	if tok.Issuer != p.cfg.Issuer {
		return nil, nil, fail(reasonIssuer, fmt.Errorf("iss %q, want %q", tok.Issuer, p.cfg.Issuer))
	}
	if !slices.ContainsFunc(tok.Audience, func(a string) bool { return slices.Contains(audiences, a) }) {
		return nil, nil, fail(reasonAudience, fmt.Errorf("aud %q, want one of %q", tok.Audience, audiences))
	}
	var payload json.RawMessage
	if err := tok.Claims(&payload); err != nil {
		return nil, nil, fail(reasonMalformed, err)
	}
	claims, err := decodeClaims(payload)
	if err != nil {
		return nil, nil, fail(reasonMalformed, err)
	}
	leeway := p.cfg.Leeway
	if tok.Expiry.IsZero() {
		return nil, nil, failf(reasonMissingClaim, "no exp")
	}
	if now.After(tok.Expiry.Add(leeway)) {
		return nil, nil, fail(reasonExpired, fmt.Errorf("expired at %s", tok.Expiry.UTC().Format(time.RFC3339)))
	}
	if nbf, ok := numericDate(claims["nbf"]); ok && now.Add(leeway).Before(nbf) {
		return nil, nil, fail(reasonNotYetValid, fmt.Errorf("not valid before %s", nbf.UTC().Format(time.RFC3339)))
	}
	if !tok.IssuedAt.IsZero() && now.Add(leeway).Before(tok.IssuedAt) {
		return nil, nil, fail(reasonNotYetValid, fmt.Errorf("issued in the future, at %s", tok.IssuedAt.UTC().Format(time.RFC3339)))
	}
	return claims, tok, nil
}

func decodeClaims(payload []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	var claims map[string]any
	if err := dec.Decode(&claims); err != nil {
		return nil, err
	}
	if claims == nil {
		return nil, fmt.Errorf("claims are not a JSON object")
	}
	return claims, nil
}

// numericDate reads a JWT NumericDate (seconds since the epoch, possibly
// fractional).
func numericDate(v any) (time.Time, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return time.Time{}, false
	}
	f, err := n.Float64()
	if err != nil {
		return time.Time{}, false
	}
	sec := math.Floor(f)
	return time.Unix(int64(sec), int64((f-sec)*1e9)), true
}

// identity reads the Identity from verified claims.
func (p *Provider) identity(claims map[string]any, tok *oidc.IDToken) (Identity, error) {
	v, _ := lookup(claims, p.cfg.UserClaim, p.userPtr)
	subject := claimString(v)
	if subject == "" {
		return Identity{}, fail(reasonMissingClaim, fmt.Errorf("no %q claim", p.cfg.UserClaim))
	}
	// An IdP that lets users set an email it has not verified would let
	// them claim someone else's.
	if p.cfg.UserClaim == "email" && emailUnverified(claims) {
		return Identity{}, failf(reasonMissingClaim, "email_verified is false")
	}
	groups, hasGroups := lookup(claims, p.cfg.GroupsClaim, p.groupPtr)
	return Identity{
		Subject:   subject,
		Sub:       tok.Subject,
		Email:     claimString(claims["email"]),
		Name:      claimString(claims["name"]),
		Groups:    claimStrings(groups),
		HasGroups: hasGroups,
		Issuer:    tok.Issuer,
		Expiry:    tok.Expiry,
	}, nil
}
