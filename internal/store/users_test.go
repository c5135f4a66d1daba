package store_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/store"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

func TestUsers(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ada := store.User{ID: "usr_ada", Subject: "ada@example.com", Email: "ada@example.com", Name: "Ada Lovelace",
				Source: "idp", CreatedAt: t0}
			bob := store.User{ID: "usr_bob", Subject: "bob@example.com", Name: "Bob 100%_sure", Limits: []byte(`{"rpm":5}`),
				Models: []string{"m1"}, Admin: true, Source: "admin", CreatedAt: t0.Add(time.Minute)}
			for _, u := range []store.User{ada, bob} {
				if err := s.CreateUser(ctx, u); err != nil {
					t.Fatal(err)
				}
			}
			for _, dup := range []store.User{{ID: "usr_ada", Subject: "other", Source: "idp", CreatedAt: t0},
				{ID: "usr_new", Subject: "ada@example.com", Source: "idp", CreatedAt: t0}} {
				if err := s.CreateUser(ctx, dup); !errors.Is(err, store.ErrDuplicateUser) {
					t.Errorf("CreateUser(%s, %s): %v, want ErrDuplicateUser", dup.ID, dup.Subject, err)
				}
			}
			got, err := s.UserByID(ctx, "usr_ada")
			if err != nil || got.Subject != ada.Subject || got.Name != ada.Name || string(got.Limits) != "{}" ||
				len(got.Models) != 0 || got.Models == nil || got.Admin || got.Disabled || got.Source != "idp" ||
				!got.CreatedAt.Equal(t0) || got.LastSeenAt != nil {
				t.Errorf("UserByID: %+v, %v", got, err)
			}
			got, err = s.UserBySubject(ctx, "bob@example.com")
			if err != nil || got.ID != "usr_bob" || string(got.Limits) != `{"rpm":5}` || !slices.Equal(got.Models, []string{"m1"}) || !got.Admin {
				t.Errorf("UserBySubject: %+v, %v", got, err)
			}
			if _, err := s.UserByID(ctx, "usr_none"); !store.IsNotFound(err) {
				t.Errorf("missing user: %v", err)
			}
			if _, err := s.UserBySubject(ctx, "none"); !store.IsNotFound(err) {
				t.Errorf("missing subject: %v", err)
			}

			for _, tc := range []struct {
				f    store.UserFilter
				want []string
			}{
				{store.UserFilter{}, []string{"usr_ada", "usr_bob"}},
				{store.UserFilter{Query: "LOVELACE"}, []string{"usr_ada"}},
				{store.UserFilter{Query: "example"}, []string{"usr_ada", "usr_bob"}},
				{store.UserFilter{Query: "100%_"}, []string{"usr_bob"}}, // wildcards are literal
				{store.UserFilter{Query: "0%s"}, nil},
				{store.UserFilter{Limit: 1}, []string{"usr_ada"}},
			} {
				us, err := s.Users(ctx, tc.f)
				if err != nil {
					t.Fatal(err)
				}
				var ids []string
				for _, u := range us {
					ids = append(ids, u.ID)
				}
				if !slices.Equal(ids, tc.want) {
					t.Errorf("Users(%+v) = %v, want %v", tc.f, ids, tc.want)
				}
			}

			seen := t0.Add(time.Hour)
			got, err = s.UpdateUser(ctx, "usr_ada", store.UserUpdate{Name: ptr("Ada King"), Models: &[]string{"a", "b"},
				Limits: []byte(`{"rpd":9}`), Disabled: ptr(true), Admin: ptr(true), LastSeenAt: &seen, PrimaryTeamID: ptr("team_x")})
			if err != nil || got.Name != "Ada King" || got.Email != ada.Email || !slices.Equal(got.Models, []string{"a", "b"}) ||
				string(got.Limits) != `{"rpd":9}` || !got.Disabled || !got.Admin || got.LastSeenAt == nil || !got.LastSeenAt.Equal(seen) ||
				got.PrimaryTeamID != "team_x" {
				t.Errorf("UpdateUser: %+v, %v", got, err)
			}
			if got, err = s.UpdateUser(ctx, "usr_ada", store.UserUpdate{}); err != nil || got.Name != "Ada King" {
				t.Errorf("empty update: %+v, %v", got, err)
			}
			if _, err := s.UpdateUser(ctx, "usr_none", store.UserUpdate{Name: ptr("x")}); !store.IsNotFound(err) {
				t.Errorf("update of a missing user: %v", err)
			}
		})
	}
}

