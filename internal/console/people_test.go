package console

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/admin"
	"github.com/tollgate/tollgate/internal/route"
	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/store/storetest"
)

// people is a console with two teams' users, their keys, and ledger
// records of each: alice and bob in eng, carol (an operator) in ops.
type fixture struct {
	t          *testing.T
	c          *Console
	s          *store.Store
	now        time.Time
	alice, bob store.User
	carol      store.User
	eng, ops   store.Team
	aliceKey   admin.KeyView
	bobKey     admin.KeyView
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	p := &fixture{t: t, now: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC), s: storetest.Open(t)["sqlite"]}
	rt := &route.Table{}
	svc := func() *admin.Service { return admin.New(p.s, nil, nil, nil) } // any model may be named
	var err error
	if p.c, err = New(Options{Admin: svc, Store: p.s, Routes: func() *route.Table { return rt }, Now: func() time.Time { return p.now }, SSO: true}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p.eng = store.Team{ID: "team_eng", Name: "eng", Models: []string{"echo", "claude-sonnet"}, Limits: []byte("{}"),
		MemberLimits: []byte(`{"rpm":60,"budget_usd":25,"budget_period":"monthly"}`),
		ClaudeCode:   []byte(`{"managed_settings":{"permissions":{"deny":["WebFetch"]}}}`), Source: "config", CreatedAt: p.now, UpdatedAt: p.now}
	p.ops = store.Team{ID: "team_ops", Name: "ops", Source: "config", CreatedAt: p.now, UpdatedAt: p.now}
	for _, tm := range []store.Team{p.eng, p.ops} {
		if err := p.s.CreateTeam(ctx, tm); err != nil {
			t.Fatal(err)
		}
	}
	seen := p.now.Add(-time.Hour)
	p.alice = store.User{ID: "usr_alice", Subject: "alice-sub", Email: "alice@example.com", Name: "Alice", PrimaryTeamID: "team_eng", Source: "idp", CreatedAt: p.now, LastSeenAt: &seen}
	p.bob = store.User{ID: "usr_bob", Subject: "bob-sub", Email: "bob@example.com", Name: "Bob", PrimaryTeamID: "team_eng", Source: "idp", CreatedAt: p.now}
	p.carol = store.User{ID: "usr_carol", Subject: "carol-sub", Email: "carol@example.com", Name: "Carol", PrimaryTeamID: "team_ops", Admin: true, Source: "idp", CreatedAt: p.now}
	for _, u := range []store.User{p.alice, p.bob, p.carol} {
		if err := p.s.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		if err := p.s.AddMember(ctx, u.PrimaryTeamID, u.ID, store.MemberIdP); err != nil {
			t.Fatal(err)
		}
	}
	p.aliceKey = p.keyOf("alice-laptop", p.alice)
	p.bobKey = p.keyOf("bob-laptop", p.bob)
	cost := func(n int64) *int64 { return &n }
	var recs []store.Request
	for _, r := range []struct {
		id      string
		u       store.User
		k       admin.KeyView
		session string
		cost    int64
	}{{"req_alice1", p.alice, p.aliceKey, "sess-alice", 1_110_000_000}, {"req_alice2", p.alice, p.aliceKey, "sess-alice", 1_000_000_000},
		{"req_bob1", p.bob, p.bobKey, "sess-bob", 7_770_000_000}} {
		recs = append(recs, store.Request{ID: r.id, Time: p.now.Add(-30 * time.Minute), KeyID: r.k.ID, UserID: r.u.ID, TeamID: r.u.PrimaryTeamID,
			SessionID: r.session, ClientProtocol: "anthropic", Endpoint: "/v1/messages", Model: "echo", CanonicalModel: "echo", Provider: "demo",
			Lane: "passthrough", Status: 200, Input: 100, CacheRead: 300, Output: 10, CostNanoUSD: cost(r.cost)})
	}
	if err := p.s.InsertRequests(ctx, recs); err != nil {
		t.Fatal(err)
	}
	return p
}

// keyOf makes a key that is u's, charged to their primary team.
func (p *fixture) keyOf(name string, u store.User) admin.KeyView {
	p.t.Helper()
	k, err := p.c.svc().CreateKey(context.Background(), admin.CreateKey{Name: name, UserID: u.ID, TeamID: u.PrimaryTeamID})
	if err != nil {
		p.t.Fatal(err)
	}
	return k
}

// browser is one signed-in browser: its session cookie and CSRF token.
type browser struct {
	p      *fixture
	cookie *http.Cookie
	csrf   string
}

