// Package oidctest is a fake OpenID Connect provider for tests: a real
// HTTP server speaking the real wire format (discovery, JWKS, the
// authorization code flow with PKCE, refresh tokens, userinfo), so that
// tollgate's relying party, a browser or a CLI can sign in against it.
// /authorize shows no page: it approves the user set with SetUser and
// redirects at once.
package oidctest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// User is who /authorize approves and what the tokens say.
type User struct {
	Sub, Email, Name string
	Groups           []string
	// EmailVerified is sent as email_verified when set.
	EmailVerified *bool
}

// IdP is a running fake provider. Its issuer is URL.
type IdP struct {
	URL string
	// ClientID and ClientSecret are the one client's credentials the
	// token endpoint accepts.
	ClientID, ClientSecret string

	t    testing.TB
	opts options
	mux  *http.ServeMux

	mu        sync.Mutex
	user      User
	users     map[string]User // by Sub: who refresh tokens are refreshed for
	keys      []signingKey    // the last one signs
	codes     map[string]grant
	refresh   map[string]grant
	access    map[string]User
	down      bool
	jwksBody  []byte
	discovery int
	jwks      int
}

type signingKey struct {
	priv *rsa.PrivateKey
	kid  string
}

type grant struct {
	user                   User
	redirectURI, challenge string
	nonce, scope           string
	expires                time.Time
}

type options struct {
	host                 string
	now                  func() time.Time
	keepOldKeys          bool
	authMethods          []string
	groupsInUserinfoOnly bool
	accessAudience       string
	redirectURIs         []string
	idTokenClaims        map[string]any
	noRefreshIDToken     bool
	noRefreshRotation    bool
}

// Option changes how New sets the IdP up.
type Option func(*options)

// WithHost serves the IdP under host name (say "localhost") rather than
// 127.0.0.1, so that it and the gateway are different sites to a browser.
func WithHost(host string) Option { return func(o *options) { o.host = host } }

// WithClock sets the clock tokens are stamped and codes expire by.
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// KeepOldKeys keeps serving rotated-out keys in the JWKS, as IdPs do for
// a while after a rotation.
func KeepOldKeys() Option { return func(o *options) { o.keepOldKeys = true } }

// WithAuthMethods sets the token endpoint auth methods advertised and
// accepted (client_secret_basic, client_secret_post); both unless set.
func WithAuthMethods(methods ...string) Option {
	return func(o *options) { o.authMethods = methods }
}

// GroupsInUserinfoOnly leaves groups out of ID tokens (userinfo still has
// them), as IdPs do with large group lists.
func GroupsInUserinfoOnly() Option { return func(o *options) { o.groupsInUserinfoOnly = true } }

// WithAccessTokenAudience sets the aud of access tokens the token endpoint
// issues; the client id unless set.
func WithAccessTokenAudience(aud string) Option {
	return func(o *options) { o.accessAudience = aud }
}

// WithIDTokenClaims adds claims to (or overrides claims in) the ID tokens
// the token endpoint issues.
func WithIDTokenClaims(claims map[string]any) Option {
	return func(o *options) { o.idTokenClaims = claims }
}

// NoRefreshIDToken leaves the ID token out of the answers to the refresh
// grant, as IdPs may (OpenID Connect Core 1.0 §12.2).
func NoRefreshIDToken() Option { return func(o *options) { o.noRefreshIDToken = true } }

// NoRefreshRotation keeps refresh tokens good after use, and leaves them
// out of the answers to the refresh grant, as IdPs that do not rotate do.
func NoRefreshRotation() Option { return func(o *options) { o.noRefreshRotation = true } }

// WithRedirectURIs restricts the redirect URIs /authorize accepts to
// these; any absolute http(s) URL unless set.
func WithRedirectURIs(uris ...string) Option {
	return func(o *options) { o.redirectURIs = uris }
}

