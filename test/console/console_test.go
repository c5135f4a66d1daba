// Package console_test drives the operator console in a real headless
// Chromium (Debian's package), as an operator and a key's owner would.
// It runs when TOLLGATE_TEST_CHROMIUM names the browser (.ci/run sets it).
package console_test

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tollgate/tollgate/internal/gatewaytest"
)

const masterKey = "sk-master-console-test-0123456789abcdef"

const config = `
providers: [ { name: demo, type: echo } ]
models:
  - { name: echo, targets: [ { provider: demo } ], pricing: { input: "3", output: "15", cache_read: "0.3" } }
`

// browser starts a headless Chromium with a window of desktop size.
func browser(t *testing.T) context.Context {
	t.Helper()
	if testing.Short() {
		t.Skip("drives a real Chromium: go test without -short runs it")
	}
	path := os.Getenv("TOLLGATE_TEST_CHROMIUM")
	if path == "" {
		t.Skip("TOLLGATE_TEST_CHROMIUM is not set; set it to Chromium's path (e.g. /usr/bin/chromium) to run the console's browser tests")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.WindowSize(1280, 900), chromedp.Flag("disable-gpu", true))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancelT(); cancelB(); cancelA() })
	return ctx
}

// artifacts is where page screenshots go: $TOLLGATE_TEST_ARTIFACTS when
// set, else the test's temporary directory.
func artifacts(t *testing.T) string {
	if d := os.Getenv("TOLLGATE_TEST_ARTIFACTS"); d != "" {
		os.MkdirAll(d, 0o755)
		return d
	}
	return t.TempDir()
}

func shot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644)
}

func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("reading %s: %v", sel, err)
	}
	return s
}

func chat(t *testing.T, base, key string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/v1/chat/completions", strings.NewReader(`{"model":"echo","messages":[{"role":"user","content":"hello console"}]}`))
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// signIn signs in with key and waits for the page it leads to: the
// overview, or (want "signin") the sign-in page again with its error.
func signIn(t *testing.T, ctx context.Context, base, key, want string) {
	t.Helper()
	done := `body[data-page="overview"] h1`
	if want == "signin" {
		done = `body[data-page="signin"] .error`
	}
	if err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/console/"),
		chromedp.WaitVisible(chromedp.ID("key")),
		chromedp.SendKeys(chromedp.ID("key"), key),
		chromedp.Submit(chromedp.ID("key")),
		chromedp.WaitVisible(chromedp.CSS(done)),
	); err != nil {
		t.Fatalf("signing in: %v", err)
	}
}

