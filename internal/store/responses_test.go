package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/store/storetest"
)

func TestResponses(t *testing.T) {
	for name, s := range storetest.Open(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			t0 := time.Date(2030, 5, 1, 12, 0, 0, 0, time.UTC)
			r := store.Response{ID: "resp_1", Owner: "key_a", Model: "m", Target: "p/u", UpstreamStored: true,
				Input: []byte(`[{"role":"user","content":"hi \u00e9"}]`), Response: []byte(`{"id":"resp_1","output":[]}`),
				CreatedAt: t0, ExpiresAt: t0.Add(time.Hour), Affinity: -7046029254386353131} // a key past int64's top, as stored
			if err := s.PutResponse(ctx, r); err != nil {
				t.Fatal(err)
			}
			if err := s.PutResponse(ctx, r); err != store.ErrResponseExists {
				t.Errorf("second put: %v, want ErrResponseExists", err)
			}
			got, err := s.ResponseByID(ctx, "resp_1", "key_a", t0)
			if err != nil {
				t.Fatal(err)
			}
			if got.Target != "p/u" || !got.UpstreamStored || string(got.Input) != string(r.Input) || string(got.Response) != string(r.Response) ||
				!got.CreatedAt.Equal(t0) || !got.ExpiresAt.Equal(t0.Add(time.Hour)) || got.Affinity != r.Affinity {
				t.Errorf("got %+v", got)
			}
			// Another key's, or an expired one, is not found.
			if _, err := s.ResponseByID(ctx, "resp_1", "key_b", t0); !store.IsNotFound(err) {
				t.Errorf("another owner: %v", err)
			}
			if _, err := s.ResponseByID(ctx, "resp_1", "key_a", t0.Add(time.Hour)); !store.IsNotFound(err) {
				t.Errorf("expired: %v", err)
			}
			if err := s.DeleteResponse(ctx, "resp_1", "key_b"); !store.IsNotFound(err) {
				t.Errorf("delete by another owner: %v", err)
			}
			if err := s.DeleteResponse(ctx, "resp_1", "key_a"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.ResponseByID(ctx, "resp_1", "key_a", t0); !store.IsNotFound(err) {
				t.Errorf("deleted: %v", err)
			}
			// Purge removes what expired, and only that.
			for i, exp := range []time.Duration{time.Minute, time.Hour} {
				r.ID, r.ExpiresAt = "resp_p"+string(rune('0'+i)), t0.Add(exp)
				if err := s.PutResponse(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
			if n, err := s.PurgeResponses(ctx, t0.Add(30*time.Minute)); err != nil || n != 1 {
				t.Errorf("purge: %d, %v", n, err)
			}
			if _, err := s.ResponseByID(ctx, "resp_p1", "key_a", t0); err != nil {
				t.Errorf("the unexpired one: %v", err)
			}
		})
	}
}