// New starts a fake IdP, stopped when the test ends. Its user is
// alice@example.com in group "eng" until SetUser says otherwise.
func New(t testing.TB, opts ...Option) *IdP {
	t.Helper()
	i := &IdP{
		ClientID:     "tollgate-test",
		ClientSecret: "tollgate-test-secret",
		t:            t,
		codes:        make(map[string]grant),
		refresh:      make(map[string]grant),
		access:       make(map[string]User),
		user:         User{Sub: "alice-sub", Email: "alice@example.com", Name: "Alice", Groups: []string{"eng"}},
	}
	i.users = map[string]User{i.user.Sub: i.user}
	i.opts = options{now: time.Now, authMethods: []string{"client_secret_basic", "client_secret_post"}}
	for _, o := range opts {
		o(&i.opts)
	}
	i.keys = []signingKey{newKey(t)}

	i.mux = http.NewServeMux()
	i.mux.HandleFunc("GET /.well-known/openid-configuration", i.serveDiscovery)
	i.mux.HandleFunc("GET /jwks", i.serveJWKS)
	i.mux.HandleFunc("/authorize", i.serveAuthorize)
	i.mux.HandleFunc("POST /token", i.serveToken)
	i.mux.HandleFunc("/userinfo", i.serveUserinfo)

	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i.mu.Lock()
		switch r.URL.Path {
		case "/.well-known/openid-configuration":
			i.discovery++
		case "/jwks":
			i.jwks++
		}
		down := i.down
		i.mu.Unlock()
		if down {
			http.Error(w, "down for the test", http.StatusServiceUnavailable)
			return
		}
		i.mux.ServeHTTP(w, r)
	}))
	srv.Start()
	t.Cleanup(srv.Close)
	i.URL = srv.URL
	if i.opts.host != "" {
		_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
		i.URL = "http://" + net.JoinHostPort(i.opts.host, port)
	}
	return i
}

func newKey(t testing.TB) signingKey {
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatalf("oidctest: %v", err)
	}
	return signingKey{priv: priv, kid: randomString(9)}
}

func randomString(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (i *IdP) now() time.Time { return i.opts.now() }

// SetUser sets who /authorize approves and what tokens carry. It updates
// the directory too: refreshing the tokens of a user with u's Sub gives
// tokens that say what u says (its groups now, say).
func (i *IdP) SetUser(u User) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.user = u
	i.users[u.Sub] = u
}

// DeleteUser removes the user with sub from the directory, as when a
// person is deprovisioned: their refresh tokens and access tokens are
// refused from then on.
func (i *IdP) DeleteUser(sub string) {
	i.mu.Lock()
	defer i.mu.Unlock()
	delete(i.users, sub)
	for rt, g := range i.refresh {
		if g.user.Sub == sub {
			delete(i.refresh, rt)
		}
	}
	for at, u := range i.access {
		if u.Sub == sub {
			delete(i.access, at)
		}
	}
}

// RevokeRefreshTokens makes every refresh token given out so far refused
// (invalid_grant), as when an administrator ends a user's sessions.
func (i *IdP) RevokeRefreshTokens() {
	i.mu.Lock()
	defer i.mu.Unlock()
	clear(i.refresh)
}

// SetDown makes every endpoint answer 503 (true) or serve again (false).
func (i *IdP) SetDown(down bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.down = down
}

// SetJWKSBody makes /jwks serve body as it is (nil: the real key set).
func (i *IdP) SetJWKSBody(body []byte) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.jwksBody = body
}

// Rotate makes a new signing key with a new kid; the JWKS serves it, and
// the old ones too with KeepOldKeys.
func (i *IdP) Rotate() {
	k := newKey(i.t)
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.opts.keepOldKeys {
		i.keys = append(i.keys, k)
	} else {
		i.keys = []signingKey{k}
	}
}

// Fetches counts requests for the discovery document and the JWKS,
// those answered 503 by SetDown included.
func (i *IdP) Fetches() (discovery, jwks int) {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.discovery, i.jwks
}

// KeyID is the current signing key's kid.
func (i *IdP) KeyID() string {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.keys[len(i.keys)-1].kid
}

// PublicKey is the current signing key's public half.
func (i *IdP) PublicKey() *rsa.PublicKey {
	i.mu.Lock()
	defer i.mu.Unlock()
	return &i.keys[len(i.keys)-1].priv.PublicKey
}

// Sign signs claims as a JWT with RS256, the current key and its kid.
func (i *IdP) Sign(claims map[string]any) string {
	i.mu.Lock()
	k := i.keys[len(i.keys)-1]
	i.mu.Unlock()
	return i.SignWith("RS256", k.priv, k.kid, claims)
}

// SignWith signs claims as a JWT however a test needs, rightly or not:
// alg "none" (with no signature), HS256 with key a []byte (the public key,
// say), any key and kid go-jose can sign with.
func (i *IdP) SignWith(alg string, key any, kid string, claims map[string]any) string {
	payload, err := json.Marshal(claims)
	if err != nil {
		i.t.Fatalf("oidctest: %v", err)
	}
	if alg == "none" {
		hdr := map[string]string{"alg": "none", "typ": "JWT"}
		if kid != "" {
			hdr["kid"] = kid
		}
		h, _ := json.Marshal(hdr)
		return base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(payload) + "."
	}
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if kid != "" {
		opts = opts.WithHeader("kid", kid)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.SignatureAlgorithm(alg), Key: key}, opts)
	if err != nil {
		i.t.Fatalf("oidctest: signer for %s: %v", alg, err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		i.t.Fatalf("oidctest: signing with %s: %v", alg, err)
	}
	s, err := jws.CompactSerialize()
	if err != nil {
		i.t.Fatalf("oidctest: %v", err)
	}
	return s
}

