package limiter

import (
	"testing"

	"github.com/tollgate/tollgate/internal/limit"
)

// TestUse: Use reports what admission counts, on both back ends, and
// changes nothing: reading it any number of times admits no fewer
// requests.
func TestUse(t *testing.T) {
	backends(t, func(t *testing.T, mk func(Options) *Limiter) {
		sp := &fakeSpender{total: usd / 10} // 0.1 USD in the ledger this month
		l := mk(Options{Spender: sp})
		s := keyScope("u", limit.Limits{RPM: 3, TPM: 1000, MaxParallel: 2, BudgetUSD: limit.NanoUSD(usd), BudgetPeriod: "monthly"})
		want := func(step string, rpm, tpm, par, budget int64, fromLedger bool) {
			t.Helper()
			for range 2 { // reading twice reads the same
				got, err := l.Use(ctx, []Scope{s})
				if err != nil {
					t.Fatalf("%s: %v", step, err)
				}
				if len(got) != 4 {
					t.Fatalf("%s: %d uses, want 4: %+v", step, len(got), got)
				}
				for i, w := range []Use{
					{Scope: "key:u", What: Requests, Limit: 3, Used: rpm},
					{Scope: "key:u", What: Tokens, Limit: 1000, Used: tpm},
					{Scope: "key:u", What: Parallel, Limit: 2, Used: par},
					{Scope: "key:u", What: Budget, Limit: usd, Used: budget, FromLedger: fromLedger},
				} {
					if got[i] != w {
						t.Errorf("%s: %v: got %+v, want %+v", step, w.What, got[i], w)
					}
				}
			}
		}
		// Nothing admitted yet: the budget comes from the ledger.
		want("before", 0, 0, 0, usd/10, true)
		if n := sp.calls.Load(); n != 2 {
			t.Fatalf("the ledger was read %d times, want once per Use while the budget is not loaded", n)
		}
		a, r := admit(t, l, "a", 400, usd/5, s)
		if r != nil {
			t.Fatal(r)
		}
		// One request in flight: counted once, 400 tokens and 0.2 USD reserved.
		want("in flight", 1, 400, 1, usd/10+usd/5, false)
		l.Settle(ctx, a, Used{Tokens: 150, Cost: usd / 20})
		want("settled", 1, 150, 0, usd/10+usd/20, false)
		// Peeking admitted nothing: two more requests fit under rpm 3, a
		// third does not.
		for _, id := range []string{"b", "c"} {
			tk, r := admit(t, l, id, 1, 1, s)
			if r != nil {
				t.Fatalf("%s: %v", id, r)
			}
			l.Settle(ctx, tk, Used{Tokens: 1, Cost: 1})
		}
		if _, r := admit(t, l, "d", 1, 1, s); r == nil || r.What != Requests {
			t.Fatalf("the fourth request: %+v, want an rpm refusal", r)
		}
		want("after", 3, 152, 0, usd/10+usd/20+2, false)
	})
}
