package limiter

import (
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tollgate/tollgate/internal/limit"
)

// odd are the reservations no limit may admit: past 2^63, near it,
// negative (what an overflowed sum gives), and past what Lua counts exactly.
var odd = []int64{math.MaxInt64, math.MaxInt64 - 807, math.MinInt64, math.MinInt64 + 1, -1, -50_000, 1 << 62, 1 << 53, 1<<53 + 1}

// No reservation breaks the tpm arithmetic: whatever its size, a request
// asking more than the limit is refused as too large, takes nothing from
// the window, and lets no other request past the limit.
func TestTokensOfAnySize(t *testing.T) {
	backends(t, func(t *testing.T, mk func(Options) *Limiter) {
		l := mk(Options{})
		s := keyScope("a", limit.Limits{TPM: 100_000})
		for _, n := range append(odd, 100_001) {
			tk, r := admit(t, l, "big", n, 0, s)
			if tk != nil || r == nil || r.What != Tokens || r.RetryAfter != 0 || !strings.Contains(r.Message, "request too large") {
				t.Fatalf("%d tokens: %+v %+v", n, tk, r)
			}
			if q := r.Status.Tokens; q == nil || q.Remaining != 100_000 {
				t.Fatalf("%d tokens: the window shows %+v", n, q)
			}
		}
		// Twenty requests of 50,000 tokens at once: two fit.
		var admitted atomic.Int64
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				if tk, err := l.Admit(ctx, &Request{ID: newEpoch(), Scopes: []Scope{s}, Tokens: 50_000}); err == nil && tk != nil {
					admitted.Add(1)
				}
			})
		}
		wg.Wait()
		if admitted.Load() != 2 {
			t.Fatalf("admitted %d of 20 requests of 50,000 tokens under tpm 100,000", admitted.Load())
		}
		if l.Errors.Load() != 0 {
			t.Errorf("%d errors reaching the counters", l.Errors.Load())
		}
	})
}

// No usage breaks the counters either: usage near 2^63 counts as the most
// a counter holds, negative usage as none, and a thousand such settlements
// in one slot leave the counters whole.
func TestUsageOfAnySize(t *testing.T) {
	backends(t, func(t *testing.T, mk func(Options) *Limiter) {
		l := mk(Options{})
		s := keyScope("a", limit.Limits{TPM: 100_000, BudgetUSD: limit.NanoUSD(usd)})
		tk, r := admit(t, l, "1", 1000, usd/10, s)
		if r != nil {
			t.Fatal(r)
		}
		l.Settle(ctx, tk, Used{Tokens: math.MinInt64, Cost: math.MinInt64})
		tk, r = admit(t, l, "2", 100_000, usd, s)
		if r != nil || tk.Status.Tokens.Remaining != 0 || tk.Status.Budget.Remaining != usd || tk.Status.Budget.Reserved != usd {
			t.Fatalf("after negative usage, the whole limit should fit: %+v %+v", tk, r)
		}
		// Settled over and over in the same slot, past 2^63 in all.
		for i := range 1100 {
			l.Settle(ctx, &Ticket{member: tk.member, settles: append([]settlement(nil), tk.settles...)}, Used{Tokens: math.MaxInt64, Cost: math.MaxInt64 - int64(i)})
		}
		if l.Errors.Load() != 0 {
			t.Fatalf("%d errors settling", l.Errors.Load())
		}
		_, r = admit(t, l, "3", 1, 1, s)
		if r == nil || r.What != Tokens || !strings.Contains(r.Message, "rate limit reached") || r.RetryAfter <= 0 ||
			r.Status.Tokens.Remaining != 0 || r.Status.Budget.Remaining != 0 {
			t.Fatalf("after usage near 2^63: %+v", r)
		}
		s.Limits.TPM = 0
		_, r = admit(t, l, "3", 1, 1, s)
		if r == nil || r.What != Budget || !strings.Contains(r.Message, "budget exhausted") {
			t.Fatalf("after spend near 2^63: %+v", r)
		}
		if l.Errors.Load() != 0 {
			t.Errorf("%d errors reaching the counters", l.Errors.Load())
		}
	})
}

// A budget refuses every odd cost as too large, and takes a ledger total
// past any budget without breaking.
func TestCostOfAnySize(t *testing.T) {
	backends(t, func(t *testing.T, mk func(Options) *Limiter) {
		l := mk(Options{})
		s := keyScope("a", limit.Limits{BudgetUSD: limit.NanoUSD(limit.MaxBudgetUSD * 1e9), BudgetPeriod: "24h"})
		for _, n := range odd {
			tk, r := admit(t, l, "big", 0, n, s)
			if tk != nil || r == nil || r.What != Budget || r.RetryAfter != 0 || !strings.Contains(r.Message, "request too large") {
				t.Fatalf("cost %d: %+v %+v", n, tk, r)
			}
			if q := r.Status.Budget; q == nil || q.Remaining != limit.MaxBudgetUSD*1e9 {
				t.Fatalf("cost %d: the budget shows %+v", n, q)
			}
		}
		if l.Errors.Load() != 0 {
			t.Errorf("%d errors reaching the counters", l.Errors.Load())
		}
		// The ledger holds more than int64 can: counted as the most.
		now := l.b.clockNow().UnixMilli() / (24 * 60 * 60 * 1000 / 60)
		for _, per := range []string{"", "monthly", "24h"} {
			sp := &fakeSpender{total: math.MaxInt64, bySlot: map[int64]int64{now: math.MaxInt64, now - 1: math.MaxInt64, now - 2: math.MinInt64}}
			l := mk(Options{Spender: sp})
			s := keyScope("b"+per, limit.Limits{BudgetUSD: limit.NanoUSD(usd), BudgetPeriod: limit.Period(per)})
			_, r := admit(t, l, "1", 0, 1, s)
			if r == nil || r.What != Budget || !strings.Contains(r.Message, "budget exhausted") || r.Status.Budget.Remaining != 0 {
				t.Fatalf("%q: after a ledger total of 2^63: %+v", per, r)
			}
			if l.Errors.Load() != 0 {
				t.Errorf("%q: %d errors reaching the counters", per, l.Errors.Load())
			}
		}
	})
}