// Claims are the claims of a token for the current user: iss, sub, aud,
// iat, nbf, exp (now + ttl) and a random jti, and the user's email, name
// and groups.
func (i *IdP) Claims(aud string, ttl time.Duration) map[string]any {
	i.mu.Lock()
	u := i.user
	i.mu.Unlock()
	return i.claims(u, aud, ttl, true)
}

func (i *IdP) claims(u User, aud string, ttl time.Duration, groups bool) map[string]any {
	now := i.now()
	c := map[string]any{
		"iss": i.URL,
		"sub": u.Sub,
		"aud": aud,
		"iat": now.Unix(),
		"nbf": now.Unix(),
		"exp": now.Add(ttl).Unix(),
		"jti": randomString(12),
	}
	u.addClaims(c, groups)
	return c
}

// addClaims adds the user's profile claims to c, groups if asked.
func (u User) addClaims(c map[string]any, groups bool) {
	if u.Email != "" {
		c["email"] = u.Email
	}
	if u.EmailVerified != nil {
		c["email_verified"] = *u.EmailVerified
	}
	if u.Name != "" {
		c["name"] = u.Name
	}
	if groups && u.Groups != nil {
		c["groups"] = u.Groups
	}
}

// Token is a valid access token for the current user with audience aud.
// Userinfo answers for it.
func (i *IdP) Token(aud string, ttl time.Duration) string {
	i.mu.Lock()
	u := i.user
	i.mu.Unlock()
	tok := i.Sign(i.claims(u, aud, ttl, true))
	i.mu.Lock()
	i.access[tok] = u
	i.mu.Unlock()
	return tok
}

func (i *IdP) serveDiscovery(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                i.URL,
		"authorization_endpoint":                i.URL + "/authorize",
		"token_endpoint":                        i.URL + "/token",
		"userinfo_endpoint":                     i.URL + "/userinfo",
		"jwks_uri":                              i.URL + "/jwks",
		"response_types_supported":              []string{"code"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{"RS256"},
		"scopes_supported":                      []string{"openid", "profile", "email", "groups", "offline_access"},
		"token_endpoint_auth_methods_supported": i.opts.authMethods,
		"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":      []string{"S256"},
		"claims_supported":                      []string{"sub", "iss", "aud", "exp", "iat", "email", "email_verified", "name", "groups"},
	})
}

func (i *IdP) serveJWKS(w http.ResponseWriter, r *http.Request) {
	i.mu.Lock()
	body := i.jwksBody
	var set jose.JSONWebKeySet
	for _, k := range i.keys {
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: &k.priv.PublicKey, KeyID: k.kid, Algorithm: "RS256", Use: "sig"})
	}
	i.mu.Unlock()
	if body != nil {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
		return
	}
	writeJSON(w, http.StatusOK, set)
}

// serveAuthorize approves the current user at once. As the spec asks, a
// bad client_id or redirect_uri is answered here (never redirected to);
// other errors go back to the redirect URI.
func (i *IdP) serveAuthorize(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	q := r.Form
	if q.Get("client_id") != i.ClientID {
		http.Error(w, "unknown client_id", http.StatusBadRequest)
		return
	}
	redirect := q.Get("redirect_uri")
	if !i.redirectAllowed(redirect) {
		http.Error(w, "redirect_uri not allowed", http.StatusBadRequest)
		return
	}
	state := q.Get("state")
	back := func(params map[string]string) {
		u, _ := url.Parse(redirect) // parsed by redirectAllowed
		v := u.Query()
		for k, s := range params {
			v.Set(k, s)
		}
		u.RawQuery = v.Encode()
		http.Redirect(w, r, u.String(), http.StatusFound)
	}
	fault := func(code, desc string) {
		back(map[string]string{"error": code, "error_description": desc, "state": state})
	}
	switch {
	case q.Get("response_type") != "code":
		fault("unsupported_response_type", "only response_type=code")
		return
	case !strings.Contains(" "+q.Get("scope")+" ", " openid "):
		fault("invalid_scope", "scope must include openid")
		return
	case q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "":
		fault("invalid_request", "PKCE with code_challenge_method=S256 is required")
		return
	case state == "":
		fault("invalid_request", "state is required")
		return
	case q.Get("nonce") == "":
		fault("invalid_request", "nonce is required")
		return
	}
	code := randomString(24)
	i.mu.Lock()
	i.codes[code] = grant{
		user:        i.user,
		redirectURI: redirect,
		challenge:   q.Get("code_challenge"),
		nonce:       q.Get("nonce"),
		scope:       q.Get("scope"),
		expires:     i.now().Add(time.Minute),
	}
	i.mu.Unlock()
	back(map[string]string{"code": code, "state": state})
}

