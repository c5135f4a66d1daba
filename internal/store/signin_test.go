package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/store"
)

func TestTokens(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			exp := t0.Add(time.Hour)
			for _, tok := range []store.Token{
				{Hash: []byte("access1"), Kind: store.TokenAccess, UserID: "usr_a", TeamID: "team_1", FamilyID: "fam1", Client: "claude-code", CreatedAt: t0, ExpiresAt: exp},
				{Hash: []byte("refresh1"), Kind: store.TokenRefresh, UserID: "usr_a", FamilyID: "fam1", Client: "claude-code", CreatedAt: t0, ExpiresAt: exp},
				{Hash: []byte("refresh2"), Kind: store.TokenRefresh, UserID: "usr_a", FamilyID: "fam2", CreatedAt: t0, ExpiresAt: exp},
				{Hash: []byte("refresh3"), Kind: store.TokenRefresh, UserID: "usr_b", FamilyID: "fam3", CreatedAt: t0, ExpiresAt: exp},
			} {
				if err := s.CreateToken(ctx, tok); err != nil {
					t.Fatal(err)
				}
			}
			got, err := s.TokenByHash(ctx, []byte("access1"))
			if err != nil || got.Kind != store.TokenAccess || got.UserID != "usr_a" || got.TeamID != "team_1" || got.FamilyID != "fam1" ||
				got.Client != "claude-code" || !got.CreatedAt.Equal(t0) || !got.ExpiresAt.Equal(exp) || got.UsedAt != nil || got.RevokedAt != nil {
				t.Errorf("TokenByHash: %+v, %v", got, err)
			}
			if _, err := s.TokenByHash(ctx, []byte("none")); !store.IsNotFound(err) {
				t.Errorf("missing token: %v", err)
			}

			now := t0.Add(time.Minute)
			got, err = s.UseRefreshToken(ctx, []byte("refresh1"), now)
			if err != nil || got.UsedAt == nil || !got.UsedAt.Equal(now) || got.FamilyID != "fam1" {
				t.Fatalf("first use: %+v, %v", got, err)
			}
			if got, err = s.UseRefreshToken(ctx, []byte("refresh1"), now.Add(time.Second)); !errors.Is(err, store.ErrTokenReused) ||
				got.FamilyID != "fam1" || !got.UsedAt.Equal(now) {
				t.Errorf("second use: %+v, %v, want ErrTokenReused", got, err)
			}
			if _, err := s.UseRefreshToken(ctx, []byte("access1"), now); !errors.Is(err, store.ErrTokenInvalid) {
				t.Errorf("an access token as refresh: %v", err)
			}
			if _, err := s.UseRefreshToken(ctx, []byte("refresh2"), exp); !errors.Is(err, store.ErrTokenInvalid) {
				t.Errorf("expired: %v", err)
			}
			if _, err := s.UseRefreshToken(ctx, []byte("none"), now); !store.IsNotFound(err) {
				t.Errorf("missing: %v", err)
			}

			// Of many replicas exchanging one token at once, one succeeds.
			var wg sync.WaitGroup
			var mu sync.Mutex
			results := map[string]int{}
			for range 8 {
				wg.Go(func() {
					_, err := s.UseRefreshToken(ctx, []byte("refresh3"), now)
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil:
						results["ok"]++
					case errors.Is(err, store.ErrTokenReused):
						results["reused"]++
					default:
						t.Error(err)
					}
				})
			}
			wg.Wait()
			if results["ok"] != 1 || results["reused"] != 7 {
				t.Errorf("concurrent uses: %v", results)
			}

			if n, err := s.RevokeTokenFamily(ctx, "fam1", now); err != nil || n != 2 {
				t.Errorf("RevokeTokenFamily: %d, %v", n, err)
			}
			if n, err := s.RevokeTokenFamily(ctx, "fam1", now); err != nil || n != 0 {
				t.Errorf("RevokeTokenFamily again: %d, %v", n, err)
			}
			if _, err := s.UseRefreshToken(ctx, []byte("refresh1"), now); !errors.Is(err, store.ErrTokenInvalid) {
				t.Errorf("a revoked token: %v", err)
			}
			if got, err := s.TokenByHash(ctx, []byte("access1")); err != nil || got.RevokedAt == nil || !got.RevokedAt.Equal(now) {
				t.Errorf("revoked access token: %+v, %v", got, err)
			}
			if n, err := s.RevokeUserTokens(ctx, "usr_a", now); err != nil || n != 1 { // refresh2; fam1 was revoked
				t.Errorf("RevokeUserTokens: %d, %v", n, err)
			}
			if n, err := s.DeleteExpiredTokens(ctx, exp); err != nil || n != 0 {
				t.Errorf("DeleteExpiredTokens before expiry: %d, %v", n, err)
			}
			if n, err := s.DeleteExpiredTokens(ctx, exp.Add(time.Millisecond)); err != nil || n != 4 {
				t.Errorf("DeleteExpiredTokens: %d, %v", n, err)
			}
		})
	}
}

