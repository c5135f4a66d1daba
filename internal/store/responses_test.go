package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
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

// A conversation is a chain of responses, each with its own input: the
// chain reads back oldest first, keeps the responses before a later one
// as long as that one, only to their owner, and a deleted response a
// later one continues from stays for that one's conversation, hidden.
func TestResponseChain(t *testing.T) {
	for name, s := range storetest.Open(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			t0 := time.Date(2030, 5, 1, 12, 0, 0, 0, time.UTC)
			put := func(id, prev string, expires time.Duration) {
				t.Helper()
				r := store.Response{ID: id, Owner: "key_a", Model: "m", Prev: prev, Input: []byte(`[{"role":"user","content":"` + id + `"}]`),
					Response: []byte(`{"id":"` + id + `","output":[]}`), CreatedAt: t0, ExpiresAt: t0.Add(expires)}
				if err := s.PutResponse(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
			ids := func(chain []store.Response) (out []string) {
				for _, r := range chain {
					out = append(out, r.ID)
				}
				return out
			}
			put("r1", "", time.Hour)
			put("r2", "r1", 2*time.Hour)
			put("r3", "r2", 3*time.Hour)
			chain, err := s.ResponseChain(ctx, "r3", "key_a", t0)
			if err != nil || !slices.Equal(ids(chain), []string{"r1", "r2", "r3"}) || chain[1].Prev != "r1" || string(chain[0].Input) != `[{"role":"user","content":"r1"}]` {
				t.Fatalf("chain: %v %v", ids(chain), err)
			}
			// r1 and r2 stay as long as r3, found by no id.
			if n, err := s.PurgeResponses(ctx, t0.Add(150*time.Minute)); err != nil || n != 0 {
				t.Fatalf("purging: %d, %v", n, err)
			}
			if _, err := s.ResponseByID(ctx, "r2", "key_a", t0.Add(150*time.Minute)); !store.IsNotFound(err) {
				t.Errorf("expired r2: %v", err)
			}
			if chain, err := s.ResponseChain(ctx, "r3", "key_a", t0.Add(150*time.Minute)); err != nil || len(chain) != 3 {
				t.Errorf("after r1 and r2's own expiry: %v %v", ids(chain), err)
			}
			if _, err := s.ResponseChain(ctx, "r3", "key_b", t0); !store.IsNotFound(err) {
				t.Errorf("another owner's chain: %v", err)
			}
			for _, tc := range []struct {
				id   string
				want bool
			}{{"r2", true}, {"r9", false}} {
				if known, err := s.ResponseKnown(ctx, tc.id); err != nil || known != tc.want {
					t.Errorf("known %s: %v %v", tc.id, known, err)
				}
			}
			// Deleting r2 hides it; r3's conversation keeps its items.
			if err := s.DeleteResponse(ctx, "r2", "key_a"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.ResponseByID(ctx, "r2", "key_a", t0); !store.IsNotFound(err) {
				t.Errorf("deleted r2: %v", err)
			}
			if _, err := s.ResponseChain(ctx, "r2", "key_a", t0); !store.IsNotFound(err) {
				t.Errorf("deleted r2's chain: %v", err)
			}
			if err := s.DeleteResponse(ctx, "r2", "key_a"); !store.IsNotFound(err) {
				t.Errorf("deleting r2 again: %v", err)
			}
			if chain, err := s.ResponseChain(ctx, "r3", "key_a", t0); err != nil || len(chain) != 3 {
				t.Errorf("r3 after deleting r2: %v %v", ids(chain), err)
			}
			// Deleting r3 takes the hidden r2 with it; r1 stays.
			if err := s.DeleteResponse(ctx, "r3", "key_a"); err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct {
				id   string
				want bool
			}{{"r1", true}, {"r2", false}, {"r3", false}} {
				if known, err := s.ResponseKnown(ctx, tc.id); err != nil || known != tc.want {
					t.Errorf("after deleting r3, known %s: %v %v", tc.id, known, err)
				}
			}
			// A conversation goes whole once its last response expires;
			// another stays.
			put("r4", "r1", 4*time.Hour)
			put("x1", "", 5*time.Hour)
			if n, err := s.PurgeResponses(ctx, t0.Add(4*time.Hour)); err != nil || n != 2 {
				t.Errorf("purging r1 and r4: %d, %v", n, err)
			}
			if known, err := s.ResponseKnown(ctx, "x1"); err != nil || !known {
				t.Errorf("x1 after the purge: %v %v", known, err)
			}
		})
	}
}

// A conversation longer than MaxResponseChain is refused, not read whole.
func TestResponseChainTooLong(t *testing.T) {
	for name, s := range storetest.Open(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			t0 := time.Date(2030, 5, 1, 12, 0, 0, 0, time.UTC)
			// Written directly: a chain through PutResponse would take
			// MaxResponseChain transactions.
			q := "INSERT INTO responses (id, owner, model, target, prev_id, input, response, created_at, expires_at) VALUES (?, 'key_a', 'm', 't', ?, '[]', '{}', 0, ?)"
			if s.Dialect() == store.Postgres {
				q = strings.NewReplacer("?, 'key_a'", "$1, 'key_a'", "'t', ?", "'t', $2", "'{}', 0, ?", "'{}', 0, $3").Replace(q)
			}
			tx, err := s.DB().BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			prev := ""
			for i := range store.MaxResponseChain + 1 {
				id := fmt.Sprintf("r%d", i)
				if _, err := tx.ExecContext(ctx, q, id, prev, t0.Add(time.Hour).UnixMilli()); err != nil {
					t.Fatal(err)
				}
				prev = id
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			if _, err := s.ResponseChain(ctx, prev, "key_a", t0); !errors.Is(err, store.ErrChainTooLong) {
				t.Errorf("a chain of %d: %v", store.MaxResponseChain+1, err)
			}
			if chain, err := s.ResponseChain(ctx, fmt.Sprintf("r%d", store.MaxResponseChain-1), "key_a", t0); err != nil || len(chain) != store.MaxResponseChain {
				t.Errorf("a chain of %d: %d, %v", store.MaxResponseChain, len(chain), err)
			}
		})
	}
}

