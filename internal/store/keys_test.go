package store_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/store"
)

func TestKeysLifecycle(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			created := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
			expires := created.Add(720 * time.Hour)
			hash := sha256.Sum256([]byte("sk-tg-secret"))
			k := store.Key{ID: "key_1", Name: "ci", Hash: hash[:], Prefix: "sk-tg-secr", Models: []string{"sonnet", "gpt"},
				Metadata: []byte(`{"team":"infra","n":3}`), CreatedAt: created, ExpiresAt: &expires}
			if err := s.CreateKey(ctx, k); err != nil {
				t.Fatal(err)
			}
			if err := s.CreateKey(ctx, k); !errors.Is(err, store.ErrDuplicateKey) {
				t.Fatalf("second create: %v, want ErrDuplicateKey", err)
			}
			other := sha256.Sum256([]byte("sk-tg-other"))
			if err := s.CreateKey(ctx, store.Key{ID: "key_2", Name: "all models", Hash: other[:], Prefix: "sk-tg-othe", CreatedAt: created.Add(time.Second)}); err != nil {
				t.Fatal(err)
			}
			got, err := s.KeyByHash(ctx, hash[:])
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != "key_1" || got.Name != "ci" || !bytes.Equal(got.Hash, hash[:]) || len(got.Models) != 2 ||
				got.Models[1] != "gpt" || string(got.Metadata) != `{"team":"infra","n":3}` || !got.CreatedAt.Equal(created) ||
				got.ExpiresAt == nil || !got.ExpiresAt.Equal(expires) || got.LastUsedAt != nil || got.Revoked {
				t.Fatalf("round trip: %+v", got)
			}
			if !got.Expired(expires) || got.Expired(expires.Add(-time.Millisecond)) {
				t.Error("Expired: the expiry instant is the first expired one")
			}
			if _, err := s.KeyByHash(ctx, []byte("nope")); !store.IsNotFound(err) {
				t.Errorf("unknown hash: %v", err)
			}
			list, err := s.Keys(ctx)
			if err != nil || len(list) != 2 || list[0].ID != "key_2" || list[0].Models == nil || len(list[0].Models) != 0 {
				t.Fatalf("list newest first: %+v %v", list, err)
			}

			name, models, yes := "renamed", []string{}, true
			var noExpiry *time.Time
			u, err := s.UpdateKey(ctx, "key_1", store.KeyUpdate{Name: &name, Models: &models, ExpiresAt: &noExpiry, Metadata: []byte(`{}`), Revoked: &yes})
			if err != nil {
				t.Fatal(err)
			}
			if u.Name != "renamed" || len(u.Models) != 0 || u.ExpiresAt != nil || string(u.Metadata) != "{}" || !u.Revoked {
				t.Fatalf("update: %+v", u)
			}
			// The digests of the keys not revoked: key_2's alone now.
			if hs, err := s.KeyHashes(ctx); err != nil || len(hs) != 1 || !bytes.Equal(hs[0], other[:]) {
				t.Fatalf("KeyHashes: %x %v", hs, err)
			}
			if _, err := s.UpdateKey(ctx, "key_x", store.KeyUpdate{Name: &name}); !store.IsNotFound(err) {
				t.Errorf("update of a missing key: %v", err)
			}

			t1 := created.Add(time.Hour)
			if err := s.TouchKeys(ctx, map[string]time.Time{"key_1": t1}); err != nil {
				t.Fatal(err)
			}
			// An older time flushed later (another replica) does not go back.
			if err := s.TouchKeys(ctx, map[string]time.Time{"key_1": created}); err != nil {
				t.Fatal(err)
			}
			got, _ = s.KeyByID(ctx, "key_1")
			if got.LastUsedAt == nil || !got.LastUsedAt.Equal(t1) {
				t.Errorf("last_used_at = %v, want %v", got.LastUsedAt, t1)
			}
		})
	}
}

