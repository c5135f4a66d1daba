package console

import (
	"crypto/tls"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/tollgate/tollgate/internal/config"
)

// The session cookie is Secure when the browser reached the console over
// HTTPS: directly, or through a trusted proxy that says so; an untrusted
// peer's X-Forwarded-Proto changes nothing; the setting overrides both.
func TestSessionCookieSecure(t *testing.T) {
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	for _, tt := range []struct {
		name, mode, remote, proto string
		tls, want                 bool
	}{
		{"plain HTTP", "", "192.0.2.1:5000", "", false, false},
		{"TLS", "", "192.0.2.1:5000", "", true, true},
		{"trusted proxy, https", "", "10.1.2.3:5000", "https", false, true},
		{"trusted proxy, HTTPS list", "", "10.1.2.3:5000", "http, HTTPS", false, true},
		{"trusted proxy, http", "", "10.1.2.3:5000", "http", false, false},
		{"trusted proxy, spoofed first hop", "", "10.1.2.3:5000", "https, http", false, false},
		{"untrusted peer says https", "", "192.0.2.1:5000", "https", false, false},
		{"auto", config.SecureCookieAuto, "10.1.2.3:5000", "https", false, true},
		{"always", config.SecureCookieAlways, "192.0.2.1:5000", "", false, true},
		{"never", config.SecureCookieNever, "192.0.2.1:5000", "", true, false},
		{"IPv4-mapped trusted proxy", "", "[::ffff:10.1.2.3]:5000", "https", false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &Console{o: Options{SecureCookie: tt.mode, TrustedProxies: proxies}}
			r := httptest.NewRequest("POST", "/console/signin", nil)
			r.RemoteAddr = tt.remote
			if tt.proto != "" {
				r.Header.Set("X-Forwarded-Proto", tt.proto)
			}
			if tt.tls {
				r.TLS = &tls.ConnectionState{}
			}
			if got := c.secure(r); got != tt.want {
				t.Errorf("secure = %v, want %v", got, tt.want)
			}
		})
	}
}
