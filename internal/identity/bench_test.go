package identity_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/auth"
	"github.com/tollgate/tollgate/internal/cli"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/gatewaytest"
	"github.com/tollgate/tollgate/internal/oidc/oidctest"
	"github.com/tollgate/tollgate/internal/store"
)

// BenchmarkCredential is a whole request in process (auth, limits, the
// echo upstream) by the credential it carries: a virtual key with limits
// of its own (one scope), a key a user owns in a team (key, user and team
// scopes admitted together), a token minted at sign-in, and an IdP JWT
// (verified once, then cached). The differences are what people and
// their composed limits cost per request.
func BenchmarkCredential(b *testing.B) {
	clk := &testClock{t: time.Now()}
	idp := oidctest.New(b, oidctest.WithClock(clk.Now))
	db := gatewaytest.OpenDB(b)
	yaml := fmt.Sprintf(`
providers:
  - { name: demo, type: echo }
models:
  - { name: m, targets: [ { provider: demo } ] }
identity:
  public_url: http://127.0.0.1:1
  oidc: { issuer: %s, client_id: %s, client_secret: %s }
  teams:
    - { name: squad, idp_groups: [eng], limits: { rpm: 1000000000 }, member_limits: { rpm: 1000000000 } }
`, idp.URL, idp.ClientID, idp.ClientSecret)
	cfg, err := config.Parse([]byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		b.Fatal(err)
	}
	srv, err := cli.Build(cfg, cli.Options{MasterKey: masterKey, Store: db, Logger: slog.New(slog.DiscardHandler), Now: clk.Now})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(srv.Close)
	ctx := context.Background()
	team, _ := db.TeamByName(ctx, "squad")
	u := store.User{ID: "usr_bench", Subject: "bench@example.com", Source: "admin", PrimaryTeamID: team.ID, CreatedAt: time.Now(), Limits: []byte(`{"rpm":1000000000}`)}
	if err := db.CreateUser(ctx, u); err != nil {
		b.Fatal(err)
	}
	if err := db.AddMember(ctx, team.ID, u.ID, "admin"); err != nil {
		b.Fatal(err)
	}
	key := func(owner string) string {
		secret, hash, prefix := auth.NewSecret()
		k := store.Key{ID: auth.NewKeyID(), Name: "bench", Hash: hash, Prefix: prefix, CreatedAt: time.Now(), UserID: owner,
			Limits: []byte(`{"rpm":1000000000}`), ModelLimits: []byte("{}"), Metadata: []byte("{}")}
		if owner != "" {
			k.TeamID = team.ID
		}
		if err := db.CreateKey(ctx, k); err != nil {
			b.Fatal(err)
		}
		return secret
	}
	// A sign-in token, minted as the token endpoint mints them.
	access := "tga_benchbenchbenchbenchbenchbenchbenchbenchben"
	sum := sha256Of(access)
	if err := db.CreateToken(ctx, store.Token{Hash: sum, Kind: "access", UserID: u.ID, TeamID: team.ID, FamilyID: "fam_bench",
		Client: "bench", CreatedAt: time.Now(), ExpiresAt: time.Now().Add(24 * time.Hour)}); err != nil {
		b.Fatal(err)
	}
	idp.SetUser(oidctest.User{Sub: "jwt-sub", Email: "jwt@example.com", Groups: []string{"eng"}})
	jwt := idp.Token(idp.ClientID, 24*time.Hour)

	body := `{"model":"m","max_tokens":16,"messages":[{"role":"user","content":"hello there"}]}`
	for _, tc := range []struct{ name, cred string }{
		{"key", key("")},
		{"owned-key", key(u.ID)},
		{"signin-token", access},
		{"idp-jwt", jwt},
	} {
		b.Run(tc.name, func(b *testing.B) {
			do := func() int {
				req := httptest.NewRequest("POST", "/v1/messages", strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+tc.cred)
				req.Header.Set("anthropic-version", "2023-06-01")
				w := httptest.NewRecorder()
				srv.Handler.ServeHTTP(w, req)
				return w.Code
			}
			if c := do(); c != http.StatusOK { // warm the caches
				b.Fatalf("status %d", c)
			}
			b.ReportAllocs()
			for b.Loop() {
				do()
			}
		})
	}
}

func sha256Of(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}
