package store_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/store"
)

func TestTeams(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			eng := store.Team{ID: "team_eng", Name: "engineering", IDPGroups: []string{"eng", "platform"}, Models: []string{"claude-*"},
				Limits: []byte(`{"budget":{"usd":100}}`), MemberLimits: []byte(`{"rpm":60}`),
				ClaudeCode: []byte(`{"managed_settings":{"model":"x"}}`), Source: "config", CreatedAt: t0, UpdatedAt: t0}
			if err := s.CreateTeam(ctx, eng); err != nil {
				t.Fatal(err)
			}
			mustTeam(t, s, "team_ops", "ops")
			for _, dup := range []store.Team{{ID: "team_eng", Name: "other"}, {ID: "team_new", Name: "engineering"}} {
				if err := s.CreateTeam(ctx, dup); !errors.Is(err, store.ErrDuplicateTeam) {
					t.Errorf("CreateTeam(%s, %s): %v, want ErrDuplicateTeam", dup.ID, dup.Name, err)
				}
			}
			got, err := s.TeamByName(ctx, "engineering")
			if err != nil || got.ID != "team_eng" || !slices.Equal(got.IDPGroups, eng.IDPGroups) || !slices.Equal(got.Models, eng.Models) ||
				string(got.Limits) != string(eng.Limits) || string(got.MemberLimits) != string(eng.MemberLimits) ||
				string(got.ClaudeCode) != string(eng.ClaudeCode) || got.Source != "config" || !got.CreatedAt.Equal(t0) {
				t.Errorf("TeamByName: %+v, %v", got, err)
			}
			got, err = s.TeamByID(ctx, "team_ops")
			if err != nil || got.Name != "ops" || string(got.Limits) != "{}" || string(got.ClaudeCode) != "{}" || got.Models == nil || len(got.IDPGroups) != 0 {
				t.Errorf("TeamByID: %+v, %v", got, err)
			}
			if _, err := s.TeamByID(ctx, "team_none"); !store.IsNotFound(err) {
				t.Errorf("missing team: %v", err)
			}
			if _, err := s.TeamByName(ctx, "none"); !store.IsNotFound(err) {
				t.Errorf("missing team name: %v", err)
			}
			teams, err := s.Teams(ctx)
			if err != nil || len(teams) != 2 || teams[0].Name != "engineering" || teams[1].Name != "ops" {
				t.Errorf("Teams: %+v, %v", teams, err)
			}

			got, err = s.UpdateTeam(ctx, "team_ops", store.TeamUpdate{Name: ptr("operations"), Models: &[]string{"a"},
				IDPGroups: &[]string{"ops"}, Limits: []byte(`{"rpm":1}`), ClaudeCode: []byte(`{"managed_settings":{}}`)}, t0.Add(time.Hour))
			if err != nil || got.Name != "operations" || !slices.Equal(got.Models, []string{"a"}) || !slices.Equal(got.IDPGroups, []string{"ops"}) ||
				string(got.Limits) != `{"rpm":1}` || string(got.MemberLimits) != "{}" || string(got.ClaudeCode) != `{"managed_settings":{}}` ||
				!got.UpdatedAt.Equal(t0.Add(time.Hour)) {
				t.Errorf("UpdateTeam: %+v, %v", got, err)
			}
			if _, err := s.UpdateTeam(ctx, "team_ops", store.TeamUpdate{Name: ptr("engineering")}, t0); !errors.Is(err, store.ErrDuplicateTeam) {
				t.Errorf("renaming onto another team: %v", err)
			}
			if _, err := s.UpdateTeam(ctx, "team_none", store.TeamUpdate{Name: ptr("x")}, t0); !store.IsNotFound(err) {
				t.Errorf("update of a missing team: %v", err)
			}

			// The configuration's teams: created, then updated by name.
			later := t0.Add(time.Hour)
			up, err := s.UpsertTeamByName(ctx, store.Team{ID: "team_cfg", Name: "research", Models: []string{"m"}, Source: "config",
				CreatedAt: t0, UpdatedAt: t0})
			if err != nil || up.ID != "team_cfg" || !slices.Equal(up.Models, []string{"m"}) {
				t.Fatalf("UpsertTeamByName (create): %+v, %v", up, err)
			}
			up, err = s.UpsertTeamByName(ctx, store.Team{ID: "team_other", Name: "research", IDPGroups: []string{"r"},
				MemberLimits: []byte(`{"rpm":2}`), Source: "config", CreatedAt: later, UpdatedAt: later})
			if err != nil || up.ID != "team_cfg" || !up.CreatedAt.Equal(t0) || !up.UpdatedAt.Equal(later) || len(up.Models) != 0 ||
				!slices.Equal(up.IDPGroups, []string{"r"}) || string(up.MemberLimits) != `{"rpm":2}` {
				t.Errorf("UpsertTeamByName (update): %+v, %v", up, err)
			}
		})
	}
}

