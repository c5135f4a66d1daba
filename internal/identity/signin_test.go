package identity_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tollgate/tollgate/internal/auth"
	"github.com/tollgate/tollgate/internal/cli"
	"github.com/tollgate/tollgate/internal/gatewaytest"
	"github.com/tollgate/tollgate/internal/identity"
	"github.com/tollgate/tollgate/internal/oidc/oidctest"
	"github.com/tollgate/tollgate/internal/store"
)

// Claude Code's gateway sign-in, step by step as the client speaks it:
// discovery, the device authorization with an empty form, polling, the
// browser step through the IdP, the tokens, a request attributed to the
// person and their team, and the managed settings.
func TestDeviceSignIn(t *testing.T) {
	r := newRig(t, "")

	resp, err := http.Get(r.url + "/.well-known/oauth-authorization-server")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	disc := gjson.ParseBytes(b)
	if resp.StatusCode != 200 || disc.Get("device_authorization_endpoint").String() != r.url+"/oauth/device_authorization" ||
		disc.Get("token_endpoint").String() != r.url+"/oauth/token" || disc.Get("authorization_endpoint").Exists() {
		t.Fatalf("discovery: %d %s", resp.StatusCode, b)
	}

	st, d := r.form(t, "/oauth/device_authorization", nil)
	if st != 200 {
		t.Fatalf("device authorization: %d %s", st, d.Raw)
	}
	code := d.Get("user_code").String()
	if len(code) != 9 || code[4] != '-' || len(d.Get("device_code").String()) < 43 || d.Get("expires_in").Int() != 600 ||
		d.Get("verification_uri").String() != r.url+"/oauth/device" {
		t.Fatalf("device authorization answer: %s", d.Raw)
	}
	poll := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:device_code"}, "device_code": {d.Get("device_code").String()}}
	if st, e := r.form(t, "/oauth/token", poll); st != 400 || e.Get("error").String() != "authorization_pending" {
		t.Fatalf("first poll: %d %s", st, e.Raw)
	}
	// Polling again at once is too soon.
	if st, e := r.form(t, "/oauth/token", poll); st != 400 || e.Get("error").String() != "slow_down" {
		t.Fatalf("early poll: %d %s", st, e.Raw)
	}
	st2, page := browser(t, d.Get("verification_uri_complete").String())
	if st2 != 200 || !strings.Contains(page, "alice@example.com") || !strings.Contains(page, "team eng") {
		t.Fatalf("browser step: %d\n%s", st2, page)
	}
	r.clock.Add(6 * time.Second)
	st, tok := r.form(t, "/oauth/token", poll)
	if st != 200 || tok.Get("token_type").String() != "Bearer" || tok.Get("expires_in").Int() != 240 ||
		!strings.HasPrefix(tok.Get("access_token").String(), "tga_") || !strings.HasPrefix(tok.Get("refresh_token").String(), "tgr_") {
		t.Fatalf("token: %d %s", st, tok.Raw)
	}
	// The device code is good once.
	r.clock.Add(6 * time.Second)
	if st, e := r.form(t, "/oauth/token", poll); st != 400 || e.Get("error").String() != "invalid_grant" {
		t.Fatalf("second exchange of the device code: %d %s", st, e.Raw)
	}

	access := tok.Get("access_token").String()
	if st, body := r.call(t, access, "allowed"); st != 200 {
		t.Fatalf("request with the sign-in token: %d %s", st, body.Raw)
	}
	// A model the team may not use: 400 invalid_request_error, in the
	// Anthropic envelope.
	if st, body := r.call(t, access, "other"); st != 400 || body.Get("error.type").String() != "invalid_request_error" ||
		!strings.Contains(body.Get("error.message").String(), `team "eng"`) {
		t.Fatalf("model outside the team's list: %d %s", st, body.Raw)
	}
	u, err := r.db.UserBySubject(context.Background(), "alice@example.com")
	if err != nil {
		t.Fatal(err)
	}
	team, err := r.db.TeamByName(context.Background(), "eng")
	if err != nil {
		t.Fatal(err)
	}
	recs := r.requests(t)
	if len(recs) != 2 {
		t.Fatalf("ledger has %d records, want 2", len(recs))
	}
	for _, rec := range recs {
		if rec.UserID != u.ID || rec.TeamID != team.ID || rec.KeyID != "" {
			t.Errorf("record %s: user %q team %q key %q, want %q %q \"\"", rec.ID, rec.UserID, rec.TeamID, rec.KeyID, u.ID, team.ID)
		}
	}

	// Managed settings: the wrapped shape, an ETag, and 304 when unchanged.
	req, _ := http.NewRequest("GET", r.url+"/managed/settings", nil)
	req.Header.Set("Authorization", "Bearer "+access)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	ms := gjson.ParseBytes(b)
	sum := ms.Get("checksum").String()
	if resp.StatusCode != 200 || ms.Get("uuid").String() == "" || len(sum) != 64 || resp.Header.Get("ETag") != `"`+sum+`"` ||
		ms.Get("settings.model").String() != "claude-sonnet-4-5" || ms.Get("settings.permissions.deny.0").String() != "Bash(curl:*)" {
		t.Fatalf("managed settings: %d %s %v", resp.StatusCode, b, resp.Header)
	}
	req.Header.Set("If-None-Match", `"`+sum+`"`)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotModified {
		t.Errorf("managed settings with the current ETag: %d, want 304", resp.StatusCode)
	}

	// The audit log has the sign-in and the tokens' issue.
	events, err := r.db.Audit(context.Background(), store.AuditFilter{ActorID: u.ID, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range events {
		seen[e.Action] = true
	}
	for _, a := range []string{"user_provisioned", "signin", "token_issued"} {
		if !seen[a] {
			t.Errorf("audit log lacks %q: %v", a, seen)
		}
	}
}

// A refresh token is good once: its use rotates it; a second use of the
// same one (a copy) revokes every token of the sign-in.
func TestRefreshRotationAndReuse(t *testing.T) {
	r := newRig(t, "")
	access, refresh := r.signIn(t)
	grant := func(rt string) (int, gjson.Result) {
		return r.form(t, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}})
	}
	st, tok := grant(refresh)
	if st != 200 || tok.Get("refresh_token").String() == refresh || tok.Get("access_token").String() == access {
		t.Fatalf("refresh: %d %s", st, tok.Raw)
	}
	access2, refresh2 := tok.Get("access_token").String(), tok.Get("refresh_token").String()
	if st, body := r.call(t, access2, "allowed"); st != 200 {
		t.Fatalf("request with the refreshed token: %d %s", st, body.Raw)
	}
	// The old refresh token again at once: a retry, or a second process
	// sharing the credentials. Refused, and nothing revoked.
	if st, e := grant(refresh); st != 401 || e.Get("error").String() != "invalid_grant" {
		t.Fatalf("refresh token used again at once: %d %s", st, e.Raw)
	}
	if st, body := r.call(t, access2, "allowed"); st != 200 {
		t.Fatalf("the refreshed token after a retry of the old one: %d %s", st, body.Raw)
	}
	// Later, the old refresh token again: reuse. Every token of the family goes.
	r.clock.Add(31 * time.Second)
	if st, e := grant(refresh); st != 401 || e.Get("error").String() != "invalid_grant" {
		t.Fatalf("reused refresh token: %d %s", st, e.Raw)
	}
	if st, e := grant(refresh2); st != 401 || e.Get("error").String() != "invalid_grant" {
		t.Fatalf("the family's newest refresh token after a reuse: %d %s", st, e.Raw)
	}
	r.clock.Add(6 * time.Second) // past what this replica keeps in memory
	if st, body := r.call(t, access2, "allowed"); st != 401 || body.Get("error.type").String() != "authentication_error" {
		t.Fatalf("access token of a revoked family: %d %s", st, body.Raw)
	}
	// An access token is not a refresh token, nor the reverse.
	if st, _ := grant(access2); st != 401 {
		t.Errorf("access token used as a refresh token: %d", st)
	}
	events, _ := r.db.Audit(context.Background(), store.AuditFilter{Action: "token_reuse"})
	if len(events) != 1 {
		t.Errorf("audit: %d token_reuse events, want 1", len(events))
	}
}

