package cli

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/identity"
	"github.com/tollgate/tollgate/internal/oidc"
	"github.com/tollgate/tollgate/internal/store"
)

// newIdentity makes the identity service over the database: users and
// teams (the configured teams created or updated now), and, with
// identity.oidc, sign-in through the IdP. Nil without a database.
func newIdentity(cfg *config.Config, db *store.Store, logger *slog.Logger, now func() time.Time, masterKey string) (*identity.Service, error) {
	if db == nil {
		if len(cfg.Identity.Teams) > 0 {
			return nil, errors.New("identity.teams needs a database (database.url): teams are kept there")
		}
		return nil, nil
	}
	var idp *oidc.Provider
	if o := cfg.Identity.OIDC; o != nil {
		var err error
		idp, err = oidc.New(oidc.Config{Issuer: o.Issuer, ClientID: o.ClientID, ClientSecret: o.ClientSecret,
			UserClaim: o.UserClaim, GroupsClaim: o.GroupsClaim, Audiences: o.Audiences, Scopes: o.Scopes,
			Algorithms: o.Algorithms, Logger: logger, Now: now})
		if err != nil {
			return nil, err
		}
	}
	svc := identity.New(identity.Options{Store: db, IdP: idp, Config: cfg.Identity, TrustedProxies: cfg.Auth.Proxies(), Logger: logger, Now: now,
		SealKey: []byte(masterKey)})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := svc.SyncConfigTeams(ctx, cfg.Identity.Teams); err != nil {
		return nil, err
	}
	return svc, nil
}

// mountIdentity serves sign-in's endpoints beside the API.
func (lv *live) mountIdentity(mux *http.ServeMux, wrap func(http.Handler) http.Handler) {
	if lv.identity == nil {
		return
	}
	h := wrap(lv.identity.Handler(lv.authn))
	for _, p := range identity.Paths {
		mux.Handle(p, h)
	}
	go func() {
		t := time.NewTicker(time.Hour)
		defer t.Stop()
		for {
			select {
			case <-lv.done:
				return
			case <-t.C:
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				if err := lv.identity.Purge(ctx); err != nil {
					lv.log.Warn("identity: purging expired tokens and sign-in flows", "error", err)
				}
				cancel()
			}
		}
	}()
}