func TestDeviceCodes(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			exp := t0.Add(10 * time.Minute)
			d := store.DeviceCode{Hash: []byte("dev1"), UserCode: "WDJBMJHT", Status: store.DevicePending, Interval: 5, CreatedAt: t0, ExpiresAt: exp}
			if err := s.CreateDeviceCode(ctx, d); err != nil {
				t.Fatal(err)
			}
			dup := d
			dup.Hash = []byte("dev2")
			if err := s.CreateDeviceCode(ctx, dup); !errors.Is(err, store.ErrDuplicateUserCode) {
				t.Errorf("a live user code again: %v", err)
			}
			got, err := s.DeviceByUserCode(ctx, "WDJBMJHT", t0)
			if err != nil || string(got.Hash) != "dev1" || got.Status != store.DevicePending || got.Interval != 5 || !got.ExpiresAt.Equal(exp) {
				t.Errorf("DeviceByUserCode: %+v, %v", got, err)
			}
			if _, err := s.DeviceByUserCode(ctx, "WDJBMJHT", exp); !store.IsNotFound(err) {
				t.Errorf("expired: %v", err)
			}

			// Polls: the first never slows down; one within the interval does.
			for _, tc := range []struct {
				at   time.Duration
				slow bool
			}{{0, false}, {2 * time.Second, true}, {8 * time.Second, false}, {12 * time.Second, true}} {
				got, slow, err := s.PollDevice(ctx, []byte("dev1"), t0.Add(tc.at))
				if err != nil || slow != tc.slow || got.Status != store.DevicePending || !got.LastPollAt.Equal(t0.Add(tc.at)) {
					t.Errorf("poll at %v: %+v slow=%v, %v; want slow=%v", tc.at, got, slow, err, tc.slow)
				}
			}
			if _, _, err := s.PollDevice(ctx, []byte("none"), t0); !store.IsNotFound(err) {
				t.Errorf("poll of a missing code: %v", err)
			}

			now := t0.Add(time.Minute)
			if err := s.DecideDevice(ctx, "WDJBMJHT", true, "usr_a", "team_1", now); err != nil {
				t.Fatal(err)
			}
			if err := s.DecideDevice(ctx, "WDJBMJHT", false, "usr_b", "", now); !errors.Is(err, store.ErrDeviceNotPending) {
				t.Errorf("deciding twice: %v", err)
			}
			if err := s.DecideDevice(ctx, "NONE", true, "usr_a", "", now); !store.IsNotFound(err) {
				t.Errorf("deciding a missing code: %v", err)
			}
			// Polls report the approval, and leave it to RedeemDevice to collect.
			var wg sync.WaitGroup
			for i := range 6 {
				wg.Go(func() {
					got, _, err := s.PollDevice(ctx, []byte("dev1"), now.Add(time.Duration(i)*time.Second))
					if err != nil || got.Status != store.DeviceApproved || got.UserID != "usr_a" || got.TeamID != "team_1" {
						t.Errorf("a poll of the approved code: %+v, %v", got, err)
					}
				})
			}
			wg.Wait()

			// A denial; an expired approval stays as it was.
			for i, code := range []string{"AAAABBBB", "CCCCDDDD"} {
				if err := s.CreateDeviceCode(ctx, store.DeviceCode{Hash: []byte(code), UserCode: code, Interval: 5, CreatedAt: t0, ExpiresAt: exp}); err != nil {
					t.Fatal(err)
				}
				if err := s.DecideDevice(ctx, code, i == 1, "usr_a", "", now); err != nil {
					t.Fatal(err)
				}
			}
			if got, _, err := s.PollDevice(ctx, []byte("AAAABBBB"), now); err != nil || got.Status != store.DeviceDenied {
				t.Errorf("denied: %+v, %v", got, err)
			}
			for range 2 {
				if got, _, err := s.PollDevice(ctx, []byte("CCCCDDDD"), exp); err != nil || got.Status != store.DeviceApproved {
					t.Errorf("expired approval: %+v, %v", got, err)
				}
			}
			if err := s.DecideDevice(ctx, "AAAABBBB", true, "usr_a", "", exp); !store.IsNotFound(err) {
				t.Errorf("deciding an expired code: %v", err)
			}

			// Once expired, a user code may be given out again.
			again := store.DeviceCode{Hash: []byte("dev3"), UserCode: "WDJBMJHT", Interval: 5, CreatedAt: exp, ExpiresAt: exp.Add(time.Minute)}
			if err := s.CreateDeviceCode(ctx, again); err != nil {
				t.Fatalf("reusing an expired user code: %v", err)
			}
			if got, err := s.DeviceByUserCode(ctx, "WDJBMJHT", exp); err != nil || string(got.Hash) != "dev3" || got.Status != store.DevicePending {
				t.Errorf("the new code: %+v, %v", got, err)
			}
			if n, err := s.PurgeAuthFlows(ctx, exp.Add(time.Millisecond)); err != nil || n != 2 {
				t.Errorf("PurgeAuthFlows: %d, %v", n, err)
			}
		})
	}
}

