package identity_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tollgate/tollgate/internal/cli"
	"github.com/tollgate/tollgate/internal/gatewaytest"
	"github.com/tollgate/tollgate/internal/oidc/oidctest"
	"github.com/tollgate/tollgate/internal/store"
)

const masterKey = "identity-test-master-key-0123456789abcdef"

// testClock is the gateway's and the IdP's clock, moved by the tests.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// rig is a gateway with sign-in through a fake IdP, over SQLite.
type rig struct {
	url   string
	idp   *oidctest.IdP
	db    *store.Store
	clock *testClock
	logs  *gatewaytest.LogBuffer
}

// config is the gateway's configuration: two echo models, team eng may
// call only "allowed"; team ops has limits and no managed settings.
const configTemplate = `
providers:
  - { name: demo, type: echo }
models:
  - { name: allowed, targets: [ { provider: demo } ], pricing: { input: "3", output: "15" } }
  - { name: other, targets: [ { provider: demo } ], pricing: { input: "3", output: "15" } }
identity:
  public_url: %s
  oidc:
    issuer: %s
    client_id: %s
    client_secret: %s
    admin_groups: [platform]
    audiences: [%s, tollgate-api]
  tokens: { access_ttl: 4m }
  teams:
    - name: eng
      idp_groups: [eng]
      models: [allowed]
      limits: { rpm: 1000 }
      claude_code: { managed_settings: { model: claude-sonnet-4-5, permissions: { deny: ["Bash(curl:*)"] } } }
    - name: ops
      idp_groups: [ops]
      limits: { rpm: 3 }
    - name: fin
      idp_groups: [fin]
      limits: { budget_usd: "0.0005", budget_period: monthly }
%s`

func newRig(t *testing.T, extra string) *rig {
	t.Helper()
	clk := &testClock{t: time.Date(2031, 3, 10, 9, 0, 0, 0, time.UTC)}
	idp := oidctest.New(t, oidctest.WithHost("localhost"), oidctest.WithClock(clk.Now))
	db := gatewaytest.OpenDB(t)
	u, logs := gatewaytest.StartAt(t, func(u string) string {
		return fmt.Sprintf(configTemplate, u, idp.URL, idp.ClientID, idp.ClientSecret, idp.ClientID, extra)
	}, cli.Options{MasterKey: masterKey, Store: db, Now: clk.Now})
	return &rig{url: u, idp: idp, db: db, clock: clk, logs: logs}
}

// form posts a form and returns the status and body.
func (r *rig) form(t *testing.T, path string, v url.Values) (int, gjson.Result) {
	t.Helper()
	resp, err := http.PostForm(r.url+path, v)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, gjson.ParseBytes(b)
}

// call sends an Anthropic Messages request with the bearer token.
func (r *rig) call(t *testing.T, token, model string) (int, gjson.Result) {
	t.Helper()
	body := `{"model":"` + model + `","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`
	req, _ := http.NewRequest("POST", r.url+"/v1/messages?beta=true", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("anthropic-version", "2023-06-01")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, gjson.ParseBytes(b)
}

// browser plays the person at the browser: it opens the verification
// link, submits the form as it is (never typing a code itself), follows
// the IdP (which approves its user with no page) and the callback.
func browser(t *testing.T, link string) (int, string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err := c.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("verification page: %d\n%s", resp.StatusCode, page)
	}
	fields := url.Values{}
	for _, m := range regexp.MustCompile(`<input[^>]*name="([a-z_]+)"[^>]*value="([^"]*)"`).FindAllStringSubmatch(string(page), -1) {
		fields.Set(m[1], m[2])
	}
	if fields.Get("user_code") == "" || fields.Get("csrf") == "" {
		t.Fatalf("the verification form lacks its code or token:\n%s", page)
	}
	u, _ := url.Parse(link)
	resp, err = c.PostForm(u.Scheme+"://"+u.Host+"/oauth/device", fields)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// signIn runs Claude Code's device sign-in and returns the tokens.
func (r *rig) signIn(t *testing.T) (access, refresh string) {
	t.Helper()
	st, d := r.form(t, "/oauth/device_authorization", nil)
	if st != http.StatusOK {
		t.Fatalf("device authorization: %d %s", st, d.Raw)
	}
	st, page := browser(t, d.Get("verification_uri_complete").String())
	if st != http.StatusOK || !strings.Contains(page, "Claude Code is connected") {
		t.Fatalf("browser step: %d\n%s", st, page)
	}
	st, tok := r.form(t, "/oauth/token", url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:device_code"}, "device_code": {d.Get("device_code").String()}})
	if st != http.StatusOK {
		t.Fatalf("token: %d %s", st, tok.Raw)
	}
	return tok.Get("access_token").String(), tok.Get("refresh_token").String()
}

// requests lists the ledger's records, newest first.
func (r *rig) requests(t *testing.T) []store.Request {
	t.Helper()
	recs, err := r.db.Requests(context.Background(), store.RequestFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// publicKeyPEM is the IdP's public key as PEM: what an attacker signs an
// HS256 token with, hoping the verifier takes it for a shared secret.
func publicKeyPEM(t *testing.T, idp *oidctest.IdP) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(idp.PublicKey())
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}