// signIn signs u in as the identity service does, through SignInUser.
func (p *fixture) signIn(u store.User) *browser {
	p.t.Helper()
	w := httptest.NewRecorder()
	if err := p.c.SignInUser(w, httptest.NewRequest("GET", "/oauth/callback", nil), u); err != nil {
		p.t.Fatal(err)
	}
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/console/" {
		p.t.Fatalf("SignInUser: %d to %q", w.Code, w.Header().Get("Location"))
	}
	cookies := w.Result().Cookies()
	if len(cookies) != 1 {
		p.t.Fatalf("cookies: %v", cookies)
	}
	se, err := p.s.SessionByID(context.Background(), sessionID(cookies[0].Value), p.now)
	if err != nil {
		p.t.Fatal(err)
	}
	return &browser{p: p, cookie: cookies[0], csrf: se.CSRF}
}

func (b *browser) get(path string) (int, string) {
	r := httptest.NewRequest("GET", path, nil)
	r.AddCookie(b.cookie)
	w := httptest.NewRecorder()
	b.p.c.ServeHTTP(w, r)
	return w.Code, w.Body.String()
}

// post sends form with the session's CSRF token (unless form has one).
func (b *browser) post(path string, form url.Values) (int, string) {
	if !form.Has("csrf") {
		form.Set("csrf", b.csrf)
	}
	r := httptest.NewRequest("POST", path, strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.AddCookie(b.cookie)
	w := httptest.NewRecorder()
	b.p.c.ServeHTTP(w, r)
	return w.Code, w.Body.String()
}

// shows checks that page (of path) shows each of want and none of not.
func shows(t *testing.T, path, page string, want, not []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(page, w) {
			t.Errorf("%s: no %q in:\n%s", path, w, page)
		}
	}
	for _, w := range not {
		if strings.Contains(page, w) {
			t.Errorf("%s: %q is shown", path, w)
		}
	}
}

// SignInUser opens a session for the user, with the cookie the key
// sign-in sets; the header names them; a disabled user gets none, and a
// user disabled since signing in is signed out.
func TestSignInUser(t *testing.T) {
	p := newFixture(t)
	b := p.signIn(p.alice)
	for _, want := range []string{"HttpOnly", "SameSite=Strict", "Path=/console/"} {
		if !strings.Contains(b.cookie.String(), want) {
			t.Errorf("the session cookie lacks %s: %s", want, b.cookie)
		}
	}
	se, _ := p.s.SessionByID(context.Background(), sessionID(b.cookie.Value), p.now)
	if se.UserID != p.alice.ID || se.Admin || se.KeyID != "" {
		t.Errorf("alice's session: %+v", se)
	}
	if code, page := b.get("/console/overview"); code != http.StatusOK || !strings.Contains(page, `<span class="muted" id="who">alice@example.com</span>`) {
		t.Fatalf("alice's overview: %d\n%s", code, page)
	}
	if code, page := p.signIn(p.carol).get("/console/overview"); code != http.StatusOK || !strings.Contains(page, "carol@example.com (operator)") {
		t.Fatalf("carol's overview: %d", code)
	}

	disabled := p.bob
	disabled.Disabled = true
	if err := p.c.SignInUser(httptest.NewRecorder(), httptest.NewRequest("GET", "/oauth/callback", nil), disabled); err == nil {
		t.Error("a disabled user signed in")
	}
	yes := true
	if _, err := p.s.UpdateUser(context.Background(), p.alice.ID, store.UserUpdate{Disabled: &yes}); err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/console/overview", nil)
	r.AddCookie(b.cookie)
	w := httptest.NewRecorder()
	p.c.ServeHTTP(w, r)
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/console/signin" {
		t.Errorf("a disabled user's session: %d %s", w.Code, w.Header().Get("Location"))
	}
	if _, err := p.s.SessionByID(context.Background(), sessionID(b.cookie.Value), p.now); err == nil {
		t.Error("a disabled user's session is still stored")
	}
}

// An operator's admin flag taken away since the sign-in takes effect on
// the next page.
func TestOperatorDemoted(t *testing.T) {
	p := newFixture(t)
	b := p.signIn(p.carol)
	if code, _ := b.get("/console/users"); code != http.StatusOK {
		t.Fatalf("carol on users: %d", code)
	}
	no := false
	if _, err := p.s.UpdateUser(context.Background(), p.carol.ID, store.UserUpdate{Admin: &no}); err != nil {
		t.Fatal(err)
	}
	if code, _ := b.get("/console/users"); code != http.StatusForbidden {
		t.Errorf("carol demoted, on users: %d", code)
	}
}

