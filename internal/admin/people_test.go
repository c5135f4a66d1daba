package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/admin"
	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/store/storetest"
)

// audited returns the actions of the audit log about target, oldest first.
func audited(t *testing.T, db *store.Store, target string) []string {
	t.Helper()
	events, err := db.Audit(context.Background(), store.AuditFilter{TargetID: target, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := len(events) - 1; i >= 0; i-- {
		out = append(out, events[i].Action)
		if events[i].ActorKind != admin.ActorMaster {
			t.Errorf("event %d (%s): actor %q, want the master key", events[i].ID, events[i].Action, events[i].ActorKind)
		}
	}
	return out
}

func TestUsersAndTeams(t *testing.T) {
	for name, db := range storetest.Open(t) {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, db)
			ctx := context.Background()

			var team admin.TeamView
			status, body := e.call("POST", "/admin/teams", master, `{"name":"platform","idp_groups":["eng-platform"],"models":["echo"],`+
				`"limits":{"rpm":600},"member_limits":{"budget_usd":20,"budget_period":"monthly"},`+
				`"claude_code":{"managed_settings":{"permissions":{"deny":["Bash(rm:*)"]}}}}`, &team)
			if status != http.StatusCreated || !strings.HasPrefix(team.ID, "team_") || team.Source != "admin" || team.Limits.RPM != 600 ||
				team.MemberLimits.BudgetUSD == nil || string(team.ClaudeCode.ManagedSettings) != `{"permissions":{"deny":["Bash(rm:*)"]}}` {
				t.Fatalf("create team: %d %v", status, body)
			}

			var u admin.UserView
			status, body = e.call("POST", "/admin/users", master, `{"subject":"ada@example.com","email":"ada@example.com","name":"Ada",`+
				`"primary_team_id":"`+team.ID+`","limits":{"tpm":1000},"models":["e"]}`, &u)
			if status != http.StatusCreated || !strings.HasPrefix(u.ID, "usr_") || u.Source != "admin" || u.PrimaryTeamID == nil ||
				*u.PrimaryTeamID != team.ID || len(u.Teams) != 1 || u.Teams[0] != (admin.TeamRef{ID: team.ID, Name: "platform"}) ||
				u.Limits.TPM != 1000 || u.LastSeenAt != nil {
				t.Fatalf("create user: %d %v", status, body)
			}
			var other admin.UserView
			e.call("POST", "/admin/users", master, `{"subject":"bob@example.com"}`, &other)

			// Keys belong to a user and are charged to one of their teams.
			var k admin.KeyView
			status, body = e.call("POST", "/admin/keys", master, `{"name":"ada-laptop","user_id":"`+u.ID+`","team_id":"`+team.ID+`"}`, &k)
			if status != http.StatusCreated || k.UserID == nil || *k.UserID != u.ID || k.TeamID == nil || *k.TeamID != team.ID {
				t.Fatalf("create key for a user: %d %v", status, body)
			}
			if status, body := e.call("POST", "/v1/messages", k.Key, fmt.Sprintf(message, "echo"), nil); status != 200 {
				t.Fatalf("the user's key: %d %v", status, body)
			}
			var keys admin.KeyList
			if status, body := e.call("GET", "/admin/users/"+u.ID+"/keys", master, "", &keys); status != 200 || len(keys.Data) != 1 || keys.Data[0].ID != k.ID {
				t.Fatalf("user keys: %d %v", status, body)
			}
			keys = admin.KeyList{}
			if status, body := e.call("GET", "/admin/keys?user_id="+other.ID, master, "", &keys); status != 200 || len(keys.Data) != 0 {
				t.Fatalf("keys of a user without any: %d %v", status, body)
			}
			var moved admin.KeyView
			if status, body := e.call("PATCH", "/admin/keys/"+k.ID, master, `{"team_id":null}`, &moved); status != 200 || moved.TeamID != nil || *moved.UserID != u.ID {
				t.Fatalf("key off its team: %d %v", status, body)
			}

			// Members.
			var added admin.UserView
			if status, body := e.call("PUT", "/admin/teams/"+team.ID+"/members/"+other.ID, master, "", &added); status != 200 || len(added.Teams) != 1 {
				t.Fatalf("add member: %d %v", status, body)
			}
			var members admin.UserList
			if status, body := e.call("GET", "/admin/teams/"+team.ID+"/members", master, "", &members); status != 200 || len(members.Data) != 2 ||
				members.Data[0].Subject != "ada@example.com" || members.Data[1].Subject != "bob@example.com" {
				t.Fatalf("members: %d %v", status, body)
			}
			var teams admin.TeamList
			if status, _ := e.call("GET", "/admin/teams", master, "", &teams); status != 200 || len(teams.Data) != 1 || teams.Data[0].Members != 2 {
				t.Fatalf("teams: %+v", teams)
			}
			var users admin.UserList
			if status, _ := e.call("GET", "/admin/users?q=BOB", master, "", &users); status != 200 || len(users.Data) != 1 || users.Data[0].ID != other.ID ||
				len(users.Data[0].Teams) != 1 {
				t.Fatalf("users?q: %+v", users)
			}
			var removed admin.UserView
			if status, body := e.call("DELETE", "/admin/teams/"+team.ID+"/members/"+u.ID, master, "", &removed); status != 200 ||
				len(removed.Teams) != 0 || removed.PrimaryTeamID != nil {
				t.Fatalf("remove member (their primary team): %d %v", status, body)
			}

			// Patch a user and a team.
			var patched admin.UserView
			if status, body := e.call("PATCH", "/admin/users/"+u.ID, master, `{"name":"Ada L.","limits":null,"models":null,"admin":true}`, &patched); status != 200 ||
				patched.Name != "Ada L." || patched.Limits.TPM != 0 || len(patched.Models) != 0 || !patched.Admin {
				t.Fatalf("patch user: %d %v", status, body)
			}
			var pt admin.TeamView
			if status, body := e.call("PATCH", "/admin/teams/"+team.ID, master, `{"name":"platform-eng","claude_code":null,"member_limits":{"rpm":5}}`, &pt); status != 200 ||
				pt.Name != "platform-eng" || pt.ClaudeCode.ManagedSettings != nil || pt.MemberLimits.RPM != 5 || pt.MemberLimits.BudgetUSD != nil {
				t.Fatalf("patch team: %d %v", status, body)
			}

			// Disabling signs the user out everywhere.
			now := time.Now()
			for i, kind := range []string{store.TokenAccess, store.TokenRefresh} {
				if err := db.CreateToken(ctx, store.Token{Hash: []byte{byte(i), 1, 2}, Kind: kind, UserID: u.ID, FamilyID: "fam", CreatedAt: now,
					ExpiresAt: now.Add(time.Hour)}); err != nil {
					t.Fatal(err)
				}
			}
			var disabled admin.UserView
			if status, body := e.call("PATCH", "/admin/users/"+u.ID, master, `{"disabled":true}`, &disabled); status != 200 || !disabled.Disabled {
				t.Fatalf("disable: %d %v", status, body)
			}
			if tok, err := db.TokenByHash(ctx, []byte{0, 1, 2}); err != nil || tok.RevokedAt == nil {
				t.Errorf("a disabled user's token is not revoked: %+v %v", tok, err)
			}
			if status, body := e.call("POST", "/admin/keys", master, `{"name":"x","user_id":"`+u.ID+`"}`, nil); status != 400 || !strings.Contains(fmt.Sprint(body), "disabled") {
				t.Errorf("a key for a disabled user: %d %v", status, body)
			}
			e.call("PATCH", "/admin/users/"+u.ID, master, `{"disabled":false}`, nil)

			// Deleting revokes their keys.
			if status, body := e.call("DELETE", "/admin/users/"+u.ID, master, "", nil); status != 200 {
				t.Fatalf("delete user: %d %v", status, body)
			}
			if status, _ := e.call("GET", "/admin/users/"+u.ID, master, "", nil); status != 404 {
				t.Errorf("deleted user: %d", status)
			}
			if stored, err := db.KeyByID(ctx, k.ID); err != nil || !stored.Revoked {
				t.Errorf("the deleted user's key: %+v %v", stored, err)
			}
			if status, _ := e.call("POST", "/v1/messages", k.Key, fmt.Sprintf(message, "echo"), nil); status != http.StatusUnauthorized {
				t.Errorf("the deleted user's key still works: %d", status)
			}
			if status, body := e.call("DELETE", "/admin/teams/"+team.ID, master, "", nil); status != 200 {
				t.Fatalf("delete team: %d %v", status, body)
			}

			for target, want := range map[string]string{
				u.ID:    "user_created user_updated token_revoked user_disabled user_enabled user_deleted",
				team.ID: "team_created team_member_added team_member_removed team_updated team_deleted",
				k.ID:    "key_created key_updated key_revoked",
			} {
				if got := strings.Join(audited(t, db, target), " "); got != want {
					t.Errorf("audit of %s:\n got %s\nwant %s", target, got, want)
				}
			}
		})
	}
}