func TestConsoleInABrowser(t *testing.T) {
	ctx := browser(t)
	base := gatewaytest.StartDB(t, config, masterKey)
	dir := artifacts(t)

	// A wrong key is refused on the sign-in page; the master key signs in.
	signIn(t, ctx, base, "sk-tg-not-a-key", "signin")
	if got := text(t, ctx, ".error"); !strings.Contains(got, "not valid") {
		t.Fatalf("a wrong key: %q", got)
	}
	shot(t, ctx, dir, "signin")
	signIn(t, ctx, base, masterKey, "overview")
	if got := text(t, ctx, "h1"); got != "Overview" {
		t.Fatalf("after signing in: %q", got)
	}

	// Create a key; its secret is shown once.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/console/keys"),
		chromedp.SendKeys(chromedp.ID("new-name"), "ci-key"),
		chromedp.Submit(chromedp.ID("new-name")),
		chromedp.WaitVisible(chromedp.ID("new-secret")),
	); err != nil {
		t.Fatalf("creating a key: %v", err)
	}
	secret := text(t, ctx, "#new-secret")
	shot(t, ctx, dir, "keys")
	if !strings.HasPrefix(secret, "sk-tg-") {
		t.Fatalf("secret %q", secret)
	}

	// The key works, and its call shows in Requests and in Usage.
	if status := chat(t, base, secret); status != 200 {
		t.Fatalf("calling with the new key: %d", status)
	}
	if got := navText(t, ctx, base+"/console/requests", "table"); !strings.Contains(got, "echo") || !strings.Contains(got, "/v1/chat/completions") {
		t.Fatalf("the call is not in Requests:\n%s", got)
	}
	shot(t, ctx, dir, "requests")
	fitsWindow(t, ctx, base+"/console/requests", 1400, 1000)
	if got := navText(t, ctx, base+"/console/usage?since=1h&by=key", "main"); !strings.Contains(got, "ci-key") {
		t.Fatalf("the call is not in Usage by key:\n%s", got)
	}
	shot(t, ctx, dir, "usage")
	if got := navText(t, ctx, base+"/console/overview?window=1h", "main"); !strings.Contains(got, "echo") {
		t.Fatalf("the call is not in the overview:\n%s", got)
	}
	shot(t, ctx, dir, "overview")
	// The target's breaker counted the call: its recent error rate.
	if got := navText(t, ctx, base+"/console/routes", "table"); !strings.Contains(got, "0.0% of 1") {
		t.Fatalf("the routes page does not show the target's recent calls:\n%s", got)
	}
	shot(t, ctx, dir, "routes")

	// An rpm limit of 1 set in the console: the second call gets 429.
	keyPage := keyURL(t, ctx, base)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(keyPage),
		chromedp.SetValue(chromedp.ID("rpm"), "1"),
		chromedp.Submit(chromedp.ID("rpm")),
		chromedp.WaitVisible(chromedp.ID("saved")),
	); err != nil {
		t.Fatalf("setting rpm: %v", err)
	}
	if got := text(t, ctx, "dl.detail"); !strings.Contains(got, "rpm 1") {
		t.Fatalf("limits after saving: %q", got)
	}
	shot(t, ctx, dir, "key")
	first, second := chat(t, base, secret), chat(t, base, secret)
	if first != 200 || second != 429 {
		t.Fatalf("with rpm 1: %d then %d, want 200 then 429", first, second)
	}
	// The limits page shows the window's live use: the one admitted call.
	if got := navText(t, ctx, base+"/console/limits", "table"); !strings.Contains(got, "rpm 1 of 1") {
		t.Fatalf("the limits page does not show the rpm window in use:\n%s", got)
	}
	shot(t, ctx, dir, "limits")

	// Requests by lane: the refused call reached no upstream.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/console/requests"),
		chromedp.WaitVisible(chromedp.ID("lane")),
		chromedp.SetValue(chromedp.ID("lane"), "none"),
		chromedp.Submit(chromedp.ID("lane")),
		chromedp.WaitReady(chromedp.CSS(`#lane option[value="none"][selected]`)), // options have no box: never "visible"
	); err != nil {
		t.Fatalf("filtering requests by lane: %v", err)
	}
	if got := text(t, ctx, "table tbody"); !strings.Contains(got, "429") || strings.Contains(got, "passthrough") || strings.Contains(got, "translated") {
		t.Fatalf("requests with no lane:\n%s", got)
	}

	// A virtual key sees only its own records, and not the keys page.
	other := browserContext(t, ctx)
	signIn(t, other, base, secret, "overview")
	if got := navText(t, other, base+"/console/requests", "table"); strings.Contains(got, "master") || !strings.Contains(got, "echo") {
		t.Fatalf("a virtual key's requests:\n%s", got)
	}
	if got := navText(t, other, base+"/console/keys", "main"); !strings.Contains(got, "for the master key") {
		t.Fatalf("a virtual key on the keys page:\n%s", got)
	}

	// Revoking needs the confirmation box; the key is then refused.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(keyPage),
		chromedp.Click(chromedp.ID("confirm")),
		chromedp.Submit(chromedp.ID("confirm")),
		chromedp.WaitVisible(chromedp.ID("revoked")),
	); err != nil {
		t.Fatalf("revoking: %v", err)
	}
	if status := chat(t, base, secret); status != 401 {
		t.Fatalf("a revoked key: %d, want 401", status)
	}
	// Its console session ended with it.
	if got := navText(t, other, base+"/console/requests", "main"); !strings.Contains(got, "Sign in") {
		t.Fatalf("a revoked key's session is still open:\n%s", got)
	}

	// Signing out ends the session on the server.
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/console/overview"), chromedp.Click(chromedp.CSS("header button")),
		chromedp.WaitVisible(chromedp.ID("key"))); err != nil {
		t.Fatalf("signing out: %v", err)
	}
}

