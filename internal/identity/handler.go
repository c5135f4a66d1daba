package identity

import (
	"net/http"

	"github.com/tollgate/tollgate/internal/auth"
)

// Paths lists the paths Handler serves, for the server's mux.
var Paths = []string{
	"/.well-known/oauth-authorization-server",
	"/oauth/",
	"/managed/settings",
}

// Handler serves sign-in: the OAuth discovery document, the device
// authorization and token endpoints, the browser pages and the IdP's
// callback, and the managed settings. authn authenticates the bearer of
// /managed/settings (a sign-in token, as on the API).
func (s *Service) Handler(authn *auth.Authenticator) http.Handler {
	s.authn = authn
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", s.discovery)
	mux.HandleFunc("POST /oauth/device_authorization", s.deviceAuthorization)
	mux.HandleFunc("POST /oauth/token", s.token)
	mux.HandleFunc("GET /oauth/device", s.devicePage)
	mux.HandleFunc("POST /oauth/device", s.deviceSubmit)
	mux.HandleFunc("GET /oauth/callback", s.callback)
	mux.HandleFunc("GET /oauth/console", s.consoleSignIn)
	mux.HandleFunc("GET /managed/settings", s.managedSettings)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		allow := map[string]string{"/.well-known/oauth-authorization-server": "GET", "/oauth/device_authorization": "POST",
			"/oauth/token": "POST", "/oauth/device": "GET, POST", "/oauth/callback": "GET", "/oauth/console": "GET"}
		switch a, ok := allow[r.URL.Path]; {
		case r.URL.Path == "/managed/settings":
			w.Header().Set("Allow", "GET")
			writeAnthropicError(w, http.StatusMethodNotAllowed, "invalid_request_error", "use GET")
		case ok:
			w.Header().Set("Allow", a)
			writeOAuthError(w, oauthError{http.StatusMethodNotAllowed, "invalid_request", "method " + r.Method + " is not allowed on " + r.URL.Path + "; use " + a})
		default:
			writeOAuthError(w, oauthError{http.StatusNotFound, "invalid_request", "no such endpoint: " + r.Method + " " + r.URL.Path})
		}
	})
	return mux
}