func TestSignInPageOffersSSO(t *testing.T) {
	for _, sso := range []bool{true, false} {
		c, err := New(Options{SSO: sso})
		if err != nil {
			t.Fatal(err)
		}
		w := httptest.NewRecorder()
		c.signinPage(w, httptest.NewRequest("GET", "/console/signin", nil), http.StatusOK, "")
		page := w.Body.String()
		link := strings.Contains(page, `<a class="button" id="sso" href="/oauth/console">Sign in with your company account</a>`)
		if link != sso || !strings.Contains(page, `<form method="post" action="/console/signin">`) {
			t.Errorf("SSO %v: link %v, or no key form:\n%s", sso, link, page)
		}
	}
}

// A member sees their own usage, requests, keys and sessions, never
// another member's: another's are not found, and filters naming another
// user are ignored; the operators' pages are refused.
func TestMemberSeesOnlyTheirOwn(t *testing.T) {
	p := newFixture(t)
	alice := p.signIn(p.alice)
	for _, tt := range []struct {
		path      string
		code      int
		want, not []string
	}{
		{"/console/overview?window=1h", 200, []string{">$2.11<"}, []string{"$8.88", "$7.77", "Latency"}},
		{"/console/usage?since=1d", 200, []string{"$2.11"}, []string{"$7.77", "$8.88"}},
		{"/console/usage?since=1d&user=usr_bob", 200, []string{"$2.11"}, []string{"$7.77"}},
		{"/console/usage?since=1d&team=team_eng", 200, []string{"$2.11"}, []string{"$8.88"}},
		{"/console/usage?since=1d&by=key", 200, []string{"alice-laptop"}, []string{"bob-laptop", "$7.77"}},
		{"/console/usage?since=1d&by=user", 400, []string{"not a grouping you can use"}, nil},
		{"/console/usage.csv?since=1d&by=model", 200, []string{"TOTAL"}, []string{"7.77"}},
		{"/console/requests", 200, []string{"req_alice1", "req_alice2"}, []string{"req_bob1"}},
		{"/console/requests?user=usr_bob", 200, []string{"req_alice1"}, []string{"req_bob1"}},
		{"/console/requests?session=sess-bob", 200, nil, []string{"req_bob1"}},
		{"/console/requests/req_alice1", 200, []string{"Request req_alice1"}, nil},
		{"/console/requests/req_bob1", 404, []string{"no such request"}, []string{"7.77"}},
		{"/console/keys", 200, []string{"alice-laptop", "Your keys are charged to team eng"}, []string{"bob-laptop"}},
		{"/console/keys/" + p.aliceKey.ID, 200, []string{"Key alice-laptop", "Revoke this key"}, []string{"<h2>Edit</h2>"}},
		{"/console/keys/" + p.bobKey.ID, 404, []string{"no such key"}, []string{"bob-laptop"}},
		{"/console/limits", 200, []string{"alice-laptop", "You may use at most rpm 60, $25/monthly, as each member of team eng"}, []string{"bob-laptop"}},
		{"/console/sessions", 200, []string{"sess-alice"}, []string{"sess-bob"}},
		{"/console/sessions?user=usr_bob", 200, []string{"sess-alice"}, []string{"sess-bob"}},
		{"/console/users", 403, nil, []string{"bob@example.com"}},
		{"/console/users/usr_bob", 403, nil, []string{"bob@example.com"}},
		{"/console/teams", 403, nil, nil},
		{"/console/teams/team_eng", 403, nil, nil},
		{"/console/audit", 403, nil, nil},
		{"/console/routes", 403, nil, nil},
	} {
		code, page := alice.get(tt.path)
		if code != tt.code {
			t.Errorf("%s: %d, want %d", tt.path, code, tt.code)
		}
		shows(t, tt.path, page, tt.want, tt.not)
	}
	// Nor may she revoke bob's key, or edit her own (operators do).
	if code, _ := alice.post("/console/keys/"+p.bobKey.ID+"/revoke", url.Values{"confirm": {"yes"}}); code != http.StatusNotFound {
		t.Errorf("alice revoking bob's key: %d", code)
	}
	if k, _ := p.c.svc().Key(context.Background(), p.bobKey.ID); k.Revoked {
		t.Fatal("bob's key was revoked by alice")
	}
	if code, _ := alice.post("/console/keys/"+p.aliceKey.ID, url.Values{"rpm": {"100000"}}); code != http.StatusForbidden {
		t.Errorf("alice editing her key's limits: %d", code)
	}
	if code, _ := alice.post("/console/keys/"+p.aliceKey.ID+"/revoke", url.Values{"confirm": {"yes"}}); code != http.StatusSeeOther {
		t.Errorf("alice revoking her own key: %d", code)
	}
	if k, _ := p.c.svc().Key(context.Background(), p.aliceKey.ID); !k.Revoked {
		t.Error("alice's key is not revoked")
	}
}