// A row stored without a conversation, as a replica still running the
// release before conversations were linked stores it, is a conversation
// of its own: rows like it never form one group kept until the last of
// them expires, and a response continuing one joins that one.
func TestResponsesStoredWithoutRoot(t *testing.T) {
	for name, s := range storetest.Open(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			t0 := time.Date(2030, 5, 1, 12, 0, 0, 0, time.UTC)
			old := func(id string, expires time.Duration) {
				t.Helper()
				if err := s.ExecForTest("INSERT INTO responses (id, owner, model, target, upstream_stored, input, response, created_at, expires_at, affinity) "+
					"VALUES (?, 'key_a', 'm', '', ?, '[]', '{}', ?, ?, 0)", id, false, t0.UnixMilli(), t0.Add(expires).UnixMilli()); err != nil {
					t.Fatal(err)
				}
			}
			old("o1", time.Hour)
			old("o2", 3*time.Hour)
			r := store.Response{ID: "n1", Owner: "key_a", Model: "m", Prev: "o1", Input: []byte(`[]`), Response: []byte(`{}`), CreatedAt: t0, ExpiresAt: t0.Add(2 * time.Hour)}
			if err := s.PutResponse(ctx, r); err != nil {
				t.Fatal(err)
			}
			// At 90 minutes o1 has expired, but n1 continues it: both stay.
			if n, err := s.PurgeResponses(ctx, t0.Add(90*time.Minute)); err != nil || n != 0 {
				t.Fatalf("at 90 minutes: %d purged, %v", n, err)
			}
			// At 150, o1's conversation (o1, n1) has expired, o2 has not.
			if n, err := s.PurgeResponses(ctx, t0.Add(150*time.Minute)); err != nil || n != 2 {
				t.Fatalf("at 150 minutes: %d purged, %v; want o1 and n1", n, err)
			}
			if _, err := s.ResponseByID(ctx, "o2", "key_a", t0.Add(150*time.Minute)); err != nil {
				t.Fatalf("o2: %v", err)
			}
		})
	}
}
