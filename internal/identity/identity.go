// Package identity is tollgate's people: users and teams, sign-in through
// the company's OpenID Connect provider (IdP-issued bearer JWTs, the
// console's browser sign-in, and Claude Code's gateway sign-in — an OAuth
// device flow whose browser leg goes through the IdP), the tokens the
// gateway mints at sign-in, and the managed settings it serves per team.
//
// It implements auth.People: the authenticator hands it every credential
// of a sign-in token's shape, and asks it who owns a virtual key. Users,
// teams, tokens, device codes and browser flows live in the database, so
// any replica serves any step of a sign-in.
package identity

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/tollgate/tollgate/internal/auth"
	"github.com/tollgate/tollgate/internal/clock"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/oidc"
	"github.com/tollgate/tollgate/internal/store"
)

// Options configure a Service.
type Options struct {
	Store *store.Store
	// IdP verifies IdP-issued tokens and runs browser sign-ins; nil when
	// no identity.oidc is configured (then only teams, users and their
	// keys exist, made through the admin API).
	IdP *oidc.Provider
	// Config is the identity section of the configuration.
	Config config.Identity
	// TrustedProxies name the client in X-Forwarded-For (auth.trusted_proxies).
	TrustedProxies []netip.Prefix
	// ConsoleSignIn opens a console session for a user who signed in
	// through the IdP and sends the browser on; nil when there is no console.
	ConsoleSignIn func(w http.ResponseWriter, r *http.Request, u store.User) error
	// SealKey seals the IdP's refresh tokens in the database; every
	// replica must have the same (the server derives it from the master
	// key).
	SealKey []byte
	Logger  *slog.Logger
	// Now is the clock (clock.Now when nil).
	Now func() time.Time
}

// Service is the identity layer. It is safe for concurrent use.
type Service struct {
	st     *store.Store
	idp    *oidc.Provider
	cfg    config.Identity
	admins map[string]bool // identity.oidc.admin_groups
	o      Options
	log    *slog.Logger
	now    func() time.Time

	authn   *auth.Authenticator // set by Handler
	people  peopleCache
	devices *perAddr // device authorizations per client address
	pages   *perAddr // verification page submissions and browser sign-ins per client address
	tokens  *perAddr // token endpoint requests per client address
}

// New returns the identity service. It does not contact the IdP: its
// discovery document and keys are fetched when first needed.
func New(o Options) *Service {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = clock.Now
	}
	s := &Service{st: o.Store, idp: o.IdP, cfg: o.Config, o: o, log: o.Logger, now: o.Now, admins: map[string]bool{}}
	if oc := o.Config.OIDC; oc != nil {
		for _, g := range oc.AdminGroups {
			s.admins[g] = true
		}
	}
	s.people.init()
	s.devices = newPerAddr(20, time.Minute)
	s.pages = newPerAddr(30, time.Minute)
	s.tokens = newPerAddr(600, time.Minute)
	return s
}

// SignInEnabled reports whether people sign in through an IdP.
func (s *Service) SignInEnabled() bool { return s.idp != nil }

// Token shapes. Each kind of credential has its own prefix, so that a
// token is never looked up as a virtual key (sk-tg-) nor the reverse,
// and a refresh token is never accepted as an access token.
const (
	accessPrefix  = "tga_"
	refreshPrefix = "tgr_"
	devicePrefix  = "tgd_"
)

// newSecret returns prefix and 32 random bytes, base64url: 256 bits.
func newSecret(prefix string) string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return prefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// newID returns prefix and 16 random bytes, for record ids.
func newID(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return prefix + base64.RawURLEncoding.EncodeToString(b[:])
}

func digest(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

// Handles reports whether a credential is a sign-in token: one the gateway
// minted, or, with an IdP, a JWT.
func (s *Service) Handles(credential string) bool {
	return strings.HasPrefix(credential, accessPrefix) || s.idp != nil && oidc.LooksLikeJWT(credential)
}

// unavailable logs a database or IdP failure and returns
// auth.ErrUnavailable: the client learns that credentials cannot be
// checked, never the cause (a host name, a driver's message, the IdP's
// own text).
func (s *Service) unavailable(err error) error {
	s.log.Error("identity: cannot check a sign-in credential", "error", err)
	return auth.ErrUnavailable
}

// clientIP is the client's address for the audit log.
func (s *Service) clientIP(r *http.Request) string {
	if a := auth.ClientAddr(r, s.o.TrustedProxies); a.IsValid() {
		return a.String()
	}
	return ""
}

// limitKey is what per-address limits count the client by: its address,
// or for IPv6 its /64.
func (s *Service) limitKey(r *http.Request) string {
	if a := auth.ClientAddr(r, s.o.TrustedProxies); a.IsValid() {
		return auth.AddrKey(a).String()
	}
	return ""
}

// audit records an event; a failure to record is logged, not returned:
// the event happened either way.
func (s *Service) audit(ctx context.Context, r *http.Request, e store.AuditEvent) {
	e.Time = s.now()
	if r != nil {
		e.ClientIP = s.clientIP(r)
		e.RequestID = r.Header.Get("X-Request-Id")
	}
	if e.Detail == nil {
		e.Detail = []byte("{}")
	}
	if err := s.st.AppendAudit(context.WithoutCancel(ctx), e); err != nil {
		s.log.Error("identity: writing the audit log", "action", e.Action, "error", err)
	}
}

// perAddr counts events per client address (an IPv6 address by its /64)
// in fixed windows: a bound on what one address may start (device
// authorizations, page submissions, token requests). It forgets
// everything at each window's end, so it holds at most the addresses of
// one window, and at most maxAddrs of them: past that, addresses it does
// not hold yet are refused until the window ends, and those it holds go
// on being counted.
type perAddr struct {
	mu     sync.Mutex
	limit  int
	window time.Duration
	start  time.Time
	counts map[string]int
}

const maxAddrs = 100_000

func newPerAddr(limit int, window time.Duration) *perAddr {
	return &perAddr{limit: limit, window: window, counts: map[string]int{}}
}

// allow counts one event from addr at now; false when addr is over its limit.
func (p *perAddr) allow(addr string, now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if now.Sub(p.start) >= p.window || now.Before(p.start) {
		p.start, p.counts = now, map[string]int{}
	}
	n, held := p.counts[addr]
	if !held && len(p.counts) >= maxAddrs {
		return false
	}
	p.counts[addr] = n + 1
	return n+1 <= p.limit
}

// Purge deletes the expired tokens, device codes and browser flows: what
// can no longer sign anyone in. The server calls it hourly.
func (s *Service) Purge(ctx context.Context) error {
	now := s.now()
	if _, err := s.st.DeleteExpiredTokens(ctx, now); err != nil {
		return err
	}
	_, err := s.st.PurgeAuthFlows(ctx, now)
	return err
}

// SetConsole names where a console sign-in through the IdP ends: the
// console opens a session for the user. Called once, before serving (the
// console is made after the identity service).
func (s *Service) SetConsole(signIn func(w http.ResponseWriter, r *http.Request, u store.User) error) {
	s.o.ConsoleSignIn = signIn
}
