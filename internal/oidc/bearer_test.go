package oidc

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tollgate/tollgate/internal/oidc/oidctest"
)

func TestVerifyBearerAccepts(t *testing.T) {
	idp, p, _ := setup(t, nil)
	id, err := verify(t, p, idp.Token("tollgate", time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := Identity{
		Subject:   "alice@example.com",
		Sub:       "alice-sub",
		Email:     "alice@example.com",
		Name:      "Alice",
		Groups:    []string{"eng"},
		HasGroups: true,
		Issuer:    idp.URL,
		Expiry:    start.Add(time.Hour),
	}
	if diff := cmp.Diff(want, id); diff != "" {
		t.Errorf("identity (-want +got):\n%s", diff)
	}
}

func publicPEM(t *testing.T, pub *rsa.PublicKey) []byte {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

func TestVerifyBearerRejects(t *testing.T) {
	idp, p, _ := setup(t, func(c *Config) { c.Algorithms = []string{"RS256", "ES256"} })
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	// claims are a valid token's claims changed by edit.
	claims := func(edit func(map[string]any)) map[string]any {
		c := idp.Claims("tollgate", time.Hour)
		if edit != nil {
			edit(c)
		}
		return c
	}
	set := func(k string, v any) func(map[string]any) { return func(c map[string]any) { c[k] = v } }
	del := func(k string) func(map[string]any) { return func(c map[string]any) { delete(c, k) } }
	unix := func(d time.Duration) int64 { return start.Add(d).Unix() }

	tests := []struct {
		name       string
		token      func() string
		wantReason string // "" means accepted
		wantGroups []string
	}{
		{"valid", func() string { return idp.Sign(claims(nil)) }, "", []string{"eng"}},
		{"expired", func() string { return idp.Sign(claims(set("exp", unix(-2*time.Minute)))) }, reasonExpired, nil},
		{"expired within leeway", func() string { return idp.Sign(claims(set("exp", unix(-30*time.Second)))) }, "", []string{"eng"}},
		{"no exp", func() string { return idp.Sign(claims(del("exp"))) }, reasonMissingClaim, nil},
		{"not yet valid", func() string { return idp.Sign(claims(set("nbf", unix(5*time.Minute)))) }, reasonNotYetValid, nil},
		{"nbf within leeway", func() string { return idp.Sign(claims(set("nbf", unix(30*time.Second)))) }, "", []string{"eng"}},
		{"issued in the future", func() string { return idp.Sign(claims(set("iat", unix(5*time.Minute)))) }, reasonNotYetValid, nil},
		{"wrong iss", func() string { return idp.Sign(claims(set("iss", "https://evil.example.com"))) }, reasonIssuer, nil},
		{"iss with a trailing slash", func() string { return idp.Sign(claims(set("iss", idp.URL+"/"))) }, reasonIssuer, nil},
		{"wrong aud", func() string { return idp.Sign(claims(set("aud", "someone-else"))) }, reasonAudience, nil},
		{"no aud", func() string { return idp.Sign(claims(del("aud"))) }, reasonAudience, nil},
		{"aud list with ours", func() string { return idp.Sign(claims(set("aud", []string{"x", "tollgate"}))) }, "", []string{"eng"}},
		{"aud list without ours", func() string { return idp.Sign(claims(set("aud", []string{"x", "y"}))) }, reasonAudience, nil},
		{"unknown kid", func() string { return idp.SignWith("RS256", other, "no-such-kid", claims(nil)) }, reasonUnknownKey, nil},
		{"known kid, other key", func() string { return idp.SignWith("RS256", other, idp.KeyID(), claims(nil)) }, reasonSignature, nil},
		{"ES256 with an RSA kid", func() string { return idp.SignWith("ES256", ec, idp.KeyID(), claims(nil)) }, reasonSignature, nil},
		{"alg none", func() string { return idp.SignWith("none", nil, idp.KeyID(), claims(nil)) }, reasonAlgorithm, nil},
		{"HS256 with the public key as secret", func() string {
			return idp.SignWith("HS256", publicPEM(t, idp.PublicKey()), idp.KeyID(), claims(nil))
		}, reasonAlgorithm, nil},
		{"HS256 with the public key's DER as secret", func() string {
			der, _ := x509.MarshalPKIXPublicKey(idp.PublicKey())
			return idp.SignWith("HS256", der, idp.KeyID(), claims(nil))
		}, reasonAlgorithm, nil},
		{"RS512 not in the allowlist", func() string {
			return idp.SignWith("RS512", idp.Key(), idp.KeyID(), claims(nil))
		}, reasonAlgorithm, nil},
		{"missing user claim", func() string { return idp.Sign(claims(del("email"))) }, reasonMissingClaim, nil},
		{"empty user claim", func() string { return idp.Sign(claims(set("email", ""))) }, reasonMissingClaim, nil},
		{"email_verified false", func() string { return idp.Sign(claims(set("email_verified", false))) }, reasonMissingClaim, nil},
		{"email_verified true", func() string { return idp.Sign(claims(set("email_verified", true))) }, "", []string{"eng"}},
		{"groups as a string", func() string { return idp.Sign(claims(set("groups", "ops"))) }, "", []string{"ops"}},
		{"groups as an array", func() string { return idp.Sign(claims(set("groups", []any{"a", "b", 3, ""}))) }, "", []string{"a", "b"}},
		{"groups missing", func() string { return idp.Sign(claims(del("groups"))) }, "", nil},
		{"groups of another type", func() string { return idp.Sign(claims(set("groups", map[string]any{"a": 1}))) }, "", nil},
		{"tampered payload", func() string {
			tok := idp.Sign(claims(nil))
			parts := strings.Split(tok, ".")
			c := claims(set("email", "mallory@example.com"))
			b, _ := json.Marshal(c)
			return parts[0] + "." + base64.RawURLEncoding.EncodeToString(b) + "." + parts[2]
		}, reasonSignature, nil},
		{"tampered header", func() string {
			tok := idp.Sign(claims(nil))
			_, rest, _ := strings.Cut(tok, ".")
			h := fmt.Sprintf(`{"alg":"RS256","kid":%q,"typ":"JWT","x":1}`, idp.KeyID())
			return base64.RawURLEncoding.EncodeToString([]byte(h)) + "." + rest
		}, reasonSignature, nil},
		{"signature stripped", func() string {
			tok := idp.Sign(claims(nil))
			return tok[:strings.LastIndexByte(tok, '.')+1]
		}, reasonSignature, nil},
		{"a virtual key", func() string { return "sk-tg-abcdefghijklmnop" }, reasonMalformed, nil},
		{"claims not an object", func() string {
			return idp.SignWith("RS256", idp.Key(), idp.KeyID(), nil)
		}, reasonIssuer, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, err := verify(t, p, tt.token())
			if tt.wantReason == "" {
				if err != nil {
					t.Fatalf("VerifyBearer: %v", err)
				}
				if diff := cmp.Diff(tt.wantGroups, id.Groups); diff != "" {
					t.Errorf("groups (-want +got):\n%s", diff)
				}
				return
			}
			if err == nil {
				t.Fatalf("VerifyBearer accepted it: %+v", id)
			}
			if !errors.Is(err, ErrInvalidToken) || errors.Is(err, ErrUnavailable) {
				t.Errorf("err %v: is ErrInvalidToken %v, ErrUnavailable %v; want true, false", err, errors.Is(err, ErrInvalidToken), errors.Is(err, ErrUnavailable))
			}
			if got := Reason(err); got != tt.wantReason {
				t.Errorf("Reason = %q, want %q (err %v)", got, tt.wantReason, err)
			}
			if id.Subject != "" {
				t.Errorf("identity %+v returned with the error", id)
			}
		})
	}
}

func TestUserClaimPointer(t *testing.T) {
	idp, p, _ := setup(t, func(c *Config) { c.UserClaim = "/ext/login~1name"; c.GroupsClaim = "/ext/roles" })
	c := idp.Claims("tollgate", time.Hour)
	c["ext"] = map[string]any{"login/name": "alice", "roles": []string{"admin"}}
	id, err := verify(t, p, idp.Sign(c))
	if err != nil {
		t.Fatal(err)
	}
	if id.Subject != "alice" || !cmp.Equal(id.Groups, []string{"admin"}) {
		t.Errorf("identity %+v, want subject alice and groups [admin]", id)
	}
	// The email claim is no longer the user's identity, so its being
	// unverified does not matter.
	c["email_verified"] = false
	if _, err := verify(t, p, idp.Sign(c)); err != nil {
		t.Errorf("email_verified false with user_claim a pointer: %v", err)
	}
	delete(c, "ext")
	if _, err := verify(t, p, idp.Sign(c)); Reason(err) != reasonMissingClaim {
		t.Errorf("no claim at the pointer: %v, want missing_claim", err)
	}
}

func TestUserClaimSub(t *testing.T) {
	idp, p, _ := setup(t, func(c *Config) { c.UserClaim = "sub" })
	c := idp.Claims("tollgate", time.Hour)
	delete(c, "email")
	id, err := verify(t, p, idp.Sign(c))
	if err != nil {
		t.Fatal(err)
	}
	if id.Subject != "alice-sub" || id.Email != "" {
		t.Errorf("identity %+v, want subject alice-sub and no email", id)
	}
}

func TestDefaultAlgorithmsAcceptES256(t *testing.T) {
	// The fake IdP signs RS256 only; an ES256 key of our own in its JWKS
	// shows the default list takes the EC algorithms.
	idp, p, _ := setup(t, nil)
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	jwks := fmt.Sprintf(`{"keys":[{"kty":"EC","crv":"P-256","kid":"ec1","use":"sig","alg":"ES256","x":%q,"y":%q}]}`,
		base64.RawURLEncoding.EncodeToString(ec.X.FillBytes(make([]byte, 32))),
		base64.RawURLEncoding.EncodeToString(ec.Y.FillBytes(make([]byte, 32))))
	idp.SetJWKSBody([]byte(jwks))
	if _, err := verify(t, p, idp.SignWith("ES256", ec, "ec1", idp.Claims("tollgate", time.Hour))); err != nil {
		t.Fatal(err)
	}
	if _, err := verify(t, p, idp.SignWith("ES384", mustEC(t, elliptic.P384()), "ec1", idp.Claims("tollgate", time.Hour))); Reason(err) != reasonSignature {
		t.Errorf("ES384 token against an ES256 key: %v, want a signature failure", err)
	}
}

func mustEC(t *testing.T, c elliptic.Curve) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(c, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestRotation(t *testing.T) {
	idp, p, clk := setup(t, nil)
	if _, err := verify(t, p, idp.Token("tollgate", time.Hour)); err != nil {
		t.Fatal(err)
	}
	idp.Rotate()
	// Within the refetch interval the new kid is not looked up again.
	clk.Advance(time.Second)
	early := idp.Token("tollgate", time.Hour)
	if _, err := verify(t, p, early); Reason(err) != reasonUnknownKey {
		t.Fatalf("new kid 1s after a fetch: %v, want unknown_key", err)
	}
	if _, jwks := idp.Fetches(); jwks != 1 {
		t.Fatalf("JWKS fetched %d times, want 1", jwks)
	}
	clk.Advance(keysRefetch)
	if _, err := verify(t, p, idp.Token("tollgate", time.Hour)); err != nil {
		t.Fatalf("new kid after the refetch interval: %v", err)
	}
	if disc, jwks := idp.Fetches(); disc != 1 || jwks != 2 {
		t.Errorf("fetches: discovery %d, JWKS %d; want 1, 2", disc, jwks)
	}
}

func TestRotationKeepsOldKeys(t *testing.T) {
	idp, p, clk := setup(t, nil, oidctest.KeepOldKeys())
	old := idp.Token("tollgate", time.Hour)
	if _, err := verify(t, p, old); err != nil {
		t.Fatal(err)
	}
	idp.Rotate()
	clk.Advance(keysRefetch)
	if _, err := verify(t, p, idp.Token("tollgate", time.Hour)); err != nil {
		t.Fatal(err)
	}
	p.cache.clear()
	if _, err := verify(t, p, old); err != nil {
		t.Errorf("token signed with the old key after a rotation: %v", err)
	}
}

func TestUnknownKidFloodIsRateLimited(t *testing.T) {
	idp, p, clk := setup(t, nil)
	other := mustEC(t, elliptic.P256()) // signs faster than RSA
	c := idp.Claims("tollgate", time.Hour)
	tokens := make([]string, 1000)
	for i := range tokens {
		tokens[i] = idp.SignWith("ES256", other, fmt.Sprintf("kid-%d", i), c)
	}
	flood := func() {
		done := make(chan struct{})
		for w := range 8 {
			go func() {
				defer func() { done <- struct{}{} }()
				for i := w; i < len(tokens); i += 8 {
					if _, err := verify(t, p, tokens[i]); Reason(err) != reasonUnknownKey {
						t.Errorf("token %d: %v, want unknown_key", i, err)
					}
				}
			}()
		}
		for range 8 {
			<-done
		}
	}
	flood()
	if disc, jwks := idp.Fetches(); disc != 1 || jwks != 1 {
		t.Errorf("after 1000 unknown kids: discovery %d, JWKS %d fetches; want 1, 1", disc, jwks)
	}
	// Once the interval has passed (and the cached failures expired),
	// the flood again costs one fetch.
	clk.Advance(failureTTL + keysRefetch)
	flood()
	if _, jwks := idp.Fetches(); jwks != 2 {
		t.Errorf("after a second flood: %d JWKS fetches, want 2", jwks)
	}
}

func TestOversizedJWKS(t *testing.T) {
	idp, p, _ := setup(t, nil)
	big := `{"keys":[],"pad":"` + strings.Repeat("x", maxResponseBytes) + `"}`
	idp.SetJWKSBody([]byte(big))
	_, err := verify(t, p, idp.Token("tollgate", time.Hour))
	if !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrInvalidToken) {
		t.Fatalf("oversized JWKS: %v, want ErrUnavailable only", err)
	}
	var tooLarge *http.MaxBytesError
	if !errors.As(err, &tooLarge) {
		t.Errorf("err %v does not say the response was too large", err)
	}
	if Reason(err) != reasonUnavailable {
		t.Errorf("Reason = %q, want unavailable", Reason(err))
	}
}

func TestIdPDown(t *testing.T) {
	idp, p, clk := setup(t, nil)
	idp.SetDown(true)
	tok := idp.Token("tollgate", time.Hour)
	for range 3 {
		_, err := verify(t, p, tok)
		if !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrInvalidToken) || Reason(err) != reasonUnavailable {
			t.Fatalf("IdP down: %v (reason %s), want ErrUnavailable only", err, Reason(err))
		}
	}
	if disc, _ := idp.Fetches(); disc != 1 {
		t.Errorf("three tokens while the IdP is down made %d discovery fetches, want 1", disc)
	}
	// Back up: the failure was not cached, and the retry waits out its
	// interval.
	idp.SetDown(false)
	if _, err := verify(t, p, tok); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("retry within the interval: %v, want the last failure", err)
	}
	clk.Advance(retryAfterFailure)
	if _, err := verify(t, p, tok); err != nil {
		t.Fatalf("after the IdP came back: %v", err)
	}
}

