package console

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/tollgate/tollgate/internal/admin"
	"github.com/tollgate/tollgate/internal/auth"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/store"
)

// cookieName is the session cookie. The cookie holds a random secret; the
// database holds its SHA-256, so a copy of the table opens no session.
const cookieName = "tollgate_console"

// viewer is who is signed in: the master key, a virtual key, or a user
// (an operator when Admin).
type viewer struct {
	session store.Session
	Master  bool
	KeyID   string // the virtual key, when one signed in
	KeyName string
	User    *store.User // the user, when one signed in
	Admin   bool        // the user is an operator
}

// operator reports whether v sees everything the master key sees.
func (v *viewer) operator() bool { return v.Master || v.Admin }

// member reports whether v is a user who is not an operator: they see
// their own data only.
func (v *viewer) member() bool { return v.User != nil && !v.Admin }

// access says who may see a page.
type access int

const (
	anyone     access = iota // everyone signed in, each for their own data
	people                   // operators, and users for their own data (not a virtual key)
	masterOnly               // operators: the master key and admin users
)

type pageFunc func(w http.ResponseWriter, r *http.Request, v *viewer)

// session runs h for a signed-in viewer allowed by a; others are sent to
// the sign-in page (or refused, for a virtual key on a master page).
// Requests that change state must carry the session's CSRF token.
func (c *Console) session(a access, h pageFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		v, err := c.viewer(r)
		if err != nil {
			if !errors.Is(err, store.ErrNoSession) {
				c.o.Logger.Error("console: reading the session", "error", err)
				c.fail(w, r, nil, http.StatusServiceUnavailable, "The console cannot read its sessions now; try again.")
				return
			}
			if r.Method == http.MethodGet {
				http.Redirect(w, r, "/console/signin", http.StatusSeeOther)
				return
			}
			c.fail(w, r, nil, http.StatusUnauthorized, "Your session has ended. Sign in again.")
			return
		}
		switch {
		case a == masterOnly && !v.operator():
			c.fail(w, r, v, http.StatusForbidden, "This page is for the master key and the console's operators.")
			return
		case a == people && v.KeyID != "":
			c.fail(w, r, v, http.StatusForbidden, "This page is for people signed in with their company account, and for the master key.")
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
			if err := r.ParseForm(); err != nil {
				c.fail(w, r, v, http.StatusBadRequest, "The form could not be read.")
				return
			}
			got := r.PostForm.Get("csrf")
			if subtle.ConstantTimeCompare([]byte(got), []byte(v.session.CSRF)) != 1 {
				c.fail(w, r, v, http.StatusForbidden, "The form is missing its security token, or it is from another session. Reload the page and try again.")
				return
			}
		}
		// What the admin service changes for this page is the viewer's
		// doing, in the audit log.
		kind, id := v.actor()
		h(w, r.WithContext(admin.WithActor(r.Context(), kind, id)), v)
	})
}

// actor is who v is in the audit log.
func (v *viewer) actor() (kind, id string) {
	switch {
	case v.User != nil:
		return admin.ActorUser, v.User.ID
	case v.KeyID != "":
		return admin.ActorKey, v.KeyID
	}
	return admin.ActorMaster, ""
}

// viewer reads the session of r, and checks that a virtual key or user
// signed in is still valid: a key revoked or expired since, or a user
// disabled or deleted since, ends its sessions.
func (c *Console) viewer(r *http.Request) (*viewer, error) {
	ck, err := r.Cookie(cookieName)
	if err != nil || ck.Value == "" {
		return nil, store.ErrNoSession
	}
	se, err := c.o.Store.SessionByID(r.Context(), sessionID(ck.Value), c.o.Now())
	if err != nil {
		return nil, err
	}
	v := &viewer{session: se, Master: se.KeyID == "" && se.UserID == "", KeyID: se.KeyID}
	if v.Master {
		return v, nil
	}
	if se.UserID != "" {
		u, err := c.o.Store.UserByID(r.Context(), se.UserID)
		if err != nil && !store.IsNotFound(err) {
			return nil, err
		}
		if err != nil || u.Disabled {
			c.o.Store.DeleteSession(r.Context(), se.ID)
			return nil, store.ErrNoSession
		}
		// An operator stays one while the user is: an admin flag taken
		// away since the sign-in takes effect at once.
		v.User, v.Admin = &u, se.Admin && u.Admin
		return v, nil
	}
	k, err := c.o.Store.KeyByID(r.Context(), se.KeyID)
	if err != nil || k.Revoked || k.ExpiresAt != nil && !c.o.Now().Before(*k.ExpiresAt) {
		c.o.Store.DeleteSession(r.Context(), se.ID)
		return nil, store.ErrNoSession
	}
	v.KeyName = k.Name
	return v, nil
}

