package limiter

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/limit"
)

// FuzzAdmitAmounts: no reservation, usage or limit breaks the counters.
// A request asking more than a limit is refused as too large; one that
// fits is counted exactly; settling gives back the reservation and counts
// the usage, negative usage as none; no counter is ever negative or past
// what Redis's Lua counts exactly.
func FuzzAdmitAmounts(f *testing.F) {
	for _, c := range [][6]int64{
		{1000, 1e6, 900, 9e5, 100_000, 1e9},
		{math.MaxInt64, 1, 0, 0, 100_000, 1e9},
		{math.MaxInt64 - 807, math.MaxInt64, math.MaxInt64, math.MaxInt64, 1 << 40, limit.MaxBudgetUSD * 1e9},
		{math.MinInt64, math.MinInt64, math.MinInt64, math.MinInt64, 1, 1},
		{-1, -1, -1, -1, math.MaxInt64, math.MaxInt64},
		{1 << 53, 1<<53 + 1, 1 << 62, 1 << 53, 1<<53 - 1, 1 << 53},
		{0, 0, 0, 0, 0, 0},
		{5, 5, 6, 6, 5, 5},
	} {
		f.Add(c[0], c[1], c[2], c[3], c[4], c[5])
	}
	f.Fuzz(func(t *testing.T, tokens, cost, usedTokens, usedCost, tpm, budget int64) {
		l, _ := memoryAt(time.Date(2028, 2, 29, 23, 59, 59, 999e6, time.UTC), Options{})
		m := l.b.(*Memory)
		s := keyScope("a", limit.Limits{TPM: tpm, BudgetUSD: limit.NanoUSD(budget)})
		// What the limits are, and what the request asks, as counted.
		tl, bl := min(tpm, maxLimit), min(max(budget, 0), maxLimit)
		want := func(n int64) int64 {
			if n < 0 || n > maxAmount {
				return maxAmount
			}
			return n
		}
		wt, wc := want(tokens), max(want(cost), 1)
		sane := func(when string) {
			t.Helper()
			for k, w := range m.windows {
				for slot, v := range w {
					if v < 0 || v > maxAmount {
						t.Fatalf("%s: window %s slot %d holds %d", when, k, slot, v)
					}
				}
			}
			for k, b := range m.budgets {
				if b.committed < 0 || b.committed > maxAmount || b.reserved < 0 || b.reserved > maxAmount {
					t.Fatalf("%s: budget %s holds %+v", when, k, b)
				}
			}
		}

		tk, r := admit(t, l, "1", tokens, cost, s)
		sane("after admitting")
		switch {
		case tpm > 0 && wt > tl:
			if r == nil || r.What != Tokens || r.RetryAfter != 0 || !strings.Contains(r.Message, "request too large") {
				t.Fatalf("%d tokens under tpm %d: %+v %+v", tokens, tpm, tk, r)
			}
			return
		case wc > bl:
			if r == nil || r.What != Budget || r.RetryAfter != 0 || !strings.Contains(r.Message, "request too large") {
				t.Fatalf("cost %d under a budget of %d: %+v %+v", cost, budget, tk, r)
			}
			return
		case r != nil:
			t.Fatalf("%d tokens, cost %d, under tpm %d and a budget of %d: %v", tokens, cost, tpm, budget, r)
		}
		if q := tk.Status.Tokens; tpm > 0 && (q == nil || q.Remaining != tl-wt) {
			t.Fatalf("tokens: %+v, want %d left", q, tl-wt)
		}
		if q := tk.Status.Budget; q == nil || q.Remaining != bl || q.Reserved != wc {
			t.Fatalf("budget: %+v, want %d left before it and %d reserved", q, bl, wc)
		}

		// Settling with no usage gives everything back: the whole limits fit.
		l.Settle(ctx, tk, Used{})
		sane("after settling")
		whole, r := admit(t, l, "2", tl, bl, s)
		if r != nil {
			t.Fatalf("after settling with no usage, the whole limits were refused: %v", r)
		}
		if q := whole.Status.Budget; q.Remaining != bl || q.Reserved != bl || tpm > 0 && whole.Status.Tokens.Remaining != 0 {
			t.Fatalf("the whole limits: %+v", whole.Status)
		}
		l.Settle(ctx, whole, Used{})

		// Settling with any usage counts it, cut to [0, 2^53].
		tk, r = admit(t, l, "3", tokens, cost, s)
		if r != nil {
			t.Fatalf("admitted once, refused after settling: %v", r)
		}
		l.Settle(ctx, tk, Used{Tokens: usedTokens, Cost: usedCost})
		sane("after settling usage")
		ut, uc := clampAmount(usedTokens), clampAmount(usedCost)
		probe, r := admit(t, l, "4", 0, 0, s)
		sane("after the probe")
		st := Status{}
		switch {
		case tpm > 0 && ut > tl:
			if r == nil || r.What != Tokens || !strings.Contains(r.Message, "rate limit reached") || r.RetryAfter <= 0 {
				t.Fatalf("%d tokens used under tpm %d: %+v", usedTokens, tpm, r)
			}
			st = r.Status
		case uc+1 > bl:
			if r == nil || r.What != Budget || r.RetryAfter != 0 {
				t.Fatalf("%d nano-limit.USD used of %d: %+v", usedCost, budget, r)
			}
			st = r.Status
		case r != nil:
			t.Fatalf("%d tokens and %d nano-limit.USD used, under tpm %d and a budget of %d: %v", usedTokens, usedCost, tpm, budget, r)
		default:
			st = probe.Status
			if q := st.Budget; q == nil || q.Reserved != 1 {
				t.Fatalf("the probe's reservation: %+v, want 1", q)
			}
		}
		if q := st.Tokens; tpm > 0 && (q == nil || q.Remaining != max(tl-ut, 0)) {
			t.Fatalf("tokens after usage %d: %+v, want %d left", usedTokens, q, max(tl-ut, 0))
		}
		if q := st.Budget; q == nil || q.Remaining != max(bl-uc, 0) {
			t.Fatalf("budget after usage %d: %+v, want %d left", usedCost, q, max(bl-uc, 0))
		}
	})
}
