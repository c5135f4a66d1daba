package identity

import (
	"crypto/subtle"
	"embed"
	"errors"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/tollgate/tollgate/internal/auth"
	"github.com/tollgate/tollgate/internal/store"
	"golang.org/x/oauth2"
)

// The browser side of sign-in: the device verification page (where a
// developer confirms the code Claude Code shows and is sent to the IdP),
// the console's sign-in, and the callback the IdP sends browsers back to.
// Every flow carries state, a nonce and a PKCE verifier, kept in the
// database (any replica may get the callback) under the digest of the
// state and of a cookie set in the browser that began it: a callback
// from another browser (login CSRF) finds no flow.

//go:embed pages/*.html
var pageFiles embed.FS

var pages = template.Must(template.ParseFS(pageFiles, "pages/*.html"))

// Cookies of the browser flows. Both are SameSite=Lax: they ride on the
// IdP's redirect back (a top-level GET from another site) and on nothing
// posted from another site. Over HTTPS they are __Host- cookies, which a
// sibling subdomain cannot set (a same-site page could otherwise plant a
// CSRF token of its choosing).
const (
	csrfCookie = "tollgate_signin_csrf" // the verification form's double-submit token
	flowCookie = "tollgate_signin_flow" // binds a flow to its browser
	flowTTL    = 10 * time.Minute
)

// cookieName is a flow cookie's name: __Host- prefixed over HTTPS.
func (s *Service) cookieName(r *http.Request, name string) string {
	if s.secure(r) {
		return "__Host-" + name
	}
	return name
}

// sameOrigin refuses a form posted from another origin, when the browser
// says where it came from (Origin, Sec-Fetch-Site): with the cookie's
// token, a second check that the person is on tollgate's own page.
func (s *Service) sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	return strings.EqualFold(o, s.base(r))
}

// Flow purposes.
const (
	purposeDevice  = "device"
	purposeConsole = "console"
)

type pageData struct {
	Title    string
	Message  string
	Error    string
	UserCode string
	CSRF     string
	Who      string
	Team     string
}

func (s *Service) render(w http.ResponseWriter, status int, name string, d pageData) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	if err := pages.ExecuteTemplate(w, name, d); err != nil {
		s.log.Error("identity: rendering a page", "page", name, "error", err)
	}
}

func (s *Service) secure(r *http.Request) bool { return s.secureRequest(r) }

func (s *Service) setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge time.Duration) {
	path := "/oauth/"
	if s.secure(r) {
		path = "/" // __Host- cookies must have Path=/
	}
	http.SetCookie(w, &http.Cookie{Name: s.cookieName(r, name), Value: value, Path: path, MaxAge: int(maxAge / time.Second),
		HttpOnly: true, Secure: s.secure(r), SameSite: http.SameSiteLaxMode})
}

func (s *Service) cookie(r *http.Request, name string) (*http.Cookie, error) {
	return r.Cookie(s.cookieName(r, name))
}

// devicePage shows the form that confirms a device code. The code from
// the link Claude Code opened is filled in, never submitted by itself
// (RFC 8628 §5.4): the person compares it with what their terminal shows.
func (s *Service) devicePage(w http.ResponseWriter, r *http.Request) {
	if s.idp == nil {
		s.render(w, http.StatusNotFound, "message.html", pageData{Title: "Sign-in is not configured", Error: "This gateway has no identity provider configured."})
		return
	}
	csrf := newSecret("")
	s.setCookie(w, r, csrfCookie, csrf, flowTTL)
	code := r.URL.Query().Get("user_code")
	if len(code) > 16 {
		code = ""
	}
	s.render(w, http.StatusOK, "device.html", pageData{Title: "Connect Claude Code", UserCode: code, CSRF: csrf})
}

