package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/store"
)

// pair is the access and refresh token of one step of a sign-in.
func pair(name string, at time.Time) []store.Token {
	return []store.Token{
		{Hash: []byte(name + "-access"), Kind: store.TokenAccess, UserID: "usr_a", TeamID: "team_1", Client: "claude-code", CreatedAt: at, ExpiresAt: at.Add(time.Hour)},
		{Hash: []byte(name + "-refresh"), Kind: store.TokenRefresh, UserID: "usr_a", TeamID: "team_1", Client: "claude-code", CreatedAt: at, ExpiresAt: at.Add(24 * time.Hour)},
	}
}

func family(id string) store.TokenFamily {
	return store.TokenFamily{ID: id, UserID: "usr_a", TeamID: "team_1", Client: "claude-code", IdPRefresh: []byte("sealed-1"),
		CreatedAt: t0, ExpiresAt: t0.Add(30 * 24 * time.Hour)}
}

// concurrently runs f n times at once and counts its results.
func concurrently(n int, f func(i int) error) map[error]int {
	results := map[error]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			err := f(i)
			mu.Lock()
			defer mu.Unlock()
			results[err]++
		})
	}
	wg.Wait()
	return results
}

func TestTokenFamilies(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			f := family("fam1")
			if err := s.CreateTokenFamily(ctx, f, pair("a", t0)...); err != nil {
				t.Fatal(err)
			}
			got, err := s.TokenFamily(ctx, "fam1")
			if err != nil || got.UserID != "usr_a" || got.TeamID != "team_1" || got.Client != "claude-code" || string(got.IdPRefresh) != "sealed-1" ||
				!got.CreatedAt.Equal(t0) || !got.ExpiresAt.Equal(f.ExpiresAt) || got.RevokedAt != nil {
				t.Errorf("TokenFamily: %+v, %v", got, err)
			}
			if tok, err := s.TokenByHash(ctx, []byte("a-access")); err != nil || tok.FamilyID != "fam1" {
				t.Errorf("a first token takes its family's id: %+v, %v", tok, err)
			}
			if _, err := s.TokenFamily(ctx, "none"); !store.IsNotFound(err) {
				t.Errorf("missing family: %v", err)
			}
			// One transaction: a token that cannot be stored leaves no family.
			if err := s.CreateTokenFamily(ctx, family("fam2"), pair("a", t0)...); err == nil {
				t.Error("a family with a duplicate token was stored")
			}
			if _, err := s.TokenFamily(ctx, "fam2"); !store.IsNotFound(err) {
				t.Errorf("the family of a failed creation: %v", err)
			}
			other := pair("x", t0)
			other[0].FamilyID = "fam9"
			if err := s.CreateTokenFamily(ctx, family("fam3"), other...); err == nil {
				t.Error("a token of another family was stored with fam3")
			}
			// Without an IdP refresh token, none is stored.
			nf := family("fam4")
			nf.IdPRefresh = nil
			if err := s.CreateTokenFamily(ctx, nf); err != nil {
				t.Fatal(err)
			}
			if got, err := s.TokenFamily(ctx, "fam4"); err != nil || got.IdPRefresh != nil {
				t.Errorf("no IdP refresh token: %+v, %v", got, err)
			}
		})
	}
}