// An operator sees everyone, filters usage and requests by user and team
// and groups usage by either.
func TestOperatorSeesEveryone(t *testing.T) {
	p := newFixture(t)
	carol := p.signIn(p.carol)
	for _, tt := range []struct {
		path      string
		want, not []string
	}{
		{"/console/usage?since=1d", []string{"$9.88"}, nil},
		{"/console/usage?since=1d&user=usr_bob", []string{"$7.77"}, []string{"$2.11"}},
		{"/console/usage?since=1d&team=team_eng&by=user", []string{"alice@example.com (usr_alice)", "bob@example.com (usr_bob)", "$9.88"}, nil},
		{"/console/usage?since=1d&by=team", []string{"eng (team_eng)", "$9.88"}, nil},
		{"/console/requests?user=usr_alice", []string{"req_alice1"}, []string{"req_bob1"}},
		{"/console/requests?session=sess-bob", []string{"req_bob1"}, []string{"req_alice1"}},
		{"/console/requests/req_bob1", []string{"Request req_bob1"}, nil},
		{"/console/keys/" + p.bobKey.ID, []string{`Belongs to</dt><dd><a href="/console/users/usr_bob">usr_bob</a>, charged to team <a href="/console/teams/team_eng">team_eng</a>`, "<h2>Edit</h2>"}, nil},
		{"/console/keys", []string{"alice-laptop", "bob-laptop"}, nil},
		{"/console/sessions", []string{"sess-alice", "sess-bob", "alice@example.com", ">eng<"}, nil},
		{"/console/sessions?team=team_ops", nil, []string{"sess-alice", "sess-bob"}},
		{"/console/users", []string{"alice@example.com", "bob@example.com", "carol@example.com", ">eng<", "2026-11-22 11:00"}, nil},
		{"/console/users?q=bob", []string{"bob@example.com"}, []string{"alice@example.com"}},
		{"/console/users/usr_alice", []string{"alice-laptop", ">eng<", "(primary)", "$2.11"}, []string{"bob-laptop"}},
		{"/console/teams", []string{">eng<", ">ops<", "rpm 60, $25/monthly", "echo, claude-sonnet"}, nil},
		{"/console/teams/team_eng", []string{"alice@example.com", "bob@example.com", "rpm 60, $25/monthly", `&#34;deny&#34;: [`, "echo, claude-sonnet", "$9.88"}, []string{"usr_carol"}},
	} {
		code, page := carol.get(tt.path)
		if code != http.StatusOK {
			t.Errorf("%s: %d", tt.path, code)
		}
		shows(t, tt.path, page, tt.want, tt.not)
	}
	for _, path := range []string{"/console/users/usr_nobody", "/console/teams/team_nobody"} {
		if code, _ := carol.get(path); code != http.StatusNotFound {
			t.Errorf("%s: %d", path, code)
		}
	}
}