func TestLoginFlows(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			exp := t0.Add(10 * time.Minute)
			f := store.LoginFlow{StateHash: []byte("state1"), Nonce: "n", Verifier: "v", Purpose: "device", UserCode: "WDJBMJHT",
				Return: "/console/", ExpiresAt: exp}
			if err := s.PutLoginFlow(ctx, f); err != nil {
				t.Fatal(err)
			}
			if err := s.PutLoginFlow(ctx, store.LoginFlow{StateHash: []byte("state2"), Nonce: "n", Verifier: "v", Purpose: "console", ExpiresAt: exp}); err != nil {
				t.Fatal(err)
			}
			got, err := s.TakeLoginFlow(ctx, []byte("state1"), t0)
			if err != nil || got.Nonce != "n" || got.Verifier != "v" || got.Purpose != "device" || got.UserCode != "WDJBMJHT" ||
				got.Return != "/console/" || !got.ExpiresAt.Equal(exp) {
				t.Errorf("TakeLoginFlow: %+v, %v", got, err)
			}
			if _, err := s.TakeLoginFlow(ctx, []byte("state1"), t0); !store.IsNotFound(err) {
				t.Errorf("taken twice: %v", err)
			}
			if _, err := s.TakeLoginFlow(ctx, []byte("state2"), exp); !store.IsNotFound(err) {
				t.Errorf("expired: %v", err)
			}
			if _, err := s.TakeLoginFlow(ctx, []byte("state2"), t0); !store.IsNotFound(err) {
				t.Errorf("an expired flow is deleted when taken: %v", err)
			}
		})
	}
}

func TestAudit(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			events := []store.AuditEvent{
				{Time: t0, ActorKind: "user", ActorID: "usr_a", Action: "signin", Detail: []byte(`{"client":"claude-code"}`), ClientIP: "10.0.0.1", RequestID: "req_1"},
				{Time: t0.Add(time.Minute), ActorKind: "system", Action: "signin_failed", TargetKind: "user", TargetID: "usr_b"},
				{Time: t0.Add(2 * time.Minute), ActorKind: "master", Action: "key_revoked", TargetKind: "key", TargetID: "key_1"},
				{Time: t0.Add(3 * time.Minute), ActorKind: "user", ActorID: "usr_a", Action: "team_updated", TargetKind: "team", TargetID: "team_1"},
			}
			for _, e := range events {
				if err := s.AppendAudit(ctx, e); err != nil {
					t.Fatal(err)
				}
			}
			all, err := s.Audit(ctx, store.AuditFilter{})
			if err != nil || len(all) != 4 {
				t.Fatalf("Audit: %+v, %v", all, err)
			}
			first := all[3]
			if first.Action != "signin" || first.ActorKind != "user" || first.ActorID != "usr_a" || string(first.Detail) != `{"client":"claude-code"}` ||
				first.ClientIP != "10.0.0.1" || first.RequestID != "req_1" || !first.Time.Equal(t0) || first.ID >= all[2].ID {
				t.Errorf("the oldest event: %+v", first)
			}
			if string(all[0].Detail) != "{}" {
				t.Errorf("no detail: %q", all[0].Detail)
			}
			for _, tc := range []struct {
				name string
				f    store.AuditFilter
				want []string
			}{
				{"actor", store.AuditFilter{ActorID: "usr_a"}, []string{"team_updated", "signin"}},
				{"action", store.AuditFilter{Action: "key_revoked"}, []string{"key_revoked"}},
				{"target", store.AuditFilter{TargetID: "usr_b"}, []string{"signin_failed"}},
				{"window", store.AuditFilter{Since: t0.Add(time.Minute), Until: t0.Add(3 * time.Minute)}, []string{"key_revoked", "signin_failed"}},
				{"page", store.AuditFilter{Before: all[1].ID, Limit: 1}, []string{"signin_failed"}},
				{"limit", store.AuditFilter{Limit: 2}, []string{"team_updated", "key_revoked"}},
			} {
				got, err := s.Audit(ctx, tc.f)
				if err != nil {
					t.Fatal(err)
				}
				var actions []string
				for _, e := range got {
					actions = append(actions, e.Action)
				}
				if len(actions) != len(tc.want) || (len(actions) > 0 && actions[0] != tc.want[0]) || (len(actions) > 1 && actions[1] != tc.want[1]) {
					t.Errorf("%s: %v, want %v", tc.name, actions, tc.want)
				}
			}
		})
	}
}