func TestUsageGroups(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			day := time.Date(2026, 11, 21, 23, 59, 0, 0, time.UTC)
			c := func(v int64) *int64 { return &v }
			recs := []store.Request{
				{ID: "r1", Time: day, KeyID: "key_a", Model: "sonnet", Provider: "anthropic", Status: 200, Input: 10, CacheRead: 100, CacheWrite5m: 5, CacheWrite1h: 7, Output: 20, Reasoning: 4, CostNanoUSD: c(1_000)},
				{ID: "r2", Time: day.Add(2 * time.Minute), KeyID: "key_a", Model: "sonnet", Provider: "anthropic", Status: 200, Input: 1, Output: 2, CostNanoUSD: c(9_000_000_000_000)},
				{ID: "r3", Time: day.Add(3 * time.Minute), Model: "local", Provider: "vllm", Status: 200, Input: 50, Output: 5},                    // unpriced
				{ID: "r4", Time: day.Add(4 * time.Minute), KeyID: "key_b", Model: "sonnet", Provider: "anthropic", Status: 429, CostNanoUSD: c(0)}, // error
				{ID: "r5", Time: day.Add(5 * time.Minute), KeyID: "key_b", Model: "sonnet", Provider: "anthropic", Status: 200, ErrorType: "stream_interrupted", Output: 3, CostNanoUSD: c(30), UsageEstimated: true},
				{ID: "r6", Time: day.Add(48 * time.Hour), Model: "sonnet", Status: 200, CostNanoUSD: c(1)}, // outside the window
			}
			for i := range recs {
				recs[i].ClientProtocol, recs[i].Lane = "anthropic", "passthrough"
			}
			if err := s.InsertRequests(ctx, recs); err != nil {
				t.Fatal(err)
			}
			f := store.UsageFilter{Since: day.Add(-time.Hour), Until: day.Add(time.Hour)}
			f.GroupBy = store.ByModel
			got, err := s.Usage(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 || got[0].Group != "local" || got[1].Group != "sonnet" {
				t.Fatalf("by model: %+v", got)
			}
			if l := got[0]; l.Requests != 1 || l.CostNanoUSD != nil || l.Unpriced != 1 || l.Input != 50 || l.Estimated != 0 {
				t.Errorf("unpriced group: %+v (cost must be null, never 0)", l)
			}
			if so := got[1]; so.Requests != 4 || so.Errors != 2 || so.Input != 11 || so.CacheRead != 100 || so.CacheWrite5m != 5 ||
				so.CacheWrite1h != 7 || so.Output != 25 || so.Reasoning != 4 || so.CostNanoUSD == nil ||
				*so.CostNanoUSD != 9_000_000_001_030 || so.Unpriced != 0 || so.Estimated != 1 {
				t.Errorf("sonnet group: %+v", so)
			}
			f.GroupBy = store.ByDay
			days, err := s.Usage(ctx, f)
			if err != nil || len(days) != 2 || days[0].Group != "2026-11-21" || days[0].Requests != 1 || days[1].Group != "2026-11-22" || days[1].Requests != 4 {
				t.Errorf("by day: %+v %v", days, err)
			}
			f.GroupBy = store.ByKey
			keys, err := s.Usage(ctx, f)
			if err != nil || len(keys) != 3 || keys[0].Group != "" || keys[1].Group != "key_a" || keys[2].Requests != 2 ||
				keys[1].Estimated != 0 || keys[2].Estimated != 1 {
				t.Errorf("by key: %+v %v", keys, err)
			}
			f.GroupBy, f.KeyID = store.ByProvider, "key_a"
			prov, err := s.Usage(ctx, f)
			if err != nil || len(prov) != 1 || prov[0].Group != "anthropic" || prov[0].Requests != 2 {
				t.Errorf("by provider for one key: %+v %v", prov, err)
			}
			if _, err := s.Usage(ctx, store.UsageFilter{GroupBy: "colour"}); err == nil {
				t.Error("unknown grouping accepted")
			}

			page1, err := s.Requests(ctx, store.RequestFilter{Limit: 2})
			if err != nil || len(page1) != 2 || page1[0].ID != "r6" {
				t.Fatalf("page 1: %v %v", page1, err)
			}
			page2, err := s.Requests(ctx, store.RequestFilter{Limit: 2, AfterID: page1[1].ID})
			if err != nil || len(page2) != 2 || page2[0].ID != "r4" || page2[1].ID != "r3" {
				t.Fatalf("page 2 after %s: %v %v", page1[1].ID, page2, err)
			}
		})
	}
}