// The audit log: newest first, filtered by actor and by action, in pages
// with a cursor to older events.
func TestAuditPage(t *testing.T) {
	p := newFixture(t)
	ctx := context.Background()
	for i := range auditPage + 5 {
		e := store.AuditEvent{Time: p.now.Add(time.Duration(i) * time.Second), ActorKind: "user", ActorID: "usr_alice", Action: "key_created",
			TargetKind: "key", TargetID: "key_" + string(rune('a'+i%26)), Detail: []byte(`{"n":` + itoa(i) + `}`)}
		if i%2 == 1 {
			e.ActorID, e.Action = "usr_bob", "signin"
		}
		if err := p.s.AppendAudit(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	carol := p.signIn(p.carol)
	code, page := carol.get("/console/audit")
	last := `&#34;n&#34;: ` + itoa(auditPage+4)
	if code != http.StatusOK || !strings.Contains(page, last) || strings.Contains(page, `&#34;n&#34;: 4`+"\n") {
		t.Fatalf("the first page (the newest %d): %d\n%s", auditPage, code, page)
	}
	if strings.Index(page, last) > strings.Index(page, `&#34;n&#34;: `+itoa(auditPage+3)) {
		t.Error("not newest first")
	}
	i := strings.Index(page, `<a href="/console/audit?before=`)
	if i < 0 {
		t.Fatal("no link to older events")
	}
	next := page[i+len(`<a href="`):]
	next = strings.ReplaceAll(next[:strings.IndexByte(next, '"')], "&amp;", "&")
	if code, page = carol.get(next); code != http.StatusOK || !strings.Contains(page, `&#34;n&#34;: 0`) || strings.Contains(page, last) {
		t.Errorf("the older page %s: %d\n%s", next, code, page)
	}
	for _, tt := range []struct{ q, want, not string }{
		{"actor=usr_bob", "<td>signin</td>", "<td>key_created</td>"},
		{"action=key_created", "<td>key_created</td>", "<td>signin</td>"},
	} {
		if _, page := carol.get("/console/audit?" + tt.q); !strings.Contains(page, tt.want) || strings.Contains(page, tt.not) {
			t.Errorf("%s: want %q, not %q", tt.q, tt.want, tt.not)
		}
	}
	if code, _ := carol.get("/console/audit?before=x"); code != http.StatusBadRequest {
		t.Errorf("a bad cursor: %d", code)
	}
}

func itoa(i int) string { return i64(int64(i)) }

// Every form that changes something is refused without the session's
// CSRF token, or with another session's.
func TestFormsNeedTheirToken(t *testing.T) {
	p := newFixture(t)
	alice, carol := p.signIn(p.alice), p.signIn(p.carol)
	for _, path := range []string{"/console/signout", "/console/keys", "/console/keys/" + p.aliceKey.ID, "/console/keys/" + p.aliceKey.ID + "/revoke"} {
		for name, token := range map[string]string{"none": "", "another session's": alice.csrf} {
			code, _ := carol.post(path, url.Values{"csrf": {token}, "name": {"forged"}, "confirm": {"yes"}})
			if code != http.StatusForbidden {
				t.Errorf("%s with %s token: %d, want 403", path, name, code)
			}
		}
	}
	if k, _ := p.c.svc().Key(context.Background(), p.aliceKey.ID); k.Revoked || k.Name != "alice-laptop" {
		t.Errorf("a forged form changed the key: %+v", k)
	}
	if code, _ := carol.get("/console/overview"); code != http.StatusOK {
		t.Errorf("a forged sign-out ended the session: %d", code)
	}
}

// A member's new key is theirs, charged to their primary team, within
// the team's allowlist and member limits.
func TestMemberCreatesKey(t *testing.T) {
	p := newFixture(t)
	alice := p.signIn(p.alice)
	for _, tt := range []struct {
		form url.Values
		code int
		want string
	}{
		{url.Values{"name": {"too-many"}, "models": {"gpt-6"}}, 400, "models: gpt-6 is not a model you may use; yours are echo, claude-sonnet"},
		{url.Values{"name": {"too-fast"}, "rpm": {"61"}}, 400, "rpm: at most 60, each member&#39;s limit"},
		{url.Values{"name": {"too-dear"}, "budget_usd": {"30"}, "budget_period": {"monthly"}}, 400, "budget_usd: at most $25 monthly"},
		{url.Values{"name": {"other-period"}, "budget_usd": {"5"}, "budget_period": {"daily"}}, 400, "budget_period: must be monthly"},
		{url.Values{"name": {"ci"}, "rpm": {"10"}}, 201, "Created key <strong>ci</strong>"},
	} {
		code, page := alice.post("/console/keys", tt.form)
		if code != tt.code || !strings.Contains(page, tt.want) {
			t.Errorf("%v: %d, want %d with %q:\n%s", tt.form, code, tt.code, tt.want, page)
		}
	}
	keys, err := p.s.KeysOf(context.Background(), p.alice.ID)
	if err != nil || len(keys) != 2 {
		t.Fatalf("alice's keys: %v %v", keys, err)
	}
	k, _ := p.c.svc().Key(context.Background(), keys[0].ID)
	if keys[0].Name != "ci" || keys[0].TeamID != "team_eng" || k.Limits.RPM != 10 || k.Limits.BudgetUSD.String() != "25" ||
		k.Limits.BudgetPeriod != "monthly" || strings.Join(k.Models, ",") != "echo,claude-sonnet" {
		t.Errorf("the new key: %+v %+v", keys[0], k)
	}
	// The audit log says alice made it.
	events, err := p.s.Audit(context.Background(), store.AuditFilter{TargetID: keys[0].ID})
	if err != nil || len(events) != 1 || events[0].ActorKind != "user" || events[0].ActorID != p.alice.ID || events[0].Action != "key_created" {
		t.Errorf("the key's audit events: %+v %v", events, err)
	}
}