func TestPeopleBadInput(t *testing.T) {
	db := storetest.Open(t)["sqlite"]
	e := newEnv(t, db)
	ctx := context.Background()
	var team, lonely admin.TeamView
	e.call("POST", "/admin/teams", master, `{"name":"t1"}`, &team)
	e.call("POST", "/admin/teams", master, `{"name":"t2"}`, &lonely)
	var u admin.UserView
	e.call("POST", "/admin/users", master, `{"subject":"ada","primary_team_id":"`+team.ID+`"}`, &u)
	var k admin.KeyView
	e.call("POST", "/admin/keys", master, `{"name":"k"}`, &k)
	cfgTeam, err := db.UpsertTeamByName(ctx, store.Team{ID: "team_cfg", Name: "from-config", Source: admin.SourceConfig,
		CreatedAt: time.Now(), UpdatedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"POST", "/admin/users", `{"email":"x@example.com"}`, 400, "subject: required"},
		{"POST", "/admin/users", `{"subject":"ada"}`, 409, "already exists"},
		{"POST", "/admin/users", `{"subject":"b","limits":{"rpm":-1}}`, 400, "limits.rpm"},
		{"POST", "/admin/users", `{"subject":"b","limits":{"budget_period":"daily"}}`, 400, "without budget_usd"},
		{"POST", "/admin/users", `{"subject":"b","models":["nope"]}`, 400, "nope"},
		{"POST", "/admin/users", `{"subject":"b","primary_team_id":"team_none"}`, 400, "primary_team_id: no team"},
		{"POST", "/admin/users", `{"subject":"b","colour":"red"}`, 400, "colour"},
		{"POST", "/admin/users", `{"subject":"line\nbreak"}`, 400, "subject: must not contain control characters"},
		{"GET", "/admin/users/usr_none", ``, 404, "usr_none"},
		{"PATCH", "/admin/users/usr_none", `{"name":"x"}`, 404, "usr_none"},
		{"DELETE", "/admin/users/usr_none", ``, 404, "usr_none"},
		{"GET", "/admin/users/usr_none/keys", ``, 404, "usr_none"},
		{"PATCH", "/admin/users/" + u.ID, `{"subject":"eve"}`, 400, "cannot be changed"},
		{"PATCH", "/admin/users/" + u.ID, `{"colour":"red"}`, 400, "unknown field"},
		{"PATCH", "/admin/users/" + u.ID, `{"primary_team_id":"` + lonely.ID + `"}`, 400, "not a member"},
		{"PATCH", "/admin/users/" + u.ID, `{"limits":{"budget_usd":-5}}`, 400, "limits.budget_usd"},
		{"PATCH", "/admin/users/" + u.ID, `{"disabled":"yes"}`, 400, "disabled"},
		{"GET", "/admin/users?team_id=team_none", ``, 400, "team_id: no team"},
		{"GET", "/admin/users?colour=red", ``, 400, "colour"},
		{"POST", "/admin/teams", `{"name":"t1"}`, 409, "already exists"},
		{"POST", "/admin/teams", `{"name":""}`, 400, "name"},
		{"POST", "/admin/teams", `{"name":"t3","member_limits":{"tpm":-1}}`, 400, "member_limits.tpm"},
		{"POST", "/admin/teams", `{"name":"t3","idp_groups":[""]}`, 400, "idp_groups[0]"},
		{"POST", "/admin/teams", `{"name":"t3","claude_code":{"managed_settings":[1]}}`, 400, "managed_settings: must be a JSON object"},
		{"POST", "/admin/teams", `{"name":"t3","claude_code":{"settings":{}}}`, 400, "settings"},
		{"PATCH", "/admin/teams/" + team.ID, `{"name":"t2"}`, 409, "already exists"},
		{"PATCH", "/admin/teams/" + team.ID, `{"source":"config"}`, 400, "cannot be changed"},
		{"PATCH", "/admin/teams/" + cfgTeam.ID, `{"models":["echo"]}`, 409, "identity.teams in the config file"},
		{"DELETE", "/admin/teams/" + cfgTeam.ID, ``, 409, "identity.teams in the config file"},
		{"GET", "/admin/teams/team_none", ``, 404, "team_none"},
		{"GET", "/admin/teams/team_none/members", ``, 404, "team_none"},
		{"PUT", "/admin/teams/team_none/members/" + u.ID, ``, 404, "team_none"},
		{"PUT", "/admin/teams/" + team.ID + "/members/usr_none", ``, 404, "usr_none"},
		{"DELETE", "/admin/teams/" + lonely.ID + "/members/" + u.ID, ``, 404, "not a member"},
		{"POST", "/admin/teams/" + team.ID + "/members", `{}`, 405, "GET"},
		{"POST", "/admin/keys", `{"name":"a","user_id":"usr_none"}`, 400, "user_id: no user"},
		{"POST", "/admin/keys", `{"name":"a","user_id":"` + u.ID + `","team_id":"` + lonely.ID + `"}`, 400, "not a member"},
		{"POST", "/admin/keys", `{"name":"a","team_id":"team_none"}`, 400, "team_id: no team"},
		{"PATCH", "/admin/keys/" + k.ID, `{"user_id":"usr_none"}`, 400, "user_id: no user"},
		{"PATCH", "/admin/keys/" + k.ID, `{"user_id":"` + u.ID + `","team_id":"` + lonely.ID + `"}`, 400, "not a member"},
		{"GET", "/admin/keys?user_id=usr_none", ``, 400, "user_id: no user"},
		{"GET", "/admin/keys?team=x", ``, 400, "team"},
	}
	for _, tc := range tests {
		status, body := e.call(tc.method, tc.path, master, tc.body, nil)
		if status != tc.status || body["type"] != "error" || !strings.Contains(fmt.Sprint(body["error"]), tc.want) {
			t.Errorf("%s %s %s: %d %v; want %d mentioning %q", tc.method, tc.path, tc.body, status, body, tc.status, tc.want)
		}
	}
	// Membership of a team of the configuration file's can be changed.
	if status, body := e.call("PUT", "/admin/teams/"+cfgTeam.ID+"/members/"+u.ID, master, "", nil); status != 200 {
		t.Errorf("add a member to a configured team: %d %v", status, body)
	}
	if status, body := e.call("DELETE", "/admin/teams/"+cfgTeam.ID+"/members/"+u.ID, master, "", nil); status != 200 {
		t.Errorf("remove a member from a configured team: %d %v", status, body)
	}
	if got := audited(t, db, cfgTeam.ID); strings.Join(got, " ") != "team_member_added team_member_removed" {
		t.Errorf("audit of the configured team: %v", got)
	}
	// Refused changes leave no trace.
	if got := audited(t, db, k.ID); strings.Join(got, " ") != "key_created" {
		t.Errorf("audit of the key: %v", got)
	}
}
