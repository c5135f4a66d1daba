package console_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/tollgate/tollgate/internal/cli"
	"github.com/tollgate/tollgate/internal/gatewaytest"
	"github.com/tollgate/tollgate/internal/oidc/oidctest"
)

// ssoConfig is the gateway of config (at its public URL) with sign-in at
// the IdP (issuer, client id and secret): members of the IdP's group eng
// are team eng, which may call echo; members of ops operate the console.
const ssoConfig = config + `
identity:
  public_url: %s
  oidc: { issuer: %q, client_id: %q, client_secret: %q, admin_groups: [ops] }
  teams:
    - { name: eng, idp_groups: [eng], models: [echo], member_limits: { rpm: 100 } }
`

// waitsFor is why the single sign-on test skips until what it drives is
// wired.
const waitsFor = "waits for internal/cli to give the identity service the console's sign-in " +
	"(identity.Options.ConsoleSignIn = console.SignInUser) and to set console.Options.SSO"

// ssoGateway starts a gateway (on 127.0.0.1, over SQLite) whose console
// signs people in at idp (on localhost, another site to the browser).
func ssoGateway(t *testing.T, idp *oidctest.IdP) string {
	t.Helper()
	base, _ := gatewaytest.StartAt(t, func(u string) string {
		return fmt.Sprintf(ssoConfig, u, idp.URL, idp.ClientID, idp.ClientSecret)
	}, cli.Options{MasterKey: masterKey, Store: gatewaytest.OpenDB(t)})
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(base + "/oauth/console")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		t.Skipf("%s: /oauth/console is not served", waitsFor)
	}
	resp, err = http.Get(base + "/console/signin")
	if err != nil {
		t.Fatal(err)
	}
	if page := readBody(t, resp); !strings.Contains(page, `href="/oauth/console"`) {
		t.Skipf("%s: the sign-in page offers no company sign-in", waitsFor)
	}
	return base
}

// ssoSignIn signs the IdP's user in from the console's sign-in page: the
// link, the IdP's /authorize (which approves at once), the callback, and
// the console as that user.
func ssoSignIn(t *testing.T, ctx context.Context, base, who string) {
	t.Helper()
	if err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/console/signin"),
		chromedp.WaitVisible(chromedp.ID("sso")),
		chromedp.Click(chromedp.ID("sso")),
		chromedp.WaitVisible(chromedp.CSS(`body[data-page="overview"] h1`)),
	); err != nil {
		t.Fatalf("signing %s in through the IdP: %v", who, err)
	}
	if got := text(t, ctx, "#who"); got != who {
		t.Fatalf("signed in as %q, want %s", got, who)
	}
}

// createKey makes a key on the keys page and returns its secret.
func createKey(t *testing.T, ctx context.Context, base, name string) string {
	t.Helper()
	if err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/console/keys"),
		chromedp.SendKeys(chromedp.ID("new-name"), name),
		chromedp.Submit(chromedp.ID("new-name")),
		chromedp.WaitVisible(chromedp.ID("new-secret")),
	); err != nil {
		t.Fatalf("creating key %s: %v", name, err)
	}
	return text(t, ctx, "#new-secret")
}

