package identity

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/tollgate/tollgate/internal/auth"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/oidc"
	"github.com/tollgate/tollgate/internal/store"
)

// The device flow's timings (RFC 8628): a device code lives ten minutes
// and is polled every five seconds at most.
const (
	deviceTTL      = 10 * time.Minute
	deviceInterval = 5
	// maxFormBytes bounds the OAuth endpoints' form bodies.
	maxFormBytes = 8 << 10
)

// oauthError is an OAuth endpoint's refusal (RFC 6749 §5.2).
type oauthError struct {
	status int
	code   string // error
	desc   string // error_description
}

func writeOAuthError(w http.ResponseWriter, e oauthError) {
	writeJSON(w, e.status, map[string]string{"error": e.code, "error_description": e.desc})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := jsonx.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"server_error"}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// discovery serves the OAuth authorization server metadata (RFC 8414)
// that Claude Code reads to find the device and token endpoints. There is
// no authorization_endpoint: the only grants are the device code's and
// refresh.
func (s *Service) discovery(w http.ResponseWriter, r *http.Request) {
	base := s.base(r)
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                base,
		"device_authorization_endpoint":         base + "/oauth/device_authorization",
		"token_endpoint":                        base + "/oauth/token",
		"grant_types_supported":                 []string{"urn:ietf:params:oauth:grant-type:device_code", "refresh_token"},
		"response_types_supported":              []string{},
		"scopes_supported":                      []string{},
		"token_endpoint_auth_methods_supported": []string{"none"},
	})
}