// deviceSubmit checks the code and sends the browser to the IdP.
func (s *Service) deviceSubmit(w http.ResponseWriter, r *http.Request) {
	if s.idp == nil {
		http.NotFound(w, r)
		return
	}
	if err := readForm(w, r); err != nil {
		s.render(w, http.StatusBadRequest, "message.html", pageData{Title: "Sign-in failed", Error: err.Error()})
		return
	}
	c, err := s.cookie(r, csrfCookie)
	if err != nil || subtle.ConstantTimeCompare([]byte(c.Value), []byte(r.PostForm.Get("csrf"))) != 1 || c.Value == "" || !s.sameOrigin(r) {
		s.render(w, http.StatusForbidden, "message.html", pageData{Title: "Sign-in failed",
			Error: "This form is from another page or has expired. Open the link Claude Code showed you again."})
		return
	}
	retry := func(status int, msg string) {
		csrf := newSecret("")
		s.setCookie(w, r, csrfCookie, csrf, flowTTL)
		s.render(w, status, "device.html", pageData{Title: "Connect Claude Code", Error: msg, CSRF: csrf})
	}
	if !s.pages.allow(s.limitKey(r), s.now()) {
		w.Header().Set("Retry-After", "60")
		retry(http.StatusTooManyRequests, "Too many codes tried from your address. Wait a minute and try again.")
		return
	}
	code := normalUserCode(r.PostForm.Get("user_code"))
	if code == "" {
		retry(http.StatusBadRequest, "That is not a code of this gateway: it has eight letters, like WDJB-MJHT.")
		return
	}
	d, err := s.st.DeviceByUserCode(r.Context(), code, s.now())
	switch {
	case store.IsNotFound(err) || err == nil && d.Status != "pending":
		retry(http.StatusBadRequest, "This code is not valid or has expired. Start the sign-in again in Claude Code.")
		return
	case err != nil:
		s.log.Error("identity: reading a device code", "error", err)
		retry(http.StatusServiceUnavailable, "The sign-in cannot be checked right now. Try again.")
		return
	}
	s.beginFlow(w, r, purposeDevice, code)
}

// consoleSignIn begins the console's sign-in through the IdP.
func (s *Service) consoleSignIn(w http.ResponseWriter, r *http.Request) {
	if s.idp == nil || s.o.ConsoleSignIn == nil {
		http.NotFound(w, r)
		return
	}
	if !s.pages.allow(s.limitKey(r), s.now()) {
		w.Header().Set("Retry-After", "60")
		s.render(w, http.StatusTooManyRequests, "message.html", pageData{Title: "Sign-in failed", Error: "Too many sign-ins from your address. Wait a minute and try again."})
		return
	}
	s.beginFlow(w, r, purposeConsole, "")
}