// An access token stops at its expiry; a disabled user loses access
// within the cache's few seconds, and cannot refresh.
func TestExpiryAndDeprovisioning(t *testing.T) {
	r := newRig(t, "")
	access, refresh := r.signIn(t)
	r.clock.Add(4*time.Minute + time.Second)
	if st, body := r.call(t, access, "allowed"); st != 401 {
		t.Fatalf("expired access token: %d %s", st, body.Raw)
	}
	st, tok := r.form(t, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}})
	if st != 200 {
		t.Fatalf("refresh after expiry: %d %s", st, tok.Raw)
	}
	access = tok.Get("access_token").String()
	refresh = tok.Get("refresh_token").String()
	if st, _ := r.call(t, access, "allowed"); st != 200 {
		t.Fatalf("refreshed token: %d", st)
	}
	u, _ := r.db.UserBySubject(context.Background(), "alice@example.com")
	yes := true
	if _, err := r.db.UpdateUser(context.Background(), u.ID, store.UserUpdate{Disabled: &yes}); err != nil {
		t.Fatal(err)
	}
	r.clock.Add(6 * time.Second)
	if st, _ := r.call(t, access, "allowed"); st != 401 {
		t.Errorf("disabled user's token: %d, want 401", st)
	}
	if st, e := r.form(t, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}); st != 401 || e.Get("error").String() != "invalid_grant" {
		t.Errorf("disabled user's refresh: %d %s", st, e.Raw)
	}
	// And they cannot sign in again.
	st, d := r.form(t, "/oauth/device_authorization", nil)
	if st != 200 {
		t.Fatal(st)
	}
	if st, page := browser(t, d.Get("verification_uri_complete").String()); st != http.StatusForbidden {
		t.Errorf("disabled user's sign-in: %d\n%s", st, page)
	}
}