func TestRotateRefreshToken(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			if err := s.CreateTokenFamily(ctx, family("fam1"), pair("a", t0)...); err != nil {
				t.Fatal(err)
			}
			now := t0.Add(time.Hour)
			old, err := s.RotateRefreshToken(ctx, []byte("a-refresh"), now, nil, pair("b", now)...)
			if err != nil || old.FamilyID != "fam1" || old.UsedAt == nil || !old.UsedAt.Equal(now) || old.UserID != "usr_a" {
				t.Fatalf("rotation: %+v, %v", old, err)
			}
			if tok, err := s.TokenByHash(ctx, []byte("b-refresh")); err != nil || tok.FamilyID != "fam1" || tok.UsedAt != nil {
				t.Errorf("the successor: %+v, %v", tok, err)
			}
			if f, _ := s.TokenFamily(ctx, "fam1"); string(f.IdPRefresh) != "sealed-1" {
				t.Errorf("nil kept the IdP refresh token: %q", f.IdPRefresh)
			}

			// A second use: within the grace a retry, refused without
			// alarm; after it a stolen copy's.
			for _, tc := range []struct {
				after time.Duration
				want  error
			}{
				{0, store.ErrTokenJustUsed},
				{store.RefreshGrace - time.Millisecond, store.ErrTokenJustUsed},
				{store.RefreshGrace, store.ErrTokenReused},
				{time.Hour, store.ErrTokenReused},
			} {
				got, err := s.RotateRefreshToken(ctx, []byte("a-refresh"), now.Add(tc.after), nil, pair("c", now)...)
				if !errors.Is(err, tc.want) || got.FamilyID != "fam1" || !got.UsedAt.Equal(now) {
					t.Errorf("second use %v later: %+v, %v, want %v", tc.after, got, err, tc.want)
				}
			}
			if _, err := s.TokenByHash(ctx, []byte("c-access")); !store.IsNotFound(err) {
				t.Errorf("a refused rotation stored tokens: %v", err)
			}

			// A failure to store the successors leaves the token unused.
			if _, err := s.RotateRefreshToken(ctx, []byte("b-refresh"), now, nil, pair("a", now)...); err == nil ||
				errors.Is(err, store.ErrTokenReused) || errors.Is(err, store.ErrTokenInvalid) {
				t.Fatalf("successors that clash: %v, want the insert's error", err)
			}
			if tok, _ := s.TokenByHash(ctx, []byte("b-refresh")); tok.UsedAt != nil {
				t.Errorf("marked used although its successors were not stored: %+v", tok)
			}
			later := now.Add(time.Minute)
			if _, err := s.RotateRefreshToken(ctx, []byte("b-refresh"), later, []byte("sealed-2"), pair("d", later)...); err != nil {
				t.Fatalf("the retry: %v", err)
			}
			if f, _ := s.TokenFamily(ctx, "fam1"); string(f.IdPRefresh) != "sealed-2" {
				t.Errorf("the IdP refresh token was not replaced: %q", f.IdPRefresh)
			}

			for _, tc := range []struct {
				name string
				hash string
				at   time.Time
				want error
			}{
				{"access token", "d-access", later, store.ErrTokenInvalid},
				{"expired", "d-refresh", later.Add(24 * time.Hour), store.ErrTokenInvalid},
				{"family ended", "d-refresh", t0.Add(30 * 24 * time.Hour), store.ErrTokenInvalid},
			} {
				if _, err := s.RotateRefreshToken(ctx, []byte(tc.hash), tc.at, nil); !errors.Is(err, tc.want) {
					t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
				}
			}
			if _, err := s.RotateRefreshToken(ctx, []byte("none"), later, nil); !store.IsNotFound(err) {
				t.Errorf("missing: %v", err)
			}
			// A token of no family (as made before families) is not rotated.
			if err := s.CreateToken(ctx, store.Token{Hash: []byte("orphan"), Kind: store.TokenRefresh, UserID: "usr_a", FamilyID: "fam_gone",
				CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.RotateRefreshToken(ctx, []byte("orphan"), t0, nil); !errors.Is(err, store.ErrTokenInvalid) {
				t.Errorf("a token of no family: %v", err)
			}

			// Of many replicas rotating one token at once, one succeeds; the
			// others find it used moments ago.
			results := concurrently(8, func(i int) error {
				_, err := s.RotateRefreshToken(ctx, []byte("d-refresh"), later, []byte("sealed-3"), pair(fmt.Sprint("e", i), later)...)
				return err
			})
			if len(results) != 2 || results[nil] != 1 || results[store.ErrTokenJustUsed] != 7 {
				t.Errorf("concurrent rotations: %v", results)
			}
		})
	}
}