// beginFlow stores a new browser flow and redirects to the IdP.
func (s *Service) beginFlow(w http.ResponseWriter, r *http.Request, purpose, userCode string) {
	state, binding := newSecret(""), newSecret("")
	verifier := oauth2.GenerateVerifier()
	nonce := newSecret("")
	f := store.LoginFlow{StateHash: flowKey(state, binding), Nonce: nonce, Verifier: verifier, Purpose: purpose,
		UserCode: userCode, ExpiresAt: s.now().Add(flowTTL)}
	if err := s.st.PutLoginFlow(r.Context(), f); err != nil {
		s.log.Error("identity: storing a sign-in flow", "error", err)
		s.render(w, http.StatusServiceUnavailable, "message.html", pageData{Title: "Sign-in failed", Error: "The sign-in cannot start right now. Try again."})
		return
	}
	to, err := s.idp.AuthCodeURL(r.Context(), s.base(r)+"/oauth/callback", state, nonce, verifier)
	if err != nil {
		s.log.Error("identity: the identity provider cannot be reached", "error", err)
		s.render(w, http.StatusBadGateway, "message.html", pageData{Title: "Sign-in failed", Error: "The identity provider cannot be reached. Try again later."})
		return
	}
	s.setCookie(w, r, flowCookie, binding, flowTTL)
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// flowKey is what a flow is stored under: the digest of its state and of
// the cookie of the browser that began it.
func flowKey(state, binding string) []byte { return digest(state + "\x00" + binding) }

// callback finishes a browser flow: the IdP sent the browser back with a
// code (or an error). The code is exchanged (with the PKCE verifier), the
// ID token checked (with the nonce), the user provisioned, and then the
// device code approved or the console session opened.
func (s *Service) callback(w http.ResponseWriter, r *http.Request) {
	if s.idp == nil {
		http.NotFound(w, r)
		return
	}
	fail := func(status int, msg string) {
		s.render(w, status, "message.html", pageData{Title: "Sign-in failed", Error: msg})
	}
	q := r.URL.Query()
	c, cerr := s.cookie(r, flowCookie)
	state := q.Get("state")
	if cerr != nil || state == "" {
		fail(http.StatusBadRequest, "This sign-in was not started in this browser, or it has expired. Start again.")
		return
	}
	f, err := s.st.TakeLoginFlow(r.Context(), flowKey(state, c.Value), s.now())
	switch {
	case store.IsNotFound(err):
		fail(http.StatusBadRequest, "This sign-in was not started in this browser, or it has expired. Start again.")
		return
	case err != nil:
		s.log.Error("identity: reading a sign-in flow", "error", err)
		fail(http.StatusServiceUnavailable, "The sign-in cannot be checked right now. Try again.")
		return
	}
	s.setCookie(w, r, flowCookie, "", -1)
	if e := q.Get("error"); e != "" {
		s.log.Info("identity: the identity provider refused a sign-in", "error", e, "description", q.Get("error_description"))
		if f.Purpose == purposeDevice {
			_ = s.st.DecideDevice(r.Context(), f.UserCode, false, "", "", s.now())
		}
		fail(http.StatusForbidden, "The identity provider did not sign you in.")
		return
	}
	id, err := s.idp.Exchange(r.Context(), s.base(r)+"/oauth/callback", q.Get("code"), f.Verifier, f.Nonce)
	if err != nil {
		s.log.Warn("identity: a sign-in's code or ID token was refused", "error", err)
		s.audit(r.Context(), r, store.AuditEvent{ActorKind: "system", Action: "signin_failed", Detail: detail(map[string]any{"error": err.Error()})})
		fail(http.StatusBadGateway, "The identity provider's answer could not be verified. Try again.")
		return
	}
	u, team, err := s.provision(r.Context(), r, id, true)
	if err != nil {
		if errors.Is(err, auth.ErrUnavailable) {
			s.log.Error("identity: provisioning a user", "error", err)
			fail(http.StatusServiceUnavailable, "The sign-in cannot be completed right now. Try again.")
			return
		}
		fail(http.StatusForbidden, "Your account may not use this gateway. Ask your administrator.")
		return
	}
	switch f.Purpose {
	case purposeDevice:
		if id.RefreshToken != "" {
			// Refreshing the sign-in will ask the IdP again (askIdP).
			if err := s.st.SealDeviceIdP(r.Context(), f.UserCode, s.seal(id.RefreshToken), s.now()); err != nil && !store.IsNotFound(err) {
				s.log.Error("identity: keeping the IdP's refresh token", "error", err)
				fail(http.StatusServiceUnavailable, "The sign-in cannot be completed right now. Try again.")
				return
			}
		}
		if err := s.st.DecideDevice(r.Context(), f.UserCode, true, u.ID, team, s.now()); err != nil {
			if errors.Is(err, store.ErrDeviceNotPending) || store.IsNotFound(err) {
				fail(http.StatusBadRequest, "This code has expired or was already used. Start the sign-in again in Claude Code.")
				return
			}
			s.log.Error("identity: approving a device code", "error", err)
			fail(http.StatusServiceUnavailable, "The sign-in cannot be completed right now. Try again.")
			return
		}
		teamName := ""
		if team != "" {
			if t, err := s.st.TeamByID(r.Context(), team); err == nil {
				teamName = t.Name
			}
		}
		s.render(w, http.StatusOK, "message.html", pageData{Title: "Signed in", Who: u.Subject, Team: teamName,
			Message: "Claude Code is connected. You can close this window and return to your terminal."})
	case purposeConsole:
		if err := s.o.ConsoleSignIn(w, r, u); err != nil {
			s.log.Error("identity: opening a console session", "error", err)
			fail(http.StatusServiceUnavailable, "The console cannot open a session right now. Try again.")
		}
	default:
		fail(http.StatusBadRequest, "Unknown sign-in.")
	}
}