func TestDeleteUserRevokesKeysAndTokens(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			mustUser(t, s, "usr_a")
			mustUser(t, s, "usr_b")
			mustTeam(t, s, "team_1", "one")
			for _, id := range []string{"usr_a", "usr_b"} {
				if err := s.AddMember(ctx, "team_1", id, store.MemberAdmin); err != nil {
					t.Fatal(err)
				}
			}
			for i, k := range []store.Key{
				{ID: "key_a", Name: "a", Hash: []byte("ha"), Prefix: "p", CreatedAt: t0, UserID: "usr_a", TeamID: "team_1"},
				{ID: "key_b", Name: "b", Hash: []byte("hb"), Prefix: "p", CreatedAt: t0.Add(time.Second), UserID: "usr_b"},
				{ID: "key_c", Name: "c", Hash: []byte("hc"), Prefix: "p", CreatedAt: t0.Add(2 * time.Second)},
			} {
				if err := s.CreateKey(ctx, k); err != nil {
					t.Fatal(i, err)
				}
			}
			tok := store.Token{Hash: []byte("tok_a"), Kind: "access", UserID: "usr_a", FamilyID: "fam", CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
			if err := s.CreateTokenFamily(ctx, store.TokenFamily{ID: "fam", UserID: "usr_a", CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}, tok); err != nil {
				t.Fatal(err)
			}
			deleted := t0.Add(time.Minute)
			if err := s.DeleteUser(ctx, "usr_a", deleted); err != nil {
				t.Fatal(err)
			}
			if _, err := s.UserByID(ctx, "usr_a"); !store.IsNotFound(err) {
				t.Errorf("deleted user: %v", err)
			}
			if err := s.DeleteUser(ctx, "usr_a", t0); !store.IsNotFound(err) {
				t.Errorf("deleting again: %v", err)
			}
			for id, revoked := range map[string]bool{"key_a": true, "key_b": false, "key_c": false} {
				k, err := s.KeyByID(ctx, id)
				if err != nil || k.Revoked != revoked {
					t.Errorf("%s: revoked %v, want %v (%v)", id, k.Revoked, revoked, err)
				}
			}
			if got, err := s.TokenByHash(ctx, tok.Hash); err != nil || got.RevokedAt == nil || !got.RevokedAt.Equal(deleted) {
				t.Errorf("the user's token: %+v, %v", got, err)
			}
			if f, err := s.TokenFamily(ctx, "fam"); err != nil || f.RevokedAt == nil || !f.RevokedAt.Equal(deleted) {
				t.Errorf("the user's sign-in: %+v, %v", f, err)
			}
			members, err := s.Members(ctx, "team_1")
			if err != nil || len(members) != 1 || members[0].ID != "usr_b" {
				t.Errorf("members after delete: %+v, %v", members, err)
			}
		})
	}
}

func TestKeysOfUser(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			for i, k := range []store.Key{
				{ID: "key_1", Name: "1", Hash: []byte("h1"), Prefix: "p", CreatedAt: t0, UserID: "usr_a", TeamID: "team_1"},
				{ID: "key_2", Name: "2", Hash: []byte("h2"), Prefix: "p", CreatedAt: t0.Add(time.Second), UserID: "usr_a"},
				{ID: "key_3", Name: "3", Hash: []byte("h3"), Prefix: "p", CreatedAt: t0.Add(2 * time.Second)},
			} {
				if err := s.CreateKey(ctx, k); err != nil {
					t.Fatal(i, err)
				}
			}
			keys, err := s.KeysOf(ctx, "usr_a")
			if err != nil || len(keys) != 2 || keys[0].ID != "key_2" || keys[1].ID != "key_1" || keys[1].TeamID != "team_1" {
				t.Fatalf("KeysOf: %+v, %v", keys, err)
			}
			k, err := s.KeyByID(ctx, "key_3")
			if err != nil || k.UserID != "" || k.TeamID != "" {
				t.Errorf("a key of no one: %+v, %v", k, err)
			}
			k, err = s.UpdateKey(ctx, "key_3", store.KeyUpdate{UserID: ptr("usr_b"), TeamID: ptr("team_2")})
			if err != nil || k.UserID != "usr_b" || k.TeamID != "team_2" {
				t.Errorf("set user and team: %+v, %v", k, err)
			}
			k, err = s.UpdateKey(ctx, "key_1", store.KeyUpdate{UserID: ptr(""), TeamID: ptr("")})
			if err != nil || k.UserID != "" || k.TeamID != "" {
				t.Errorf("clear user and team: %+v, %v", k, err)
			}
			if keys, err := s.KeysOf(ctx, "usr_a"); err != nil || len(keys) != 1 {
				t.Errorf("KeysOf after the change: %+v, %v", keys, err)
			}
			if _, err := s.UpdateKey(ctx, "key_none", store.KeyUpdate{UserID: ptr("x")}); !store.IsNotFound(err) {
				t.Errorf("update of a missing key: %v", err)
			}
		})
	}
}

func TestSessionOfUser(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			se := store.Session{ID: "s1", UserID: "usr_a", Admin: true, CSRF: "c", CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
			if err := s.PutSession(ctx, se); err != nil {
				t.Fatal(err)
			}
			if err := s.PutSession(ctx, store.Session{ID: "s2", KeyID: "key_1", CSRF: "c", CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
			got, err := s.SessionByID(ctx, "s1", t0)
			if err != nil || got.UserID != "usr_a" || !got.Admin || got.KeyID != "" {
				t.Errorf("SessionByID: %+v, %v", got, err)
			}
			if got, err := s.SessionByID(ctx, "s2", t0); err != nil || got.UserID != "" || got.Admin || got.KeyID != "key_1" {
				t.Errorf("a key's session: %+v, %v", got, err)
			}
			if err := s.DeleteUserSessions(ctx, "usr_a"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.SessionByID(ctx, "s1", t0); !errors.Is(err, store.ErrNoSession) {
				t.Errorf("after DeleteUserSessions: %v", err)
			}
			if _, err := s.SessionByID(ctx, "s2", t0); err != nil {
				t.Errorf("a key's session went too: %v", err)
			}
		})
	}
}

func mustUser(t *testing.T, s *store.Store, id string) {
	t.Helper()
	if err := s.CreateUser(context.Background(), store.User{ID: id, Subject: id + "@example.com", Source: "idp", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
}

func mustTeam(t *testing.T, s *store.Store, id, name string) {
	t.Helper()
	if err := s.CreateTeam(context.Background(), store.Team{ID: id, Name: name, Source: "admin", CreatedAt: t0, UpdatedAt: t0}); err != nil {
		t.Fatal(err)
	}
}
