package claudecode_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"testing"
)

// TestBrowserSameSite checks the test's browser against the SameSite
// rules the sign-in relies on: the gateway (127.0.0.1) and the identity
// provider (localhost) are two sites, so what comes back from the
// provider's redirect carries no Strict cookie, and a Lax one only on a
// GET.
func TestBrowserSameSite(t *testing.T) {
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/set" {
			http.SetCookie(w, &http.Cookie{Name: "strict", Value: "1", SameSite: http.SameSiteStrictMode})
			http.SetCookie(w, &http.Cookie{Name: "lax", Value: "1", SameSite: http.SameSiteLaxMode})
			http.SetCookie(w, &http.Cookie{Name: "unset", Value: "1"})
		}
		var names []string
		for _, c := range r.Cookies() {
			names = append(names, c.Name)
		}
		sort.Strings(names)
		w.Write([]byte(strings.Join(names, " ")))
	}))
	defer gw.Close()
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	}))
	defer idp.Close()
	gwURL, _ := url.Parse(gw.URL)
	idpURL, _ := url.Parse(strings.Replace(idp.URL, "127.0.0.1", "localhost", 1))

	b := newBrowser()
	b.navigate(t, http.MethodGet, gwURL.JoinPath("/set"), nil, nil)
	bounce := idpURL.JoinPath("/authorize")
	bounce.RawQuery = url.Values{"to": {gw.URL + "/callback"}}.Encode()
	for _, tc := range []struct {
		name      string
		method    string
		to        *url.URL
		initiator *url.URL
		want      string
	}{
		{"typed", http.MethodGet, gwURL.JoinPath("/page"), nil, "lax strict unset"},
		{"same-site form", http.MethodPost, gwURL.JoinPath("/form"), gwURL, "lax strict unset"},
		{"redirected back from the other site", http.MethodGet, bounce, gwURL, "lax unset"},
		{"a link on the other site", http.MethodGet, gwURL.JoinPath("/page"), idpURL, "lax unset"},
		{"a form on the other site", http.MethodPost, gwURL.JoinPath("/form"), idpURL, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := b.navigate(t, tc.method, tc.to, url.Values{"a": {"b"}}, tc.initiator)
			if p.body != tc.want {
				t.Errorf("the gateway got cookies %q, want %q\n%s", p.body, tc.want, b.log())
			}
		})
	}
}