// A user removed from the team of their sign-in loses access within the
// cache's few seconds, and their refresh is refused: they sign in again.
// Removed by an operator, the membership is gone at once; at the IdP, the
// next refresh (which asks the IdP again) sees it.
func TestRemovedFromTeam(t *testing.T) {
	r := newRig(t, "")
	access, refresh := r.signIn(t)
	ctx := context.Background()
	u, _ := r.db.UserBySubject(ctx, "alice@example.com")
	team, _ := r.db.TeamByName(ctx, "eng")
	if err := r.db.RemoveMember(ctx, team.ID, u.ID); err != nil {
		t.Fatal(err)
	}
	r.clock.Add(6 * time.Second)
	if st, _ := r.call(t, access, "allowed"); st != 401 {
		t.Errorf("token of a user removed from its team: %d, want 401", st)
	}

	r2 := newRig(t, "")
	access, refresh = r2.signIn(t)
	r2.idp.SetUser(oidctest.User{Sub: "alice-sub", Email: "alice@example.com", Name: "Alice", Groups: []string{"ops"}})
	if st, e := r2.form(t, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}); st != 401 || e.Get("error").String() != "invalid_grant" {
		t.Errorf("refresh of a user the IdP moved out of the team: %d %s", st, e.Raw)
	}
	r2.clock.Add(6 * time.Second)
	if st, _ := r2.call(t, access, "allowed"); st != 401 {
		t.Errorf("token of a user the IdP moved out of the team: %d, want 401", st)
	}
}