func sessionID(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

func randomToken() string {
	var b [32]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func (c *Console) signinForm(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if _, err := c.viewer(r); err == nil {
		http.Redirect(w, r, "/console/overview", http.StatusSeeOther)
		return
	}
	c.signinPage(w, r, http.StatusOK, "")
}

// signinPage is the sign-in form, with msg as its error ("" for none) and,
// when the identity service serves the browser sign-in, a link to it.
func (c *Console) signinPage(w http.ResponseWriter, r *http.Request, status int, msg string) {
	c.render(w, r, status, "signin", nil, map[string]any{"Error": msg, "SSO": c.o.SSO, "SSOPath": SSOPath})
}

// signin checks the key given in the form as the API would (the same
// failed-authentication throttle), and starts a session for it.
func (c *Console) signin(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := r.ParseForm(); err != nil {
		c.signinPage(w, r, http.StatusBadRequest, "The form could not be read.")
		return
	}
	p, err := c.o.Auth.CheckKey(r, r.PostForm.Get("key"))
	if err != nil {
		status, msg := http.StatusUnauthorized, "That key is not valid."
		switch auth.Status(err) {
		case http.StatusTooManyRequests:
			status, msg = http.StatusTooManyRequests, "Too many failed sign-ins from your address. Wait a minute and try again."
			if d, ok := auth.RetryAfter(err); ok {
				w.Header().Set("Retry-After", strconv.Itoa(int((d+time.Second-1)/time.Second)))
			}
		case http.StatusServiceUnavailable:
			status, msg = http.StatusServiceUnavailable, "Keys cannot be checked now; try again."
		}
		c.o.Logger.Info("console: sign-in refused", "reason", auth.Reason(err), "client_ip", clientIP(r))
		c.signinPage(w, r, status, msg)
		return
	}
	if !p.Master && p.Key == nil {
		// A person's sign-in token or IdP token is not a key: a session
		// with neither key nor user would be the master key's. People sign
		// in through the identity provider (SignInUser).
		c.o.Logger.Info("console: sign-in refused", "reason", "signin_token", "client_ip", clientIP(r))
		c.signinPage(w, r, http.StatusUnauthorized, "That is a sign-in token, not a key. Sign in with your company account instead.")
		return
	}
	if err := c.startSession(w, r, store.Session{KeyID: p.KeyID()}); err != nil {
		c.o.Logger.Error("console: storing a session", "error", err)
		c.signinPage(w, r, http.StatusServiceUnavailable, "The console cannot store sessions now; try again.")
		return
	}
	c.o.Logger.Info("console: signed in", "key_id", p.KeyID(), "master", p.Master)
	http.Redirect(w, r, "/console/overview", http.StatusSeeOther)
}

// startSession stores se (who it is for) with a new secret and CSRF
// token, and sets its cookie on w.
func (c *Console) startSession(w http.ResponseWriter, r *http.Request, se store.Session) error {
	secret := randomToken()
	now := c.o.Now()
	se.ID, se.CSRF, se.CreatedAt, se.ExpiresAt = sessionID(secret), randomToken(), now, now.Add(c.o.SessionTTL)
	if err := c.o.Store.PutSession(r.Context(), se); err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: secret, Path: Prefix, Expires: se.ExpiresAt,
		HttpOnly: true, Secure: c.secure(r), SameSite: http.SameSiteStrictMode})
	return nil
}

// SignInUser opens a console session for u, whom the identity provider
// has just signed in, sets its cookie and sends the browser to the
// console. An operator's session (u.Admin) sees everything the master key
// does; another user's, their own usage, requests, keys and limits. The
// identity service calls it at the end of the browser sign-in.
func (c *Console) SignInUser(w http.ResponseWriter, r *http.Request, u store.User) error {
	if u.ID == "" || u.Disabled {
		return errors.New("console: a disabled or unknown user cannot sign in")
	}
	if err := c.startSession(w, r, store.Session{UserID: u.ID, Admin: u.Admin}); err != nil {
		return err
	}
	c.o.Logger.Info("console: signed in", "user_id", u.ID, "admin", u.Admin)
	http.Redirect(w, r, "/console/", http.StatusSeeOther)
	return nil
}

// signout ends the session on the server, not only in the browser.
func (c *Console) signout(w http.ResponseWriter, r *http.Request, v *viewer) {
	if err := c.o.Store.DeleteSession(r.Context(), v.session.ID); err != nil {
		c.fail(w, r, v, http.StatusServiceUnavailable, "The session could not be ended; try again.")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: Prefix, MaxAge: -1, HttpOnly: true, Secure: c.secure(r), SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/console/signin", http.StatusSeeOther)
}

// PurgeSessions deletes expired sessions; the gateway calls it hourly.
func (c *Console) PurgeSessions(ctx context.Context) (int64, error) {
	return c.o.Store.PurgeSessions(ctx, c.o.Now())
}

// secure says whether the session cookie is marked Secure: the browser
// reached the console over HTTPS, to this server or to a trusted proxy in
// front of it (which says so in X-Forwarded-Proto), or the configuration
// says always. A proxy that is not trusted cannot turn it off or on.
func (c *Console) secure(r *http.Request) bool {
	switch c.o.SecureCookie {
	case config.SecureCookieAlways:
		return true
	case config.SecureCookieNever:
		return false
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
	for _, p := range c.o.TrustedProxies {
		if p.Contains(ip) {
			// The proxy nearest us wrote the last value.
			last := proto[strings.LastIndexByte(proto, ',')+1:]
			return strings.EqualFold(strings.TrimSpace(last), "https")
		}
	}
	return false
}

func clientIP(r *http.Request) string {
	return r.RemoteAddr
}
