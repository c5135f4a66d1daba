package cli_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/cli"
	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/store/storetest"
)

// TestPeopleCommands runs the users, teams and audit commands against a
// database (--config) and a running gateway (--url), on each back end.
func TestPeopleCommands(t *testing.T) {
	t.Setenv("TOLLGATE_CONFIG", "")
	t.Setenv("TOLLGATE_URL", "")
	t.Setenv("TOLLGATE_MASTER_KEY", "")
	dbURLs := map[string]string{"sqlite": "sqlite://" + filepath.Join(t.TempDir(), "people.db")}
	if _, withSchema := storetest.SchemaURL(t); withSchema != "" {
		dbURLs["postgres"] = withSchema
	}
	settings := filepath.Join(t.TempDir(), "managed.json")
	if err := os.WriteFile(settings, []byte(`{"permissions":{"deny":["WebFetch"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, dbURL := range dbURLs {
		t.Run(name, func(t *testing.T) {
			cfgPath, cfg, db := cliDB(t, dbURL)
			built, err := cli.Build(cfg, cli.Options{MasterKey: "sk-master-cli", Logger: slog.New(slog.DiscardHandler), Store: db})
			if err != nil {
				t.Fatal(err)
			}
			gw := httptest.NewServer(built.Handler)
			defer func() { gw.Close(); built.Close() }()
			local := []string{"--config", cfgPath}
			remote := []string{"--url", gw.URL, "--admin-key", "sk-master-cli"}
			for mode, flags := range map[string][]string{"config": local, "url": remote} {
				cmd := func(args ...string) (string, string, int) {
					t.Helper()
					return run(t, append(args, flags...)...)
				}
				team := "eng-" + mode
				out, errs, code := cmd("teams", "create", "--name", team, "--idp-groups", "g1,g2", "--models", "e",
					"--managed-settings", settings, "--rpm", "100", "--json")
				var tv struct {
					ID          string
					Limits      map[string]any `json:"limits"`
					ClaudeCode  map[string]any `json:"claude_code"`
					IDPGroups   []string       `json:"idp_groups"`
					MemberLimit map[string]any `json:"member_limits"`
				}
				if code != 0 || json.Unmarshal([]byte(out), &tv) != nil || tv.Limits["rpm"] != 100.0 || len(tv.IDPGroups) != 2 || tv.ClaudeCode["managed_settings"] == nil {
					t.Fatalf("%s: teams create: %d %q %q", mode, code, out, errs)
				}
				out, errs, code = cmd("teams", "update", team, "--per-member", "--budget-usd", "10", "--budget-period", "monthly", "--json")
				if code != 0 || json.Unmarshal([]byte(out), &tv) != nil || tv.MemberLimit["budget_usd"] != 10.0 || tv.Limits["rpm"] != 100.0 {
					t.Fatalf("%s: teams update --per-member: %d %q %q", mode, code, out, errs)
				}

				subject := "ada-" + mode + "@example.com"
				out, errs, code = cmd("users", "create", "--subject", subject, "--email", subject, "--name", "Ada", "--team", team, "--tpm", "5000", "--json")
				var uv struct {
					ID     string
					Teams  []struct{ ID, Name string }
					Limits map[string]any `json:"limits"`
					Admin  bool
				}
				if code != 0 || json.Unmarshal([]byte(out), &uv) != nil || !strings.HasPrefix(uv.ID, "usr_") || len(uv.Teams) != 1 ||
					uv.Teams[0].ID != tv.ID || uv.Limits["tpm"] != 5000.0 {
					t.Fatalf("%s: users create: %d %q %q", mode, code, out, errs)
				}
				// A user is named by id, subject or email.
				out, errs, code = cmd("users", "update", subject, "--admin", "--rpm", "7", "--json")
				if code != 0 || json.Unmarshal([]byte(out), &uv) != nil || !uv.Admin || uv.Limits["tpm"] != 5000.0 || uv.Limits["rpm"] != 7.0 {
					t.Fatalf("%s: users update: %d %q %q", mode, code, out, errs)
				}
				out, errs, code = cmd("users", "list")
				if code != 0 || !strings.Contains(out, uv.ID) || !strings.Contains(out, team+"*") || !strings.Contains(out, "rpm 7, tpm 5000") ||
					!strings.Contains(out, "active, admin") {
					t.Errorf("%s: users list: %d %q %q", mode, code, out, errs)
				}
				out, errs, code = cmd("users", "list", "--team", team, "--json")
				var ul struct{ Data []struct{ ID string } }
				if code != 0 || json.Unmarshal([]byte(out), &ul) != nil || len(ul.Data) != 1 || ul.Data[0].ID != uv.ID {
					t.Errorf("%s: users list --team: %d %q %q", mode, code, out, errs)
				}

				// A key of the user's, charged to the team, shows in users show.
				out, errs, code = cmd("keys", "create", "--name", "ada-laptop", "--user", subject, "--team", team, "--json")
				var k struct {
					ID     string
					UserID *string `json:"user_id"`
					TeamID *string `json:"team_id"`
				}
				if code != 0 || json.Unmarshal([]byte(out), &k) != nil || k.UserID == nil || *k.UserID != uv.ID || k.TeamID == nil || *k.TeamID != tv.ID {
					t.Fatalf("%s: keys create --user --team: %d %q %q", mode, code, out, errs)
				}
				out, errs, code = cmd("keys", "update", k.ID, "--team", "none", "--json")
				if code != 0 || json.Unmarshal([]byte(out), &k) != nil || k.TeamID != nil || k.UserID == nil {
					t.Fatalf("%s: keys update --team none: %d %q %q", mode, code, out, errs)
				}
				out, errs, code = cmd("users", "show", uv.ID)
				if code != 0 || !strings.Contains(out, subject) || !strings.Contains(out, "Keys (1)") || !strings.Contains(out, "ada-laptop") {
					t.Errorf("%s: users show: %d %q %q", mode, code, out, errs)
				}

				other := "bob-" + mode
				if _, errs, code = cmd("users", "create", "--subject", other); code != 0 {
					t.Fatalf("%s: users create %s: %q", mode, other, errs)
				}
				if out, errs, code = cmd("teams", "add-member", team, other); code != 0 || !strings.Contains(out, "Added") {
					t.Errorf("%s: teams add-member: %d %q %q", mode, code, out, errs)
				}
				out, errs, code = cmd("teams", "show", team)
				if code != 0 || !strings.Contains(out, "Members (2)") || !strings.Contains(out, other) || !strings.Contains(out, "WebFetch") {
					t.Errorf("%s: teams show: %d %q %q", mode, code, out, errs)
				}
				if out, errs, code = cmd("teams", "remove-member", team, other); code != 0 || !strings.Contains(out, "their teams: -") {
					t.Errorf("%s: teams remove-member: %d %q %q", mode, code, out, errs)
				}
				if out, errs, code = cmd("users", "disable", other); code != 0 || !strings.Contains(out, "Disabled user") {
					t.Errorf("%s: users disable: %d %q %q", mode, code, out, errs)
				}
				if out, errs, code = cmd("users", "enable", other); code != 0 || !strings.Contains(out, "Enabled user") {
					t.Errorf("%s: users enable: %d %q %q", mode, code, out, errs)
				}
				if out, errs, code = cmd("users", "delete", subject); code != 0 || !strings.Contains(out, "Deleted user "+uv.ID) {
					t.Errorf("%s: users delete: %d %q %q", mode, code, out, errs)
				}
				if stored, err := db.KeyByID(context.Background(), k.ID); err != nil || !stored.Revoked {
					t.Errorf("%s: the deleted user's key: %+v %v", mode, stored, err)
				}
				out, errs, code = cmd("teams", "list")
				if code != 0 || !strings.Contains(out, team) || !strings.Contains(out, "g1,g2") || !strings.Contains(out, "$10/monthly") {
					t.Errorf("%s: teams list: %d %q %q", mode, code, out, errs)
				}
				if out, errs, code = cmd("teams", "delete", team); code != 0 || !strings.Contains(out, "Deleted team") {
					t.Errorf("%s: teams delete: %d %q %q", mode, code, out, errs)
				}

				// The audit log says who did it: the CLI on the database, the
				// master key through the gateway.
				out, errs, code = cmd("audit", "--target", uv.ID, "--json")
				var page struct {
					Data []struct {
						Action    string  `json:"action"`
						ActorKind string  `json:"actor_kind"`
						ActorID   *string `json:"actor_id"`
					}
				}
				if code != 0 || json.Unmarshal([]byte(out), &page) != nil || len(page.Data) != 3 || page.Data[0].Action != "user_deleted" ||
					page.Data[2].Action != "user_created" {
					t.Fatalf("%s: audit --target: %d %q %q", mode, code, out, errs)
				}
				wantActor := map[string]string{"config": "system cli", "url": "master <nil>"}[mode]
				for _, ev := range page.Data {
					got := ev.ActorKind + " <nil>"
					if ev.ActorID != nil {
						got = ev.ActorKind + " " + *ev.ActorID
					}
					if got != wantActor {
						t.Errorf("%s: %s by %s, want %s", mode, ev.Action, got, wantActor)
					}
				}
				out, errs, code = cmd("audit", "--action", "team_member_added", "--limit", "1")
				if code != 0 || !strings.Contains(out, "team_member_added") || !strings.Contains(out, "team "+tv.ID) {
					t.Errorf("%s: audit table: %d %q %q", mode, code, out, errs)
				}
			}
			// Both modes' member additions: one page of one, and a pointer to the next.
			out, _, _ := run(t, "audit", "--action", "team_member_added", "--limit", "2", "--config", cfgPath)
			if strings.Contains(out, "--before") {
				t.Errorf("audit: a next page where there is none:\n%s", out)
			}
			out, _, _ = run(t, "audit", "--action", "team_member_added", "--limit", "1", "--config", cfgPath)
			if !strings.Contains(out, "Older events: add --before") {
				t.Errorf("audit: no pointer to the next page:\n%s", out)
			}
		})
	}
}

func TestPeopleCommandErrors(t *testing.T) {
	t.Setenv("TOLLGATE_CONFIG", "")
	t.Setenv("TOLLGATE_URL", "")
	t.Setenv("TOLLGATE_MASTER_KEY", "")
	cfgPath, _, db := cliDB(t, "sqlite://"+filepath.Join(t.TempDir(), "errors.db"))
	if _, err := db.UpsertTeamByName(context.Background(), store.Team{ID: "team_cfg", Name: "configured", Source: "config",
		CreatedAt: time.Now(), UpdatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, _, code := run(t, "users", "create", "--subject", "ada", "--config", cfgPath); code != 0 {
		t.Fatal("users create")
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"users"}, "tollgate users list"},
		{[]string{"users", "frobnicate"}, "unknown command"},
		{[]string{"users", "create"}, "--subject is required"},
		{[]string{"users", "create", "--subject", "ada"}, "already exists"},
		{[]string{"users", "create", "--subject", "b", "--team", "nope"}, "no team is named"},
		{[]string{"users", "create", "--subject", "b", "--rpm", "5", "--model", "e"}, "limits by model"},
		{[]string{"users", "update", "ada"}, "nothing to change"},
		{[]string{"users", "update", "nobody", "--name", "x"}, "no user has the subject or email"},
		{[]string{"users", "update", "ada", "--team", "configured"}, "not a member"},
		{[]string{"users", "show"}, "give one user"},
		{[]string{"users", "delete", "usr_none"}, "usr_none"},
		{[]string{"teams", "create"}, "--name is required"},
		{[]string{"teams", "create", "--name", "x", "--managed-settings", "/nonexistent.json"}, "--managed-settings"},
		{[]string{"teams", "update", "configured", "--models", "e"}, "identity.teams in the config file"},
		{[]string{"teams", "delete", "configured"}, "identity.teams in the config file"},
		{[]string{"teams", "add-member", "configured"}, "give a team"},
		{[]string{"teams", "frobnicate"}, "unknown command"},
		{[]string{"audit", "--limit", "0"}, "--limit"},
		{[]string{"audit", "--since", "last week"}, "--since"},
	}
	for _, tc := range tests {
		_, errs, code := run(t, append(tc.args, "--config", cfgPath)...)
		if code == 0 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want an error mentioning %q", tc.args, code, errs, tc.want)
		}
	}
	// Members of a configured team can be changed.
	if out, errs, code := run(t, "teams", "add-member", "configured", "ada", "--config", cfgPath); code != 0 {
		t.Errorf("add a member to a configured team: %d %q %q", code, out, errs)
	}
}

// TestAttributionCommands: usage by user, team and session, and the
// agent sessions, from records on a fixed day, from the database and
// from a running gateway.
func TestAttributionCommands(t *testing.T) {
	t.Setenv("TOLLGATE_CONFIG", "")
	t.Setenv("TOLLGATE_URL", "")
	t.Setenv("TOLLGATE_MASTER_KEY", "")
	cfgPath, cfg, db := cliDB(t, "sqlite://"+filepath.Join(t.TempDir(), "sessions.db"))
	ctx := context.Background()
	day := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	if err := db.CreateTeam(ctx, store.Team{ID: "team_x", Name: "platform", Source: "admin", CreatedAt: day, UpdatedAt: day}); err != nil {
		t.Fatal(err)
	}
	for _, u := range []store.User{{ID: "usr_a", Subject: "ada@example.com"}, {ID: "usr_b", Subject: "bob@example.com"}} {
		u.Source, u.CreatedAt = "admin", day
		if err := db.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	cost := func(n int64) *int64 { return &n }
	rec := func(i int, user, team, session string, input, cacheRead int64) store.Request {
		return store.Request{ID: "req_" + string(rune('a'+i)), Time: day.Add(time.Duration(i) * time.Minute), Endpoint: "/v1/messages",
			Model: "echo", CanonicalModel: "echo", Provider: "demo", Status: 200, Input: input, CacheRead: cacheRead,
			CostNanoUSD: cost(1_000_000 * (input + cacheRead)), UserID: user, TeamID: team, SessionID: session}
	}
	if err := db.InsertRequests(ctx, []store.Request{rec(1, "usr_a", "team_x", "sess-1", 10, 30), rec(2, "usr_a", "team_x", "sess-1", 10, 50),
		rec(3, "usr_b", "", "sess-2", 5, 0), rec(4, "", "", "", 1, 0)}); err != nil {
		t.Fatal(err)
	}
	built, err := cli.Build(cfg, cli.Options{MasterKey: "sk-master-cli", Logger: slog.New(slog.DiscardHandler), Store: db})
	if err != nil {
		t.Fatal(err)
	}
	gw := httptest.NewServer(built.Handler)
	defer func() { gw.Close(); built.Close() }()
	span := []string{"--since", "2026-11-22T00:00:00Z", "--until", "2026-11-23T00:00:00Z"}
	for mode, flags := range map[string][]string{"config": {"--config", cfgPath}, "url": {"--url", gw.URL, "--admin-key", "sk-master-cli"}} {
		cmd := func(args ...string) (string, string, int) {
			t.Helper()
			return run(t, append(append(args, span...), flags...)...)
		}
		out, errs, code := cmd("usage", "--by", "user")
		for _, want := range []string{"ada@example.com (usr_a)", "bob@example.com (usr_b)", "(no user)", "by user"} {
			if code != 0 || !strings.Contains(out, want) {
				t.Errorf("%s: usage --by user: no %q: %d %q %q", mode, want, code, out, errs)
			}
		}
		out, errs, code = cmd("usage", "--by", "team", "--user", "ada@example.com", "--format", "json")
		var rep struct {
			Data []struct {
				Group    string
				Requests int
			}
		}
		if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || len(rep.Data) != 1 || rep.Data[0].Group != "team_x" || rep.Data[0].Requests != 2 {
			t.Errorf("%s: usage --by team --user: %d %q %q", mode, code, out, errs)
		}
		out, errs, code = cmd("usage", "--by", "session", "--team", "platform")
		if code != 0 || !strings.Contains(out, "sess-1") || strings.Contains(out, "sess-2") || !strings.Contains(out, "of team platform") {
			t.Errorf("%s: usage --by session --team: %d %q %q", mode, code, out, errs)
		}
		out, errs, code = cmd("sessions")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[1], "sess-2") || !strings.Contains(lines[2], "ada@example.com") ||
			!strings.Contains(lines[2], "platform") || !strings.Contains(lines[2], "80%") || !strings.Contains(lines[2], "0.10") {
			t.Errorf("%s: sessions: %d %q %q", mode, code, out, errs)
		}
		out, errs, code = cmd("sessions", "--user", "bob@example.com", "--json")
		var l struct {
			Data []struct {
				SessionID string `json:"session_id"`
			}
		}
		if code != 0 || json.Unmarshal([]byte(out), &l) != nil || len(l.Data) != 1 || l.Data[0].SessionID != "sess-2" {
			t.Errorf("%s: sessions --user: %d %q %q", mode, code, out, errs)
		}
		if _, errs, code = cmd("sessions", "--team", "nope"); code == 0 || !strings.Contains(errs, "no team is named") {
			t.Errorf("%s: sessions --team nope: %d %q", mode, code, errs)
		}
	}
}