// base is the gateway's own URL without a trailing slash: identity.public_url,
// else the scheme and Host the request came to (https when it came over
// TLS, or through a trusted proxy that says so in X-Forwarded-Proto).
// The IdP accepts only the redirect URIs registered with it, so a forged
// Host cannot send a sign-in elsewhere; public_url is still what to set.
func (s *Service) base(r *http.Request) string {
	if s.cfg.PublicURL != "" {
		return strings.TrimRight(s.cfg.PublicURL, "/")
	}
	scheme := "http"
	if s.secureRequest(r) {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// secureRequest reports whether the browser reached the gateway over HTTPS.
func (s *Service) secureRequest(r *http.Request) bool {
	if s.cfg.PublicURL != "" {
		return strings.HasPrefix(s.cfg.PublicURL, "https://")
	}
	if r.TLS != nil {
		return true
	}
	proto := r.Header.Get("X-Forwarded-Proto")
	if proto == "" {
		return false
	}
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := peer.Addr().Unmap()
	for _, p := range s.o.TrustedProxies {
		if p.Contains(ip) {
			last := proto[strings.LastIndexByte(proto, ',')+1:]
			return strings.EqualFold(strings.TrimSpace(last), "https")
		}
	}
	return false
}

// deviceAuthorization starts a device sign-in (RFC 8628 §3.1–3.2). Claude
// Code sends an empty form: no client id, no scope.
func (s *Service) deviceAuthorization(w http.ResponseWriter, r *http.Request) {
	if err := readForm(w, r); err != nil {
		writeOAuthError(w, oauthError{http.StatusBadRequest, "invalid_request", err.Error()})
		return
	}
	if !s.devices.allow(s.limitKey(r), s.now()) {
		w.Header().Set("Retry-After", "60")
		writeOAuthError(w, oauthError{http.StatusTooManyRequests, "slow_down", "too many sign-ins started from this address; wait a minute"})
		return
	}
	now := s.now()
	code := newSecret(devicePrefix)
	var d store.DeviceCode
	var err error
	for range 3 { // a clash of user codes among the live ones is rare: draw again
		d = store.DeviceCode{Hash: digest(code), UserCode: newUserCode(), Status: "pending", Interval: deviceInterval,
			CreatedAt: now, ExpiresAt: now.Add(deviceTTL)}
		if err = s.st.CreateDeviceCode(r.Context(), d); err == nil || !errors.Is(err, store.ErrDuplicateUserCode) {
			break
		}
	}
	if err != nil {
		s.log.Error("identity: storing a device code", "error", err)
		writeOAuthError(w, oauthError{http.StatusServiceUnavailable, "temporarily_unavailable", "sign-in cannot start right now; try again"})
		return
	}
	shown := displayUserCode(d.UserCode)
	verify := s.base(r) + "/oauth/device"
	writeJSON(w, http.StatusOK, map[string]any{
		"device_code":               code,
		"user_code":                 shown,
		"verification_uri":          verify,
		"verification_uri_complete": verify + "?user_code=" + shown,
		"expires_in":                int(deviceTTL / time.Second),
		"interval":                  deviceInterval,
	})
}

// userCodeAlphabet is RFC 8628 §6.1's base-20: no vowels (no words), no
// look-alikes. Eight of them are 34.5 bits, tried at most a few times a
// minute per address over a code's ten minutes.
const userCodeAlphabet = "BCDFGHJKLMNPQRSTVWXZ"

func newUserCode() string {
	var b [8]byte
	var r [8]byte
	for i := range b {
		for {
			_, _ = rand.Read(r[i : i+1])
			if r[i] < 240 { // 240 = 12 × 20: no modulo bias
				b[i] = userCodeAlphabet[r[i]%20]
				break
			}
		}
	}
	return string(b[:])
}

// displayUserCode writes a user code as people read it: WDJB-MJHT.
func displayUserCode(c string) string {
	if len(c) != 8 {
		return c
	}
	return c[:4] + "-" + c[4:]
}

// normalUserCode is what a person typed, as stored: upper case, without
// dashes or spaces; "" when it cannot be a code.
func normalUserCode(s string) string {
	var b strings.Builder
	for _, c := range strings.ToUpper(s) {
		switch {
		case c == '-' || c == ' ':
		case strings.ContainsRune(userCodeAlphabet, c):
			b.WriteRune(c)
		default:
			return ""
		}
	}
	if b.Len() != 8 {
		return ""
	}
	return b.String()
}

// token is the token endpoint: the device code grant, polled until the
// person approves, and the refresh grant, which rotates the refresh token.
func (s *Service) token(w http.ResponseWriter, r *http.Request) {
	if !s.tokens.allow(s.limitKey(r), s.now()) {
		w.Header().Set("Retry-After", "60")
		writeOAuthError(w, oauthError{http.StatusTooManyRequests, "slow_down", "too many token requests from this address; wait a minute"})
		return
	}
	if err := readForm(w, r); err != nil {
		writeOAuthError(w, oauthError{http.StatusBadRequest, "invalid_request", err.Error()})
		return
	}
	switch g := r.PostForm.Get("grant_type"); g {
	case "urn:ietf:params:oauth:grant-type:device_code":
		s.deviceGrant(w, r)
	case "refresh_token":
		s.refreshGrant(w, r)
	case "":
		writeOAuthError(w, oauthError{http.StatusBadRequest, "invalid_request", "grant_type is required"})
	default:
		writeOAuthError(w, oauthError{http.StatusBadRequest, "unsupported_grant_type", "grant_type " + strconv.Quote(g) + " is not supported; use the device code or refresh_token grant"})
	}
}

func (s *Service) deviceGrant(w http.ResponseWriter, r *http.Request) {
	code := r.PostForm.Get("device_code")
	if code == "" {
		writeOAuthError(w, oauthError{http.StatusBadRequest, "invalid_request", "device_code is required"})
		return
	}
	now := s.now()
	hash := digest(code)
	d, slow, err := s.st.PollDevice(r.Context(), hash, now)
	switch {
	case store.IsNotFound(err):
		writeOAuthError(w, oauthError{http.StatusBadRequest, "invalid_grant", "the device code is not valid; start the sign-in again"})
		return
	case err != nil:
		s.log.Error("identity: polling a device code", "error", err)
		writeOAuthError(w, oauthError{http.StatusServiceUnavailable, "temporarily_unavailable", "the sign-in cannot be checked right now; poll again"})
		return
	case !now.Before(d.ExpiresAt):
		writeOAuthError(w, oauthError{http.StatusBadRequest, "expired_token", "the device code has expired; start the sign-in again"})
		return
	}
	switch d.Status {
	case store.DeviceApproved:
		// The code is consumed in the transaction that stores the tokens:
		// a failure here leaves it approved, for the next poll.
		f := store.TokenFamily{ID: newID("fam_"), UserID: d.UserID, TeamID: d.TeamID, Client: "claude-code",
			CreatedAt: now, ExpiresAt: now.Add(s.cfg.Tokens.RefreshTTL)}
		access, refresh, tokens := s.mint(f, now)
		switch err := s.st.RedeemDevice(r.Context(), hash, now, f, tokens...); {
		case errors.Is(err, store.ErrDeviceNotPending):
			writeOAuthError(w, oauthError{http.StatusBadRequest, "invalid_grant", "the device code was already used; start the sign-in again"})
			return
		case errors.Is(err, store.ErrTokenInvalid):
			writeOAuthError(w, oauthError{http.StatusBadRequest, "expired_token", "the device code has expired; start the sign-in again"})
			return
		case err != nil:
			s.log.Error("identity: storing a sign-in's tokens", "error", err)
			writeOAuthError(w, oauthError{http.StatusServiceUnavailable, "temporarily_unavailable", "tokens cannot be issued right now; poll again"})
			return
		}
		s.audit(r.Context(), r, store.AuditEvent{ActorKind: "user", ActorID: f.UserID, Action: "token_issued", TargetKind: "token_family",
			TargetID: f.ID, Detail: detail(map[string]any{"client": f.Client, "team_id": f.TeamID})})
		s.answerTokens(w, access, refresh, tokens[0].ExpiresAt.Sub(now))
	case store.DeviceDenied:
		writeOAuthError(w, oauthError{http.StatusBadRequest, "access_denied", "the sign-in was refused"})
	case store.DeviceConsumed:
		writeOAuthError(w, oauthError{http.StatusBadRequest, "invalid_grant", "the device code was already used; start the sign-in again"})
	default:
		if slow {
			writeOAuthError(w, oauthError{http.StatusBadRequest, "slow_down", "polling too often; wait " + strconv.Itoa(d.Interval+5) + " seconds between polls"})
			return
		}
		writeOAuthError(w, oauthError{http.StatusBadRequest, "authorization_pending", "the sign-in has not been approved in the browser yet"})
	}
}

// refreshGrant exchanges a refresh token for new tokens. Each refresh
// token is good once: a second use means it was copied, and ends the
// whole sign-in (every token of its family), unless it comes within
// store.RefreshGrace of the first (a retry, or a second process sharing
// the credentials), which is refused and nothing more. When the sign-in
// holds the IdP's refresh token, the IdP is asked again who the user is:
// someone it no longer knows loses the sign-in, and their teams follow
// its groups. The answer to every refusal is 401 invalid_grant, which
// Claude Code takes as "sign in again"; a failure to check is 503, after
// which the same refresh token still works.
func (s *Service) refreshGrant(w http.ResponseWriter, r *http.Request) {
	raw := r.PostForm.Get("refresh_token")
	deny := func(why string) {
		writeOAuthError(w, oauthError{http.StatusUnauthorized, "invalid_grant", why})
	}
	later := func(what string, err error) {
		s.log.Error("identity: "+what, "error", err)
		writeOAuthError(w, oauthError{http.StatusServiceUnavailable, "temporarily_unavailable", "the token cannot be refreshed right now; try again"})
	}
	if !strings.HasPrefix(raw, refreshPrefix) {
		deny("the refresh token is not valid; sign in again")
		return
	}
	ctx := r.Context()
	now := s.now()
	hash := digest(raw)
	t, err := s.st.TokenByHash(ctx, hash)
	switch {
	case store.IsNotFound(err):
		deny("the refresh token is not valid; sign in again")
		return
	case err != nil:
		later("reading a refresh token", err)
		return
	case t.Kind != store.TokenRefresh || t.RevokedAt != nil || !now.Before(t.ExpiresAt):
		deny("the refresh token is not valid (expired or revoked); sign in again")
		return
	case t.UsedAt != nil:
		// Used before: settled by the rotation below without asking the
		// IdP (whose own refresh token the first use already rotated).
	}
	f, err := s.st.TokenFamily(ctx, t.FamilyID)
	if err != nil {
		if store.IsNotFound(err) {
			deny("the sign-in has ended; sign in again")
			return
		}
		later("reading a sign-in", err)
		return
	}
	var sealed []byte
	if f.IdPRefresh != nil && s.idp != nil && t.UsedAt == nil {
		var ok bool
		if sealed, ok = s.askIdP(w, r, t, f, deny, later); !ok {
			return
		}
	}
	// The user must still exist, be enabled and be in the team of their
	// sign-in: a user removed from it signs in again (into their teams now).
	if _, err := s.resolve(ctx, t.UserID, t.TeamID, true); err != nil {
		if errors.Is(err, auth.ErrUnavailable) {
			writeOAuthError(w, oauthError{http.StatusServiceUnavailable, "temporarily_unavailable", "the token cannot be refreshed right now; try again"})
			return
		}
		s.audit(ctx, r, store.AuditEvent{ActorKind: "user", ActorID: t.UserID, Action: "refresh_refused", TargetKind: "token_family",
			TargetID: t.FamilyID, Detail: detail(map[string]any{"reason": auth.Reason(err)})})
		deny("your access has been removed; sign in again")
		return
	}
	access, refresh, tokens := s.mint(f, now)
	switch _, err := s.st.RotateRefreshToken(ctx, hash, now, sealed, tokens...); {
	case errors.Is(err, store.ErrTokenReused):
		n, rerr := s.st.RevokeTokenFamily(context.WithoutCancel(ctx), t.FamilyID, now)
		if rerr != nil {
			s.log.Error("identity: revoking a reused refresh token's family", "error", rerr)
		}
		s.Forget()
		s.audit(ctx, r, store.AuditEvent{ActorKind: "user", ActorID: t.UserID, Action: "token_reuse", TargetKind: "token_family",
			TargetID: t.FamilyID, Detail: detail(map[string]any{"revoked": n, "client": t.Client})})
		deny("the refresh token was already used; every token of this sign-in is revoked; sign in again")
		return
	case errors.Is(err, store.ErrTokenJustUsed):
		deny("the refresh token was used moments ago; use the tokens that use returned")
		return
	case store.IsNotFound(err), errors.Is(err, store.ErrTokenInvalid):
		deny("the refresh token is not valid (expired or revoked); sign in again")
		return
	case err != nil:
		later("rotating a refresh token", err)
		return
	}
	s.answerTokens(w, access, refresh, tokens[0].ExpiresAt.Sub(now))
}

// askIdP refreshes the sign-in's IdP token: the IdP says again who the
// user is (their teams and console role follow its groups), or that it no
// longer knows them, which ends the sign-in. It returns the IdP's new
// refresh token, sealed (nil when unchanged); false when it has answered
// the request itself.
func (s *Service) askIdP(w http.ResponseWriter, r *http.Request, t store.Token, f store.TokenFamily, deny func(string), later func(string, error)) ([]byte, bool) {
	ctx := r.Context()
	old, err := s.unseal(f.IdPRefresh)
	if err != nil {
		// Sealed under another master key: the IdP cannot be asked.
		s.log.Warn("identity: a sign-in's IdP token cannot be unsealed; its refresh is refused", "family", f.ID, "error", err)
		deny("the sign-in must be renewed; sign in again")
		return nil, false
	}
	id, err := s.idp.Refresh(ctx, old)
	switch {
	case errors.Is(err, oidc.ErrUnavailable):
		later("asking the identity provider to refresh a sign-in", err)
		return nil, false
	case err != nil:
		s.endFamily(ctx, r, t, "idp_refused", oidc.Reason(err))
		deny("the identity provider no longer signs you in; sign in again")
		return nil, false
	}
	u, err := s.st.UserByID(ctx, t.UserID)
	if err != nil || u.Subject != id.Subject {
		if err != nil && !store.IsNotFound(err) {
			later("reading a user", err)
			return nil, false
		}
		s.endFamily(ctx, r, t, "idp_subject_changed", "")
		deny("your access has been removed; sign in again")
		return nil, false
	}
	if _, _, err := s.provision(ctx, r, id, false); err != nil {
		if errors.Is(err, auth.ErrUnavailable) {
			writeOAuthError(w, oauthError{http.StatusServiceUnavailable, "temporarily_unavailable", "the token cannot be refreshed right now; try again"})
			return nil, false
		}
		s.endFamily(ctx, r, t, "refresh_refused", auth.Reason(err))
		deny("your access has been removed; sign in again")
		return nil, false
	}
	if id.RefreshToken == "" || id.RefreshToken == old {
		return nil, true
	}
	return s.seal(id.RefreshToken), true
}

// endFamily revokes a sign-in the IdP or the user's state refuses.
func (s *Service) endFamily(ctx context.Context, r *http.Request, t store.Token, action, reason string) {
	if _, err := s.st.RevokeTokenFamily(context.WithoutCancel(ctx), t.FamilyID, s.now()); err != nil {
		s.log.Error("identity: revoking a sign-in", "error", err)
	}
	s.Forget()
	s.audit(ctx, r, store.AuditEvent{ActorKind: "system", Action: action, TargetKind: "token_family", TargetID: t.FamilyID,
		Detail: detail(map[string]any{"user_id": t.UserID, "reason": reason})})
}

// mint makes an access token and a refresh token of family f: the access
// token lives access_ttl, both at most until the family's end (a sign-in
// lasts refresh_ttl from its start however often it is refreshed).
func (s *Service) mint(f store.TokenFamily, now time.Time) (access, refresh string, tokens []store.Token) {
	access, refresh = newSecret(accessPrefix), newSecret(refreshPrefix)
	until := now.Add(s.cfg.Tokens.AccessTTL)
	if f.ExpiresAt.Before(until) {
		until = f.ExpiresAt
	}
	return access, refresh, []store.Token{
		{Hash: digest(access), Kind: store.TokenAccess, UserID: f.UserID, TeamID: f.TeamID, FamilyID: f.ID, Client: f.Client, CreatedAt: now, ExpiresAt: until},
		{Hash: digest(refresh), Kind: store.TokenRefresh, UserID: f.UserID, TeamID: f.TeamID, FamilyID: f.ID, Client: f.Client, CreatedAt: now, ExpiresAt: f.ExpiresAt},
	}
}

// answerTokens answers a token request with new tokens.
func (s *Service) answerTokens(w http.ResponseWriter, access, refresh string, life time.Duration) {
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token":  access,
		"token_type":    "Bearer",
		"expires_in":    int(life / time.Second),
		"refresh_token": refresh,
	})
}

// readForm reads an application/x-www-form-urlencoded body, bounded.
func readForm(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodPost {
		return errors.New("use POST")
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		return errors.New("the body must be a form (application/x-www-form-urlencoded) of at most 8 KiB")
	}
	return nil
}
