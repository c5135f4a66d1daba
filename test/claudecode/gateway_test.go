package claudecode_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/cli"
	"github.com/tollgate/tollgate/internal/gatewaytest"
	"github.com/tollgate/tollgate/internal/oidc/oidctest"
	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

const masterKey = "sk-tg-claudecode-test-master-3f9a17c2d4"

// developer is who signs in at the company's identity provider.
var developer = oidctest.User{Sub: "00u-dana", Email: "dana@example.com", Name: "Dana Developer", Groups: []string{"eng"}}

// gatewayConfig serves both models from the scripted upstream (each under
// an upstream name of its own); team eng, whose IdP group the developer
// is in, may use only managedModel, which its managed settings choose.
// Access tokens live four minutes: the CLI refreshes one that has fewer
// than five left, so every request of the run goes with a fresh one.
const gatewayConfig = `
providers:
  - { name: anthropic, type: anthropic, base_url: %[3]q, api_key: %[4]q }
models:
  - { name: %[5]s, targets: [ { provider: anthropic, model: up-%[5]s } ] }
  - { name: %[6]s, targets: [ { provider: anthropic, model: up-%[6]s } ] }
identity:
  public_url: %[1]s
  oidc:
    issuer: %[2]s
    client_id: %[7]s
    client_secret: %[8]s
    user_claim: email
    groups_claim: groups
    admin_groups: [platform]
  tokens: { access_ttl: 4m }
  teams:
    - name: eng
      idp_groups: [eng]
      models: [%[5]s]
      claude_code: { managed_settings: { model: %[5]s, permissions: { deny: ["Bash(curl:*)"] } } }
`

// gateway is tollgate with sign-in through a fake IdP, over SQLite. The
// IdP is named localhost and the gateway 127.0.0.1: two sites, as the
// company's IdP and its gateway are.
type gateway struct {
	url string
	db  *store.Store
}

func startGateway(t *testing.T, up *upstreamtest.Server) *gateway {
	t.Helper()
	idp := oidctest.New(t, oidctest.WithHost("localhost"))
	idp.SetUser(developer)
	db := gatewaytest.OpenDB(t)
	url, _ := gatewaytest.StartAt(t, func(url string) string {
		return fmt.Sprintf(gatewayConfig, url, idp.URL, up.URL, upstreamKey, managedModel, deniedModel, idp.ClientID, idp.ClientSecret)
	}, cli.Options{MasterKey: masterKey, Store: db})
	return &gateway{url: url, db: db}
}

// checkAttribution checks that the ledger charges every request to
// /v1/messages to the developer in team eng: served ones, as many as the
// upstream answered, and refused ones, each for deniedModel.
func (g *gateway) checkAttribution(t *testing.T, served int) {
	t.Helper()
	ctx := context.Background()
	user, err := g.db.UserBySubject(ctx, developer.Email)
	if err != nil {
		t.Fatalf("the developer (%s) is not a user: %v", developer.Email, err)
	}
	team, err := g.db.TeamByName(ctx, "eng")
	if err != nil {
		t.Fatalf("team eng: %v", err)
	}
	recs, err := g.db.Requests(ctx, store.RequestFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var ok, refused int
	for _, r := range recs {
		if r.Endpoint != "/v1/messages" {
			continue
		}
		if r.UserID != user.ID || r.TeamID != team.ID {
			t.Errorf("request %s (%s, %d) is charged to user %q, team %q; want %q (%s), %q (eng)", r.ID, r.Model, r.Status, r.UserID, r.TeamID, user.ID, developer.Email, team.ID)
		}
		switch {
		case r.Status == 200 && r.Model == managedModel:
			ok++
		case r.Status == 400 && r.Model == deniedModel && r.ErrorType == "invalid_request_error":
			refused++
		default:
			t.Errorf("request %s: %s answered %d %s", r.ID, r.Model, r.Status, r.ErrorType)
		}
	}
	if ok != served || refused == 0 {
		t.Errorf("the ledger holds %d served requests to /v1/messages and %d refused, want %d and some", ok, refused, served)
	}
}

// messages sends a minimal Messages request for model with the
// developer's token, as the CLI would.
func (g *gateway) messages(t *testing.T, token, model string) (int, string) {
	t.Helper()
	body := `{"model":"` + model + `","max_tokens":16,"messages":[{"role":"user","content":"Hello"}]}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, g.url+"/v1/messages?beta=true", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Anthropic-Version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(got)
}

func (g *gateway) host() string { return strings.TrimPrefix(g.url, "http://") }