// rows counts the rows of the page's table that hold a record.
func rows(t *testing.T, ctx context.Context, u string) int {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(u), chromedp.WaitVisible(chromedp.CSS("table"))); err != nil {
		t.Fatalf("%s: %v", u, err)
	}
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("table tbody tr:not(:has(td.muted))").length`))
	if err != nil {
		t.Fatalf("%s: %v", u, err)
	}
	return n
}

// TestConsoleSSO: people sign in to the console with their company
// account, through the IdP on another site; each makes a key and calls
// the gateway with it; a member then sees their own usage, requests and
// keys only, and the master key sees both, by user.
func TestConsoleSSO(t *testing.T) {
	ctx := browser(t)
	idp := oidctest.New(t, oidctest.WithHost("localhost"))
	base := ssoGateway(t, idp)
	dir := artifacts(t)

	alice := ctx
	idp.SetUser(oidctest.User{Sub: "alice-sub", Email: "alice@example.com", Name: "Alice", Groups: []string{"eng"}})
	ssoSignIn(t, alice, base, "alice@example.com")
	shot(t, alice, dir, "sso-overview")
	aliceKey := createKey(t, alice, base, "alice-laptop")
	bob := browserContext(t, ctx) // another browser: its own cookies
	idp.SetUser(oidctest.User{Sub: "bob-sub", Email: "bob@example.com", Name: "Bob", Groups: []string{"eng"}})
	ssoSignIn(t, bob, base, "bob@example.com")
	bobKey := createKey(t, bob, base, "bob-laptop")

	// One request of alice's, two of bob's: the ledger has rows of both.
	for _, k := range []string{aliceKey, bobKey, bobKey} {
		if status := chat(t, base, k); status != 200 {
			t.Fatalf("calling with a member's key: %d", status)
		}
	}

	// Alice sees her own.
	if got := navText(t, alice, base+"/console/usage?since=1h&by=key", "main"); !strings.Contains(got, "alice-laptop") || strings.Contains(got, "bob-laptop") {
		t.Fatalf("alice's usage by key:\n%s", got)
	}
	shot(t, alice, dir, "sso-usage")
	if n := rows(t, alice, base+"/console/requests"); n != 1 {
		t.Errorf("alice sees %d requests, want her 1", n)
	}
	if n := rows(t, alice, base+"/console/keys"); n != 1 {
		t.Errorf("alice sees %d keys, want her 1", n)
	}
	if got := navText(t, alice, base+"/console/users", "main"); !strings.Contains(got, "for the master key and the console's operators") {
		t.Errorf("alice on the users page:\n%s", got)
	}
	if n := rows(t, bob, base+"/console/requests"); n != 2 {
		t.Errorf("bob sees %d requests, want his 2", n)
	}

	// A member of the IdP's admin group operates the console.
	carol := browserContext(t, ctx)
	idp.SetUser(oidctest.User{Sub: "carol-sub", Email: "carol@example.com", Name: "Carol", Groups: []string{"ops"}})
	ssoSignIn(t, carol, base, "carol@example.com (operator)")
	if n := rows(t, carol, base+"/console/requests"); n != 3 {
		t.Errorf("an operator sees %d requests, want all 3", n)
	}

	// The master key sees both, by user.
	master := browserContext(t, ctx)
	signIn(t, master, base, masterKey, "overview")
	got := navText(t, master, base+"/console/usage?since=1h&by=user", "main")
	if !strings.Contains(got, "alice@example.com") || !strings.Contains(got, "bob@example.com") {
		t.Errorf("usage by user:\n%s", got)
	}
	shot(t, master, dir, "sso-usage-by-user")
	if got := navText(t, master, base+"/console/users", "table"); !strings.Contains(got, "alice@example.com") || !strings.Contains(got, "eng") {
		t.Errorf("the users page:\n%s", got)
	}
	shot(t, master, dir, "sso-users")
	// The team from the configuration, with its members.
	if err := chromedp.Do(master, chromedp.Navigate(base+"/console/teams"), chromedp.Click(chromedp.CSS("table tbody a")),
		chromedp.WaitVisible(chromedp.ID("allowlist"))); err != nil {
		t.Fatalf("opening team eng: %v", err)
	}
	if got := text(t, master, "main"); !strings.Contains(got, "Team eng") || !strings.Contains(got, "bob@example.com") || !strings.Contains(got, "rpm 100") {
		t.Errorf("team eng's page:\n%s", got)
	}
	shot(t, master, dir, "sso-team")
	// The audit log names who made the keys: the members, in the console.
	if got := navText(t, master, base+"/console/audit?action=key_created", "table"); strings.Count(got, "key_created") != 2 || strings.Count(got, "user usr_") != 2 {
		t.Errorf("the keys' audit events:\n%s", got)
	}
	shot(t, master, dir, "sso-audit")
}