// A user deprovisioned at the IdP loses the sign-in at its next refresh
// (within the access token's life); an IdP that cannot be reached leaves
// the refresh token usable once it is back.
func TestDeprovisionedAtIdP(t *testing.T) {
	r := newRig(t, "")
	_, refresh := r.signIn(t)
	grant := func(rt string) (int, gjson.Result) {
		return r.form(t, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}})
	}
	r.idp.SetDown(true)
	if st, e := grant(refresh); st != 503 || e.Get("error").String() != "temporarily_unavailable" {
		t.Fatalf("refresh while the IdP is down: %d %s", st, e.Raw)
	}
	r.idp.SetDown(false)
	st, tok := grant(refresh)
	if st != 200 {
		t.Fatalf("the same refresh token once the IdP is back: %d %s", st, tok.Raw)
	}
	r.idp.DeleteUser("alice-sub")
	r.clock.Add(time.Minute)
	if st, e := grant(tok.Get("refresh_token").String()); st != 401 || e.Get("error").String() != "invalid_grant" {
		t.Errorf("refresh of a user deleted at the IdP: %d %s", st, e.Raw)
	}
	r.clock.Add(6 * time.Second)
	if st, _ := r.call(t, tok.Get("access_token").String(), "allowed"); st != 401 {
		t.Errorf("access token of a sign-in the IdP ended: %d, want 401", st)
	}
	events, _ := r.db.Audit(context.Background(), store.AuditFilter{Action: "idp_refused"})
	if len(events) != 1 {
		t.Errorf("audit: %d idp_refused events, want 1", len(events))
	}
}

// IdP-issued JWTs as bearer tokens (Claude Desktop's inferenceGatewayOidc):
// accepted and attributed, the user provisioned on first use, the team
// from the groups claim; every way a token can be wrong is refused.
func TestIdPBearer(t *testing.T) {
	r := newRig(t, "")
	r.idp.SetUser(oidctest.User{Sub: "bob-sub", Email: "bob@example.com", Name: "Bob", Groups: []string{"ops"}})
	tok := r.idp.Token("tollgate-api", time.Hour)
	for i := range 3 {
		if st, body := r.call(t, tok, "other"); st != 200 {
			t.Fatalf("call %d with an IdP token: %d %s", i, st, body.Raw)
		}
	}
	// Team ops allows 3 requests a minute.
	if st, body := r.call(t, tok, "other"); st != 429 || body.Get("error.type").String() != "rate_limit_error" ||
		!strings.Contains(body.Get("error.message").String(), "your team") {
		t.Fatalf("4th call against the team's rpm 3: %d %s", st, body.Raw)
	}
	ctx := context.Background()
	u, err := r.db.UserBySubject(ctx, "bob@example.com")
	if err != nil {
		t.Fatalf("user not provisioned: %v", err)
	}
	ops, _ := r.db.TeamByName(ctx, "ops")
	for _, rec := range r.requests(t) {
		if rec.UserID != u.ID || rec.TeamID != ops.ID {
			t.Errorf("record %s: user %q team %q", rec.ID, rec.UserID, rec.TeamID)
		}
	}
	if u.PrimaryTeamID != ops.ID {
		t.Errorf("primary team %q, want ops %q", u.PrimaryTeamID, ops.ID)
	}

	now := r.clock.Now()
	base := func() map[string]any { return r.idp.Claims("tollgate-api", time.Hour) }
	with := func(k string, v any) map[string]any {
		c := base()
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
		return c
	}
	bad := map[string]string{
		"expired":                   r.idp.Sign(with("exp", now.Add(-time.Hour).Unix())),
		"not yet valid":             r.idp.Sign(with("nbf", now.Add(time.Hour).Unix())),
		"wrong issuer":              r.idp.Sign(with("iss", "https://evil.example.com")),
		"wrong aud":                 r.idp.Sign(with("aud", "someone-else")),
		"unknown kid":               r.idp.SignWith("RS256", r.idp.Key(), "nope", base()),
		"alg none":                  r.idp.SignWith("none", nil, r.idp.KeyID(), base()),
		"HS256 with the public key": r.idp.SignWith("HS256", publicKeyPEM(t, r.idp), r.idp.KeyID(), base()),
		"no user claim":             r.idp.Sign(with("email", nil)),
	}
	for name, tok := range bad {
		t.Run(name, func(t *testing.T) {
			if st, body := r.call(t, tok, "other"); st != 401 || body.Get("error.type").String() != "authentication_error" {
				t.Errorf("%d %s", st, body.Raw)
			}
		})
	}
	// A JWT is never looked up as a virtual key, nor a key-shaped string as a token.
	if st, _ := r.call(t, "sk-tg-"+tok, "other"); st != 401 {
		t.Errorf("a JWT behind the key prefix: %d", st)
	}
}

