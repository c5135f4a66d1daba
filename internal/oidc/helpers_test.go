package oidc

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/oidc/oidctest"
)

// start is a fixed instant: no test depends on today's date.
var start = time.Date(2030, 1, 31, 23, 59, 30, 0, time.UTC)

// testClock is a clock the test moves.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *testClock { return &testClock{t: start} }

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// setup starts a fake IdP and a Provider for it sharing one clock; edit
// changes the Provider's Config.
func setup(t testing.TB, edit func(*Config), opts ...oidctest.Option) (*oidctest.IdP, *Provider, *testClock) {
	t.Helper()
	clk := newClock()
	idp := oidctest.New(t, append([]oidctest.Option{oidctest.WithClock(clk.Now)}, opts...)...)
	cfg := Config{
		Issuer:       idp.URL,
		ClientID:     idp.ClientID,
		ClientSecret: idp.ClientSecret,
		Audiences:    []string{"tollgate", idp.ClientID},
		Now:          clk.Now,
	}
	if edit != nil {
		edit(&cfg)
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return idp, p, clk
}

func verify(t testing.TB, p *Provider, raw string) (Identity, error) {
	t.Helper()
	return p.VerifyBearer(context.Background(), raw)
}

// newHangingServer answers nothing: it signals arrived and holds each
// request until the client gives up.
func newHangingServer(t *testing.T, arrived chan<- struct{}) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case arrived <- struct{}{}:
		default:
		}
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return srv
}
