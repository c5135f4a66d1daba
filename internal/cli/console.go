package cli

import (
	"context"
	"net/http"
	"time"

	"github.com/tollgate/tollgate/internal/admin"
	"github.com/tollgate/tollgate/internal/console"
	"github.com/tollgate/tollgate/internal/gateway"
	"github.com/tollgate/tollgate/internal/limiter"
	"github.com/tollgate/tollgate/internal/route"
	"github.com/tollgate/tollgate/internal/store"
)

// mountConsole serves the operator console at /console/ when there is a
// database (its keys, usage and sessions live there), and purges expired
// sessions hourly until the gateway closes.
func (lv *live) mountConsole(mux *http.ServeMux) error {
	if lv.db == nil {
		return nil
	}
	c, err := console.New(console.Options{
		// The routes of now: a reload may change the models keys may name.
		Admin:  func() *admin.Service { return admin.New(lv.db, lv.routes(), lv.keys, lv.log) },
		Store:  lv.db,
		Auth:   lv.authn,
		Routes: lv.routes,
		LimitUse: func(ctx context.Context, k admin.KeyView) ([]limiter.Use, error) {
			return lv.gw.KeyLimitUse(ctx, k.ID, k.Limits, k.ModelLimits)
		},
		Logger:         lv.log,
		SecureCookie:   lv.start.Console.SecureCookie,
		TrustedProxies: lv.start.Auth.Proxies(),
		SSO:            lv.identity != nil && lv.identity.SignInEnabled(),
	})
	if err != nil {
		return err
	}
	if lv.identity != nil {
		lv.identity.SetConsole(c.SignInUser)
	}
	mux.Handle(console.Prefix, gateway.WithRequestID(c))
	go func() {
		t := time.NewTicker(time.Hour)
		defer t.Stop()
		for {
			select {
			case <-lv.done:
				return
			case <-t.C:
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				if _, err := c.PurgeSessions(ctx); err != nil {
					lv.log.Warn("console: purging expired sessions", "error", err)
				}
				cancel()
			}
		}
	}()
	return nil
}

// consoleURL is where the gateway sends a browser that opens /: the
// console, which is served when there is a database (mountConsole).
func consoleURL(db *store.Store) string {
	if db == nil {
		return ""
	}
	return console.Prefix
}

// routes is the route table in force (never waiting for a reload).
func (lv *live) routes() *route.Table { return lv.gw.Routes() }