func TestIssuerMismatch(t *testing.T) {
	idp, p, _ := setup(t, func(c *Config) { c.Issuer += "/" })
	_, err := verify(t, p, idp.Token("tollgate", time.Hour))
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "did not match") {
		t.Fatalf("issuer with a trailing slash: %v, want an issuer mismatch", err)
	}
}

func TestCacheSparesVerification(t *testing.T) {
	idp, p, clk := setup(t, nil)
	good := idp.Token("tollgate", time.Minute)
	bad := idp.Sign(idp.Claims("someone-else", time.Hour))
	for range 3 {
		if _, err := verify(t, p, good); err != nil {
			t.Fatal(err)
		}
		if _, err := verify(t, p, bad); Reason(err) != reasonAudience {
			t.Fatalf("bad audience: %v", err)
		}
	}
	if n := p.verifications.Load(); n != 2 {
		t.Errorf("%d signature checks for two tokens used three times, want 2", n)
	}
	if disc, jwks := idp.Fetches(); disc != 1 || jwks != 1 {
		t.Errorf("fetches: discovery %d, JWKS %d; want 1, 1", disc, jwks)
	}
	// A cached identity does not outlive the token: past exp it is
	// verified again, and refused once past the leeway too.
	clk.Advance(time.Minute)
	if _, err := verify(t, p, good); err != nil {
		t.Fatalf("within the leeway: %v", err)
	}
	if n := p.verifications.Load(); n != 3 {
		t.Errorf("%d signature checks, want 3: the cached entry ends at exp", n)
	}
	clk.Advance(2 * time.Minute)
	if _, err := verify(t, p, good); Reason(err) != reasonExpired {
		t.Errorf("past exp and leeway: %v, want expired", err)
	}
}

func TestCancelledContextStopsFetch(t *testing.T) {
	arrived := make(chan struct{})
	srv := newHangingServer(t, arrived)
	p, err := New(Config{Issuer: srv.URL, ClientID: "c"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-arrived
		cancel()
	}()
	_, err = p.VerifyBearer(ctx, "eyJhbGciOiJSUzI1NiJ9.e30.c2ln")
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v, want ErrUnavailable wrapping context.Canceled", err)
	}
}
