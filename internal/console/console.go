// Package console is the operator console served by the gateway at
// /console/: keys, usage, the request log, routes and limits, users,
// teams, agent sessions and the audit log, in server rendered HTML
// (html/template, embedded; no script from elsewhere). The master key
// signs in to all of it, and so does a user who is an operator (signed in
// through the identity provider); another user to their own usage,
// requests, keys, sessions and limits; a virtual key to a read-only view
// of its own usage, requests and limits.
package console

import (
	"context"
	"embed"
	"io/fs"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/tollgate/tollgate/internal/admin"
	"github.com/tollgate/tollgate/internal/auth"
	"github.com/tollgate/tollgate/internal/clock"
	"github.com/tollgate/tollgate/internal/limiter"
	"github.com/tollgate/tollgate/internal/route"
	"github.com/tollgate/tollgate/internal/store"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

// Prefix is where the console is served.
const Prefix = "/console/"

// DefaultSessionTTL is how long a sign-in lasts.
const DefaultSessionTTL = 12 * time.Hour

// Options are what the console needs.
type Options struct {
	// Admin returns the admin service in force (it may change on reload).
	Admin func() *admin.Service
	Store *store.Store
	Auth  *auth.Authenticator
	// Routes returns the route table in force (it may change on reload).
	Routes func() *route.Table
	// LimitUse reports the live use of a key's limits (the limiter's
	// counters); nil when nothing is limited.
	LimitUse func(context.Context, admin.KeyView) ([]limiter.Use, error)
	Logger   *slog.Logger
	// SessionTTL is how long a sign-in lasts (DefaultSessionTTL when 0).
	SessionTTL time.Duration
	// Now is the clock (clock.Now when nil).
	Now func() time.Time
	// SecureCookie is config.Console.SecureCookie: when the session
	// cookie is marked Secure ("" is auto).
	SecureCookie string
	// TrustedProxies are the proxies whose X-Forwarded-Proto says
	// whether the browser reached them over HTTPS.
	TrustedProxies []netip.Prefix
	// SSO says the identity service serves the browser sign-in at
	// SSOPath: the sign-in page then offers it above the key form.
	SSO bool
}

// SSOPath is where the identity service starts a browser sign-in at the
// company's identity provider; it ends with Console.SignInUser.
const SSOPath = "/oauth/console"

// Console serves the console. It is safe for concurrent use.
type Console struct {
	o     Options
	pages map[string]*lazyPage // by name, parsed on first use
	mux   *http.ServeMux
}

// New returns the console. Its pages are parsed when first rendered, so
// New fails on nothing it is given today.
func New(o Options) (*Console, error) {
	if o.SessionTTL <= 0 {
		o.SessionTTL = DefaultSessionTTL
	}
	if o.Now == nil {
		o.Now = clock.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Console{o: o, pages: newPages(), mux: http.NewServeMux()}
	static, _ := fs.Sub(staticFiles, "static")
	c.mux.Handle("GET /console/static/", http.StripPrefix("/console/static/", cacheStatic(http.FileServerFS(static))))
	c.mux.HandleFunc("GET /console/{$}", c.home)
	c.mux.HandleFunc("GET /console/signin", c.signinForm)
	c.mux.HandleFunc("POST /console/signin", c.signin)
	c.mux.Handle("POST /console/signout", c.session(anyone, c.signout))
	c.mux.Handle("GET /console/overview", c.session(anyone, c.overview))
	c.mux.Handle("GET /console/usage", c.session(anyone, c.usage))
	c.mux.Handle("GET /console/usage.csv", c.session(anyone, c.usageCSV))
	c.mux.Handle("GET /console/requests", c.session(anyone, c.requests))
	c.mux.Handle("GET /console/requests/{id}", c.session(anyone, c.request))
	c.mux.Handle("GET /console/limits", c.session(anyone, c.limits))
	c.mux.Handle("GET /console/keys", c.session(people, c.keys))
	c.mux.Handle("POST /console/keys", c.session(people, c.createKey))
	c.mux.Handle("GET /console/keys/{id}", c.session(people, c.keyForm))
	c.mux.Handle("POST /console/keys/{id}", c.session(masterOnly, c.updateKey))
	c.mux.Handle("POST /console/keys/{id}/revoke", c.session(people, c.revokeKey))
	c.mux.Handle("GET /console/sessions", c.session(people, c.agentSessions))
	c.mux.Handle("GET /console/routes", c.session(masterOnly, c.routes))
	c.mux.Handle("GET /console/users", c.session(masterOnly, c.users))
	c.mux.Handle("GET /console/users/{id}", c.session(masterOnly, c.user))
	c.mux.Handle("GET /console/teams", c.session(masterOnly, c.teams))
	c.mux.Handle("GET /console/teams/{id}", c.session(masterOnly, c.team))
	c.mux.Handle("GET /console/audit", c.session(masterOnly, c.audit))
	c.mux.HandleFunc("/console/", func(w http.ResponseWriter, r *http.Request) {
		c.fail(w, r, nil, http.StatusNotFound, "There is no such page.")
	})
	return c, nil
}

// ServeHTTP serves the console's pages with its security headers.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	// Everything is served from here; no inline script or style.
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	c.mux.ServeHTTP(w, r)
}

// cacheStatic lets browsers keep the console's own CSS and script for a
// while: they change only with the binary.
func cacheStatic(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		h.ServeHTTP(w, r)
	})
}

func (c *Console) svc() *admin.Service { return c.o.Admin() }

func (c *Console) home(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, "/console/overview", http.StatusSeeOther)
}