// fitsWindow checks at each window width that the page needs no
// sideways scrolling and that every column of its table is inside the
// window, then goes back to the desktop size.
func fitsWindow(t *testing.T, ctx context.Context, page string, widths ...int64) {
	t.Helper()
	for _, w := range append(widths, 1280) {
		type fitness struct {
			Page, Window, TableRight float64
		}
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(w, 900), chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("table"))); err != nil {
			t.Fatalf("at %d px: %v", w, err)
		}
		fit, err := chromedp.Run(ctx, chromedp.Evaluate[fitness](`({Page: document.documentElement.scrollWidth, Window: window.innerWidth,
			TableRight: Math.max(...[...document.querySelectorAll("table th")].map(th => th.getBoundingClientRect().right))})`))
		if err != nil {
			t.Fatalf("at %d px: %v", w, err)
		}
		if fit.Page > fit.Window || fit.TableRight > fit.Window {
			t.Errorf("at %d px the page is %.0f px wide and its table ends at %.0f px", w, fit.Page, fit.TableRight)
		}
	}
}

// TestConsoleRefusesFormsWithoutToken: a state-changing post without the
// session's CSRF token is refused, and a signed-out session is gone on
// the server (its cookie no longer opens a page).
func TestConsoleRefusesFormsWithoutToken(t *testing.T) {
	base := gatewaytest.StartDB(t, config, masterKey)
	jar, _ := cookiejar.New(nil)
	noRedirect := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.PostForm(base+"/console/signin", url.Values{"key": {masterKey}})
	if err != nil || resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in: %v %v", resp, err)
	}
	resp.Body.Close()
	cookies := jar.Cookies(mustURL(base + "/console/"))
	if len(cookies) != 1 {
		t.Fatalf("cookies: %v", cookies)
	}
	h := resp.Header.Get("Set-Cookie")
	for _, want := range []string{"HttpOnly", "SameSite=Strict", "Path=/console/"} {
		if !strings.Contains(h, want) {
			t.Errorf("session cookie lacks %s: %s", want, h)
		}
	}
	resp, _ = noRedirect.PostForm(base+"/console/keys", url.Values{"name": {"forged"}})
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a form without its token: %d, want 403", resp.StatusCode)
	}
	resp.Body.Close()
	page, _ := noRedirect.Get(base + "/console/overview")
	for k, want := range map[string]string{"X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer"} {
		if page.Header.Get(k) != want {
			t.Errorf("%s: %q", k, page.Header.Get(k))
		}
	}
	if csp := page.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("Content-Security-Policy: %q", csp)
	}
	body := readBody(t, page)
	i := strings.Index(body, `name="csrf" value="`)
	if i < 0 {
		t.Fatalf("no CSRF token in the page")
	}
	token := body[i+len(`name="csrf" value="`):]
	token = token[:strings.IndexByte(token, '"')]
	resp, _ = noRedirect.PostForm(base+"/console/signout", url.Values{"csrf": {token}})
	resp.Body.Close()
	// The old cookie, sent again, opens nothing.
	req, _ := http.NewRequest("GET", base+"/console/overview", nil)
	req.AddCookie(cookies[0])
	resp, _ = (&http.Client{CheckRedirect: noRedirect.CheckRedirect}).Do(req)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/console/signin" {
		t.Errorf("a signed-out session: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp.Body.Close()
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return b.String()
}

func navText(t *testing.T, ctx context.Context, u, sel string) string {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(u), chromedp.WaitVisible(chromedp.CSS(sel))); err != nil {
		t.Fatalf("%s: %v", u, err)
	}
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("%s: %v", u, err)
	}
	return s
}

// keyURL is the page of the first key in the keys list.
func keyURL(t *testing.T, ctx context.Context, base string) string {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/console/keys")); err != nil {
		t.Fatal(err)
	}
	a, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS("table tbody a"), "href"))
	if err != nil || !a.Exists {
		t.Fatalf("no key in the list: %v", err)
	}
	return base + a.Value
}

// browserContext is a second, separate browser session (its own cookies).
func browserContext(t *testing.T, parent context.Context) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(parent, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	return ctx
}