func TestMemberships(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			for _, id := range []string{"usr_a", "usr_b"} {
				mustUser(t, s, id)
			}
			for _, tm := range [][2]string{{"team_1", "alpha"}, {"team_2", "beta"}, {"team_3", "gamma"}, {"team_4", "delta"}} {
				mustTeam(t, s, tm[0], tm[1])
			}
			for range 2 { // idempotent
				if err := s.AddMember(ctx, "team_1", "usr_a", store.MemberAdmin); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.AddMember(ctx, "team_1", "usr_b", store.MemberIdP); err != nil {
				t.Fatal(err)
			}
			if err := s.AddMember(ctx, "team_none", "usr_a", store.MemberAdmin); !store.IsNotFound(err) {
				t.Errorf("a member of a missing team: %v", err)
			}
			if err := s.AddMember(ctx, "team_1", "usr_none", store.MemberAdmin); !store.IsNotFound(err) {
				t.Errorf("a missing user as member: %v", err)
			}
			members, err := s.Members(ctx, "team_1")
			if err != nil || len(members) != 2 {
				t.Fatalf("Members: %+v, %v", members, err)
			}
			if us, err := s.Users(ctx, store.UserFilter{TeamID: "team_1", Query: "usr_b"}); err != nil || len(us) != 1 || us[0].ID != "usr_b" {
				t.Errorf("Users by team and query: %+v, %v", us, err)
			}
			if err := s.RemoveMember(ctx, "team_1", "usr_b"); err != nil {
				t.Fatal(err)
			}
			if err := s.RemoveMember(ctx, "team_1", "usr_b"); err != nil {
				t.Errorf("removing again: %v", err)
			}

			// usr_a: admin member of alpha; the IdP says beta and gamma.
			teamIDs := func() []string {
				teams, err := s.TeamsOf(ctx, "usr_a")
				if err != nil {
					t.Fatal(err)
				}
				var ids []string
				for _, tm := range teams {
					ids = append(ids, tm.ID)
				}
				return ids
			}
			primary := func() string {
				u, err := s.UserByID(ctx, "usr_a")
				if err != nil {
					t.Fatal(err)
				}
				return u.PrimaryTeamID
			}
			for _, tc := range []struct {
				idp         []string
				primary     string
				wantTeams   []string // by name: alpha, beta, delta, gamma
				wantPrimary string
			}{
				{[]string{"team_2", "team_3"}, "team_2", []string{"team_1", "team_2", "team_3"}, "team_2"},
				// The primary is still a team of theirs: kept.
				{[]string{"team_3"}, "team_3", []string{"team_1", "team_3"}, "team_3"},
				{[]string{"team_4", "team_3"}, "team_4", []string{"team_1", "team_4", "team_3"}, "team_3"},
				// No IdP team any more: the admin membership stays.
				{nil, "", []string{"team_1"}, ""},
			} {
				if err := s.SyncIdPTeams(ctx, "usr_a", tc.idp, tc.primary); err != nil {
					t.Fatal(err)
				}
				if got := teamIDs(); !slices.Equal(got, tc.wantTeams) {
					t.Errorf("SyncIdPTeams(%v): teams %v, want %v", tc.idp, got, tc.wantTeams)
				}
				if got := primary(); got != tc.wantPrimary {
					t.Errorf("SyncIdPTeams(%v): primary %q, want %q", tc.idp, got, tc.wantPrimary)
				}
			}
			// An admin membership is not turned into an IdP one, nor removed.
			if err := s.SyncIdPTeams(ctx, "usr_a", []string{"team_1"}, "team_1"); err != nil {
				t.Fatal(err)
			}
			if err := s.SyncIdPTeams(ctx, "usr_a", nil, ""); err != nil {
				t.Fatal(err)
			}
			if got := teamIDs(); !slices.Equal(got, []string{"team_1"}) {
				t.Errorf("admin membership after syncs: %v", got)
			}
			if err := s.SyncIdPTeams(ctx, "usr_a", []string{"team_none"}, ""); !store.IsNotFound(err) {
				t.Errorf("syncing to a missing team: %v", err)
			}

			// Deleting a team ends its memberships and its primaries.
			if _, err := s.UpdateUser(ctx, "usr_a", store.UserUpdate{PrimaryTeamID: ptr("team_1")}); err != nil {
				t.Fatal(err)
			}
			if err := s.DeleteTeam(ctx, "team_1"); err != nil {
				t.Fatal(err)
			}
			if got := teamIDs(); len(got) != 0 {
				t.Errorf("teams after delete: %v", got)
			}
			if got := primary(); got != "" {
				t.Errorf("primary after delete: %q", got)
			}
			if err := s.DeleteTeam(ctx, "team_1"); !store.IsNotFound(err) {
				t.Errorf("deleting again: %v", err)
			}
		})
	}
}