// Without groups the user is in no team: no team policy, no managed
// settings (404, which Claude Code reads as "no policy").
func TestNoGroups(t *testing.T) {
	r := newRig(t, "")
	r.idp.SetUser(oidctest.User{Sub: "carol-sub", Email: "carol@example.com"})
	access, _ := r.signIn(t)
	if st, _ := r.call(t, access, "other"); st != 200 {
		t.Errorf("user in no team: %d", st)
	}
	req, _ := http.NewRequest("GET", r.url+"/managed/settings", nil)
	req.Header.Set("Authorization", "Bearer "+access)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("managed settings of a user in no team: %d, want 404", resp.StatusCode)
	}
}

// The verification form refuses a post without its cookie (another site),
// a code that does not exist, and too many tries from one address.
func TestVerificationPageRefusals(t *testing.T) {
	r := newRig(t, "")
	resp, err := http.PostForm(r.url+"/oauth/device", url.Values{"user_code": {"BCDF-GHJK"}, "csrf": {"x"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("post without the form's cookie: %d, want 403", resp.StatusCode)
	}
	st, page := browser(t, r.url+"/oauth/device?user_code=BCDF-GHJK")
	if st != 400 || !strings.Contains(page, "not valid") {
		t.Errorf("unknown code: %d\n%s", st, page)
	}
	// A callback that no flow of this browser began.
	resp, err = http.Get(r.url + "/oauth/callback?state=abc&code=def")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("callback without a flow: %d, want 400", resp.StatusCode)
	}
}

// A team's budget holds for all its members together: once their spend
// (with what requests in flight reserve) reaches it, the next request is
// refused, and the spend the ledger records stays within it.
func TestTeamBudget(t *testing.T) {
	r := newRig(t, "")
	ctx := context.Background()
	var tokens []string
	for _, who := range []string{"dan", "erin"} {
		r.idp.SetUser(oidctest.User{Sub: who + "-sub", Email: who + "@example.com", Groups: []string{"fin"}})
		tokens = append(tokens, r.idp.Token("tollgate-api", time.Hour))
	}
	served, refused := 0, ""
	for i := 0; i < 40 && refused == ""; i++ {
		switch st, body := r.call(t, tokens[i%2], "other"); st {
		case 200:
			served++
		case 429:
			refused = body.Get("error.message").String()
		default:
			t.Fatalf("call %d: %d %s", i, st, body.Raw)
		}
	}
	if served < 2 || !strings.Contains(refused, "your team") || !strings.Contains(refused, "budget") {
		t.Fatalf("served %d before the refusal %q; want both members served, then the team's budget", served, refused)
	}
	fin, _ := r.db.TeamByName(ctx, "fin")
	spent, _, err := r.db.SpendOf(ctx, "team", fin.ID, nil, time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if spent <= 0 || spent > 500_000 { // nano-USD: 0.0005 USD
		t.Errorf("the team spent %d nano-USD, want some and at most its budget of 500000", spent)
	}
}

// Purge drops what can no longer sign anyone in, and nothing else.
func TestPurge(t *testing.T) {
	r := newRig(t, "")
	access, _ := r.signIn(t)
	ctx := context.Background()
	st, d := r.form(t, "/oauth/device_authorization", nil)
	if st != 200 {
		t.Fatal(st)
	}
	// The purge runs hourly in the server; here it runs at once, after
	// the access token has expired but before the refresh token has.
	r.clock.Add(time.Hour)
	if _, err := r.db.TokenByHash(ctx, sha256Of(access)); err != nil {
		t.Fatalf("the access token before the purge: %v", err)
	}
	if err := purge(r); err != nil {
		t.Fatal(err)
	}
	if _, err := r.db.TokenByHash(ctx, sha256Of(access)); !store.IsNotFound(err) {
		t.Errorf("an expired access token after the purge: %v", err)
	}
	if _, err := r.db.DeviceByUserCode(ctx, strings.ReplaceAll(d.Get("user_code").String(), "-", ""), r.clock.Now().Add(-time.Hour)); !store.IsNotFound(err) {
		t.Errorf("an expired device code after the purge: %v", err)
	}
}

func purge(r *rig) error {
	return identity.New(identity.Options{Store: r.db, Now: r.clock.Now}).Purge(context.Background())
}

// An operator (admin_groups) may use the admin API with their own IdP
// token, and their changes are audited as theirs; anyone else gets 403.
func TestOperatorUsesAdminAPI(t *testing.T) {
	r := newRig(t, "")
	admin := func(tok, method, path, body string) (int, gjson.Result) {
		req, _ := http.NewRequest(method, r.url+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, gjson.ParseBytes(b)
	}
	r.idp.SetUser(oidctest.User{Sub: "pat-sub", Email: "pat@example.com", Groups: []string{"eng"}})
	member := r.idp.Token("tollgate-api", time.Hour)
	if st, body := admin(member, "GET", "/admin/users", ""); st != 403 || body.Get("error.type").String() != "permission_error" {
		t.Fatalf("a member on the admin API: %d %s", st, body.Raw)
	}
	r.idp.SetUser(oidctest.User{Sub: "olga-sub", Email: "olga@example.com", Groups: []string{"platform"}})
	op := r.idp.Token("tollgate-api", time.Hour)
	st, body := admin(op, "POST", "/admin/teams", `{"name":"research"}`)
	if st != 201 {
		t.Fatalf("an operator creating a team: %d %s", st, body.Raw)
	}
	olga, err := r.db.UserBySubject(context.Background(), "olga@example.com")
	if err != nil || !olga.Admin {
		t.Fatalf("operator %+v, %v", olga, err)
	}
	events, _ := r.db.Audit(context.Background(), store.AuditFilter{Action: "team_created"})
	if len(events) != 1 || events[0].ActorKind != "user" || events[0].ActorID != olga.ID {
		t.Errorf("team_created audited as %+v, want the operator %s", events, olga.ID)
	}
}

// A sign-in token pasted into the console's key form opens no session (a
// session with neither key nor user would be the master key's).
func TestConsoleRefusesSignInTokenAsKey(t *testing.T) {
	r := newRig(t, "")
	access, _ := r.signIn(t)
	r.idp.SetUser(oidctest.User{Sub: "x-sub", Email: "x@example.com", Groups: []string{"eng"}})
	for name, tok := range map[string]string{"minted": access, "idp": r.idp.Token("tollgate-api", time.Hour)} {
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.PostForm(r.url+"/console/signin", url.Values{"key": {tok}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || len(resp.Cookies()) != 0 {
			t.Errorf("%s token in the console's key form: %d, cookies %v; want 401 and no session", name, resp.StatusCode, resp.Cookies())
		}
	}
}

// A token without the groups claim says nothing of the user's teams: they
// stay as they were (it cannot shed the team's model list or limits).
func TestTokenWithoutGroupsKeepsTeams(t *testing.T) {
	r := newRig(t, "")
	r.idp.SetUser(oidctest.User{Sub: "gil-sub", Email: "gil@example.com", Groups: []string{"eng"}})
	if st, body := r.call(t, r.idp.Token("tollgate-api", time.Hour), "allowed"); st != 200 {
		t.Fatalf("with groups: %d %s", st, body.Raw)
	}
	c := r.idp.Claims("tollgate-api", time.Hour)
	delete(c, "groups")
	bare := r.idp.Sign(c)
	if st, body := r.call(t, bare, "other"); st != 400 {
		t.Errorf("a model outside team eng's list with a token that has no groups claim: %d %s", st, body.Raw)
	}
	u, _ := r.db.UserBySubject(context.Background(), "gil@example.com")
	teams, _ := r.db.TeamsOf(context.Background(), u.ID)
	if len(teams) != 1 || teams[0].Name != "eng" {
		t.Errorf("teams after a token without groups: %+v", teams)
	}
}

// Refusals say nothing of the cause: an IdP that cannot be reached is a
// 503 without its host or its own text; a bare token prefix is a 401, with
// or without an IdP; a form posted from another origin is refused; a
// wrong method is 405 in the OAuth envelope.
func TestRefusalsSayLittle(t *testing.T) {
	r := newRig(t, "")
	tok := r.idp.Token("tollgate-api", time.Hour)
	r.idp.SetDown(true)
	st, body := r.call(t, tok, "allowed")
	if msg := body.Get("error.message").String(); st != 503 || strings.Contains(msg, "oidc") || strings.Contains(msg, "discovery") || strings.Contains(msg, "down for the test") {
		t.Errorf("IdP down: %d %s", st, body.Raw)
	}
	r.idp.SetDown(false)
	if st, body := r.call(t, "tga_", "allowed"); st != 401 {
		t.Errorf("bare tga_: %d %s", st, body.Raw)
	}
	noIdP := gatewaytest.StartDB(t, "providers: [ { name: demo, type: echo } ]\nmodels: [ { name: m, targets: [ { provider: demo } ] } ]\nidentity: { teams: [ { name: t } ] }\n", masterKey)
	for _, cred := range []string{"tga_", tok} {
		req, _ := http.NewRequest("POST", noIdP+"/v1/messages", strings.NewReader(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}]}`))
		req.Header.Set("Authorization", "Bearer "+cred)
		req.Header.Set("anthropic-version", "2023-06-01")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Errorf("%.8s… without an IdP: %d, want 401", cred, resp.StatusCode)
		}
	}
	// The verification form from another origin: refused even with the
	// right cookie and token.
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err := c.Get(r.url + "/oauth/device")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(page)
	if csrf == nil {
		t.Fatalf("no csrf field:\n%s", page)
	}
	req, _ := http.NewRequest("POST", r.url+"/oauth/device", strings.NewReader(url.Values{"csrf": {string(csrf[1])}, "user_code": {"BCDF-GHJK"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example.com")
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("verification form from another origin: %d, want 403", resp.StatusCode)
	}
	resp, err = http.Get(r.url + "/oauth/token")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "POST" || gjson.GetBytes(b, "error").String() != "invalid_request" {
		t.Errorf("GET /oauth/token: %d %v %s", resp.StatusCode, resp.Header.Get("Allow"), b)
	}
}

// A key charged to a team stops when its owner leaves the team: it must
// not go on without the team's model list and budget.
func TestTeamKeyOutlivesNoMembership(t *testing.T) {
	r := newRig(t, "")
	ctx := context.Background()
	eng, _ := r.db.TeamByName(ctx, "eng")
	u := store.User{ID: "usr_kim", Subject: "kim@example.com", Source: "admin", PrimaryTeamID: eng.ID, CreatedAt: time.Now(), Limits: []byte("{}")}
	if err := r.db.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	if err := r.db.AddMember(ctx, eng.ID, u.ID, "admin"); err != nil {
		t.Fatal(err)
	}
	secret, hash, prefix := auth.NewSecret()
	if err := r.db.CreateKey(ctx, store.Key{ID: auth.NewKeyID(), Name: "kim", Hash: hash, Prefix: prefix, CreatedAt: time.Now(),
		UserID: u.ID, TeamID: eng.ID, Limits: []byte("{}"), ModelLimits: []byte("{}"), Metadata: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	if st, body := r.call(t, secret, "allowed"); st != 200 {
		t.Fatalf("the team's key: %d %s", st, body.Raw)
	}
	if st, _ := r.call(t, secret, "other"); st != 400 {
		t.Errorf("the team's key on a model outside its list: %d, want 400", st)
	}
	if err := r.db.RemoveMember(ctx, eng.ID, u.ID); err != nil {
		t.Fatal(err)
	}
	r.clock.Add(6 * time.Second)
	if st, _ := r.call(t, secret, "other"); st != 401 {
		t.Errorf("the team's key after its owner left the team: %d, want 401", st)
	}
}

// A sign-in lasts refresh_ttl from its start, however often it is
// refreshed: refreshes do not slide its end.
func TestSignInHasAnEnd(t *testing.T) {
	r := newRig(t, "")
	_, refresh := r.signIn(t)
	for i := range 3 {
		r.clock.Add(235 * time.Hour)
		st, tok := r.form(t, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}})
		if st != 200 {
			t.Fatalf("refresh %d within the sign-in's 720h: %d %s", i, st, tok.Raw)
		}
		refresh = tok.Get("refresh_token").String()
	}
	r.clock.Add(15*time.Hour + time.Minute) // 720h and a minute after the sign-in
	if st, e := r.form(t, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}); st != 401 {
		t.Errorf("refresh past the sign-in's end: %d %s", st, e.Raw)
	}
}

// The configuration in exactly the documented shape, without
// identity.public_url: discovery, the verification link and the IdP's
// redirect are the address the client used.
func TestSignInWithoutPublicURL(t *testing.T) {
	clk := &testClock{t: time.Date(2031, 3, 10, 9, 0, 0, 0, time.UTC)}
	idp := oidctest.New(t, oidctest.WithHost("localhost"), oidctest.WithClock(clk.Now))
	db := gatewaytest.OpenDB(t)
	u, _ := gatewaytest.StartAt(t, func(string) string {
		return fmt.Sprintf(`
providers: [ { name: demo, type: echo } ]
models: [ { name: claude-sonnet-4-5, targets: [ { provider: demo } ] } ]
identity:
  oidc:
    issuer: %s
    client_id: %s
    client_secret: %s
    user_claim: email
    groups_claim: groups
    admin_groups: [platform]
    audiences: [tollgate]
  teams:
    - name: eng
      idp_groups: [eng]
      models: [claude-sonnet-4-5]
      limits: { rpm: 600, budget_usd: "500", budget_period: monthly }
      member_limits: { budget_usd: "50", budget_period: monthly }
      claude_code: { managed_settings: { permissions: { deny: ["Bash(curl:*)"] } } }
`, idp.URL, idp.ClientID, idp.ClientSecret)
	}, cli.Options{MasterKey: masterKey, Store: db, Now: clk.Now})
	r := &rig{url: u, idp: idp, db: db, clock: clk}
	st, d := r.form(t, "/oauth/device_authorization", nil)
	if st != 200 || d.Get("verification_uri").String() != u+"/oauth/device" {
		t.Fatalf("device authorization: %d %s", st, d.Raw)
	}
	access, _ := r.signIn(t)
	if st, body := r.call(t, access, "claude-sonnet-4-5"); st != 200 {
		t.Fatalf("request: %d %s", st, body.Raw)
	}
}