func (i *IdP) redirectAllowed(uri string) bool {
	if len(i.opts.redirectURIs) > 0 && !slices.Contains(i.opts.redirectURIs, uri) {
		return false
	}
	u, err := url.Parse(uri)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.Fragment == ""
}

func (i *IdP) serveToken(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		tokenError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	if !i.clientAuthenticated(r) {
		w.Header().Set("WWW-Authenticate", `Basic realm="token"`)
		tokenError(w, http.StatusUnauthorized, "invalid_client", "client authentication failed")
		return
	}
	f := r.PostForm
	now := i.now()
	var g grant
	switch f.Get("grant_type") {
	case "authorization_code":
		i.mu.Lock()
		var ok bool
		g, ok = i.codes[f.Get("code")]
		delete(i.codes, f.Get("code")) // a code is good once, right or wrong
		i.mu.Unlock()
		switch {
		case !ok || !now.Before(g.expires):
			tokenError(w, http.StatusBadRequest, "invalid_grant", "unknown, used or expired code")
			return
		case f.Get("redirect_uri") != g.redirectURI:
			tokenError(w, http.StatusBadRequest, "invalid_grant", "redirect_uri does not match the authorization request")
			return
		case s256(f.Get("code_verifier")) != g.challenge:
			tokenError(w, http.StatusBadRequest, "invalid_grant", "PKCE verification failed")
			return
		}
	case "refresh_token":
		i.mu.Lock()
		var ok, known bool
		g, ok = i.refresh[f.Get("refresh_token")]
		if !i.opts.noRefreshRotation {
			delete(i.refresh, f.Get("refresh_token")) // refresh tokens rotate
		}
		// The tokens say what the directory says now.
		g.user, known = i.users[g.user.Sub]
		i.mu.Unlock()
		if !ok || !known {
			tokenError(w, http.StatusBadRequest, "invalid_grant", "unknown, used or revoked refresh token")
			return
		}
		g.nonce = "" // a refreshed ID token carries no nonce
	default:
		tokenError(w, http.StatusBadRequest, "unsupported_grant_type", "authorization_code or refresh_token")
		return
	}
	const ttl = time.Hour
	aud := i.opts.accessAudience
	if aud == "" {
		aud = i.ClientID
	}
	access := i.Sign(i.claims(g.user, aud, ttl, true))
	idc := i.claims(g.user, i.ClientID, ttl, !i.opts.groupsInUserinfoOnly)
	if g.nonce != "" {
		idc["nonce"] = g.nonce
	}
	for k, v := range i.opts.idTokenClaims {
		idc[k] = v
	}
	sum := sha256.Sum256([]byte(access))
	idc["at_hash"] = base64.RawURLEncoding.EncodeToString(sum[:len(sum)/2])
	refreshing := f.Get("grant_type") == "refresh_token"
	resp := map[string]any{
		"access_token": access,
		"token_type":   "Bearer",
		"expires_in":   int(ttl.Seconds()),
		"scope":        g.scope,
	}
	if !refreshing || !i.opts.noRefreshIDToken {
		resp["id_token"] = i.Sign(idc)
	}
	i.mu.Lock()
	i.access[access] = g.user
	if strings.Contains(" "+g.scope+" ", " offline_access ") && (!refreshing || !i.opts.noRefreshRotation) {
		rt := randomString(24)
		i.refresh[rt] = g
		resp["refresh_token"] = rt
	}
	i.mu.Unlock()
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, resp)
}

// clientAuthenticated checks the client's credentials by the methods
// advertised: HTTP Basic (form-encoded id and secret, RFC 6749 §2.3.1) or
// the form body.
func (i *IdP) clientAuthenticated(r *http.Request) bool {
	allowed := func(m string) bool { return slices.Contains(i.opts.authMethods, m) }
	if id, secret, ok := r.BasicAuth(); ok {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
		return allowed("client_secret_basic") && id == i.ClientID && secret == i.ClientSecret
	}
	return allowed("client_secret_post") && r.PostForm.Get("client_id") == i.ClientID && r.PostForm.Get("client_secret") == i.ClientSecret
}

func (i *IdP) serveUserinfo(w http.ResponseWriter, r *http.Request) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	i.mu.Lock()
	u, known := i.access[tok]
	i.mu.Unlock()
	if !ok || !known {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		http.Error(w, "invalid token", http.StatusUnauthorized)
		return
	}
	c := map[string]any{"sub": u.Sub}
	u.addClaims(c, true)
	writeJSON(w, http.StatusOK, c)
}

func s256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func tokenError(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, fmt.Sprint(err), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// Key is the current signing key.
func (i *IdP) Key() *rsa.PrivateKey {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.keys[len(i.keys)-1].priv
}