// TestRevokeTokenFamily revokes a sign-in: its tokens read revoked,
// those stored before as those a rotation racing the revocation stored
// after its UPDATE of tokens, and no rotation succeeds after it.
func TestRevokeTokenFamily(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			for _, id := range []string{"fam1", "fam2"} {
				if err := s.CreateTokenFamily(ctx, family(id), pair(id, t0)...); err != nil {
					t.Fatal(err)
				}
			}
			now := t0.Add(time.Minute)
			if n, err := s.RevokeTokenFamily(ctx, "fam1", now); err != nil || n != 2 {
				t.Errorf("RevokeTokenFamily: %d, %v", n, err)
			}
			if f, err := s.TokenFamily(ctx, "fam1"); err != nil || f.RevokedAt == nil || !f.RevokedAt.Equal(now) {
				t.Errorf("the family: %+v, %v", f, err)
			}
			if n, err := s.RevokeTokenFamily(ctx, "fam1", now.Add(time.Second)); err != nil || n != 0 {
				t.Errorf("again: %d, %v", n, err)
			}
			if f, _ := s.TokenFamily(ctx, "fam1"); !f.RevokedAt.Equal(now) {
				t.Errorf("revoking again moved revoked_at: %v", f.RevokedAt)
			}
			if tok, err := s.TokenByHash(ctx, []byte("fam1-access")); err != nil || tok.RevokedAt == nil {
				t.Errorf("a token stored before: %+v, %v", tok, err)
			}
			if _, err := s.RotateRefreshToken(ctx, []byte("fam1-refresh"), now, nil, pair("late", now)...); !errors.Is(err, store.ErrTokenInvalid) {
				t.Errorf("rotating in a revoked family: %v", err)
			}
			if _, err := s.TokenByHash(ctx, []byte("late-access")); !store.IsNotFound(err) {
				t.Errorf("a refused rotation stored tokens: %v", err)
			}
			// A token the UPDATE of tokens missed (stored by a rotation
			// that raced it) reads revoked all the same.
			if err := s.CreateToken(ctx, store.Token{Hash: []byte("raced"), Kind: store.TokenAccess, UserID: "usr_a", FamilyID: "fam1",
				CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
			if tok, err := s.TokenByHash(ctx, []byte("raced")); err != nil || tok.RevokedAt == nil || !tok.RevokedAt.Equal(now) {
				t.Errorf("a token stored after the revocation: %+v, %v", tok, err)
			}
			if tok, err := s.TokenByHash(ctx, []byte("fam2-access")); err != nil || tok.RevokedAt != nil {
				t.Errorf("another family's token: %+v, %v", tok, err)
			}

			// Signed out everywhere: every family of the user too. The
			// tokens counted are fam2's and the raced one.
			if n, err := s.RevokeUserTokens(ctx, "usr_a", now); err != nil || n != 3 {
				t.Errorf("RevokeUserTokens: %d, %v", n, err)
			}
			if f, err := s.TokenFamily(ctx, "fam2"); err != nil || f.RevokedAt == nil {
				t.Errorf("the user's family: %+v, %v", f, err)
			}
		})
	}
}

// TestTokenFamilyEnd: a token reads expired at its family's end, and
// goes with the family when that ends.
func TestTokenFamilyEnd(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			f := family("fam1")
			f.ExpiresAt = t0.Add(30 * time.Minute)
			if err := s.CreateTokenFamily(ctx, f, pair("a", t0)...); err != nil {
				t.Fatal(err)
			}
			if tok, err := s.TokenByHash(ctx, []byte("a-refresh")); err != nil || !tok.ExpiresAt.Equal(f.ExpiresAt) {
				t.Errorf("a token outliving its family: %+v, %v", tok, err)
			}
			if n, err := s.DeleteExpiredTokens(ctx, f.ExpiresAt.Add(time.Millisecond)); err != nil || n != 2 {
				t.Errorf("DeleteExpiredTokens: %d, %v", n, err)
			}
			if _, err := s.TokenFamily(ctx, "fam1"); !store.IsNotFound(err) {
				t.Errorf("an ended family is kept: %v", err)
			}
		})
	}
}

func TestRedeemDevice(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			exp := t0.Add(10 * time.Minute)
			for _, code := range []string{"PENDPEND", "APPRAPPR", "DENYDENY", "LATELATE"} {
				if err := s.CreateDeviceCode(ctx, store.DeviceCode{Hash: []byte(code), UserCode: code, Interval: 5, CreatedAt: t0, ExpiresAt: exp}); err != nil {
					t.Fatal(err)
				}
			}
			for code, approve := range map[string]bool{"APPRAPPR": true, "DENYDENY": false, "LATELATE": true} {
				if err := s.DecideDevice(ctx, code, approve, "usr_a", "team_1", t0); err != nil {
					t.Fatal(err)
				}
			}
			now := t0.Add(time.Minute)
			for _, tc := range []struct {
				code string
				at   time.Time
				want func(error) bool
			}{
				{"PENDPEND", now, func(err error) bool { return errors.Is(err, store.ErrDeviceNotPending) }},
				{"DENYDENY", now, func(err error) bool { return errors.Is(err, store.ErrDeviceNotPending) }},
				{"LATELATE", exp, func(err error) bool { return errors.Is(err, store.ErrTokenInvalid) }},
				{"NONENONE", now, store.IsNotFound},
			} {
				if err := s.RedeemDevice(ctx, []byte(tc.code), tc.at, family("fam_"+tc.code), pair(tc.code, tc.at)...); !tc.want(err) {
					t.Errorf("%s: %v", tc.code, err)
				}
				if _, err := s.TokenFamily(ctx, "fam_"+tc.code); !store.IsNotFound(err) {
					t.Errorf("%s: a family was stored: %v", tc.code, err)
				}
			}

			// A failure to store the tokens leaves the approval to collect.
			if err := s.CreateToken(ctx, pair("clash", t0)[0]); err != nil {
				t.Fatal(err)
			}
			if err := s.RedeemDevice(ctx, []byte("APPRAPPR"), now, family("fam_x"), pair("clash", now)...); err == nil || errors.Is(err, store.ErrDeviceNotPending) {
				t.Fatalf("tokens that clash: %v", err)
			}
			// A family for someone else is refused.
			wrong := family("fam_y")
			wrong.UserID = "usr_b"
			if err := s.RedeemDevice(ctx, []byte("APPRAPPR"), now, wrong, pair("y", now)...); err == nil {
				t.Error("redeemed for another user")
			}
			if d, _, err := s.PollDevice(ctx, []byte("APPRAPPR"), now); err != nil || d.Status != store.DeviceApproved {
				t.Errorf("after failed redemptions: %+v, %v", d, err)
			}

			// Of redemptions at once, one gets the tokens.
			results := concurrently(6, func(i int) error {
				id := fmt.Sprint("fam_", i)
				return s.RedeemDevice(ctx, []byte("APPRAPPR"), now, family(id), pair(id, now)...)
			})
			if len(results) != 2 || results[nil] != 1 || results[store.ErrDeviceNotPending] != 5 {
				t.Errorf("concurrent redemptions: %v", results)
			}
			if d, _, err := s.PollDevice(ctx, []byte("APPRAPPR"), now); err != nil || d.Status != store.DeviceConsumed {
				t.Errorf("after redeeming: %+v, %v", d, err)
			}
		})
	}
}

// TestMigrateTokenFamilies migrates the tokens of sign-ins made before
// families were stored: each family gets a row that ends with its last
// token, revoked when all its tokens are.
func TestMigrateTokenFamilies(t *testing.T) {
	ctx := context.Background()
	for name, s := range unmigrated(t) {
		t.Run(name, func(t *testing.T) {
			if err := s.MigrateTo(ctx, 15); err != nil {
				t.Fatal(err)
			}
			revoked := t0.Add(time.Minute)
			for _, tok := range []store.Token{
				{Hash: []byte("a1"), Kind: store.TokenAccess, UserID: "usr_a", TeamID: "team_1", FamilyID: "fam_live", Client: "claude-code", CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)},
				{Hash: []byte("r1"), Kind: store.TokenRefresh, UserID: "usr_a", TeamID: "team_1", FamilyID: "fam_live", Client: "claude-code", CreatedAt: t0, ExpiresAt: t0.Add(48 * time.Hour)},
				{Hash: []byte("a2"), Kind: store.TokenAccess, UserID: "usr_b", FamilyID: "fam_gone", CreatedAt: t0, ExpiresAt: t0.Add(time.Hour), RevokedAt: &revoked},
				{Hash: []byte("r2"), Kind: store.TokenRefresh, UserID: "usr_b", FamilyID: "fam_gone", CreatedAt: t0, ExpiresAt: t0.Add(2 * time.Hour), RevokedAt: &revoked},
			} {
				if err := s.CreateToken(ctx, tok); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			live, err := s.TokenFamily(ctx, "fam_live")
			if err != nil || live.UserID != "usr_a" || live.TeamID != "team_1" || live.Client != "claude-code" ||
				!live.ExpiresAt.Equal(t0.Add(48*time.Hour)) || live.RevokedAt != nil || live.IdPRefresh != nil {
				t.Errorf("a live family: %+v, %v", live, err)
			}
			if gone, err := s.TokenFamily(ctx, "fam_gone"); err != nil || gone.RevokedAt == nil || !gone.RevokedAt.Equal(revoked) {
				t.Errorf("a revoked family: %+v, %v", gone, err)
			}
			// Its refresh token rotates as one of now.
			now := t0.Add(2 * time.Hour)
			if _, err := s.RotateRefreshToken(ctx, []byte("r1"), now, nil, pair("next", now)...); err != nil {
				t.Errorf("rotating a token of before: %v", err)
			}
			if err := s.MigrateTo(ctx, 15); err != nil {
				t.Fatalf("down: %v", err)
			}
		})
	}
}
