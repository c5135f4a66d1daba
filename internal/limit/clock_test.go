package limit

import (
	"strings"
	"testing"
	"time"
)

// Tests that move the clock: on the in-process back end, whose clock can be
// set. The Redis scripts run the same arithmetic on the server's clock.

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func memoryAt(t0 time.Time, o Options) (*Limiter, *fakeClock) {
	c := &fakeClock{t: t0}
	m := NewMemory()
	m.now = c.now
	return New(m, o), c
}

func TestSlidingWindow(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 400e6, time.UTC) // 0.4 s into a slot
	l, clock := memoryAt(t0, Options{})
	s := keyScope("a", Limits{RPM: 2})
	admit(t, l, "1", 0, 0, s)
	clock.t = t0.Add(30 * time.Second)
	tk, _ := admit(t, l, "2", 0, 0, s)
	// Full again when the newest request's slot has left: 61 slots after it.
	if want := t0.Add(30 * time.Second).Truncate(time.Second).Add(61 * time.Second); !tk.Status.Requests.Reset.Equal(want) {
		t.Errorf("reset %s, want %s", tk.Status.Requests.Reset, want)
	}
	clock.t = t0.Add(59 * time.Second)
	_, r := admit(t, l, "3", 0, 0, s)
	// The first request leaves at 10:01:01 (its slot, 10:00:00, plus 61 s).
	if r == nil || r.RetryAfter != 2*time.Second-400*time.Millisecond {
		t.Fatalf("at 59 s: %+v", r)
	}
	// Never early: within 60 s of the first request, still refused.
	clock.t = t0.Add(60 * time.Second)
	if _, r := admit(t, l, "3", 0, 0, s); r == nil {
		t.Fatal("admitted a third request within 60 s")
	}
	clock.t = t0.Add(61 * time.Second)
	if _, r := admit(t, l, "3", 0, 0, s); r != nil {
		t.Fatalf("at 61 s: %v", r)
	}
}

func TestDailyBudgetStartsAgainAtMidnightUTC(t *testing.T) {
	sp := &fakeSpender{}
	t0 := time.Date(2026, 11, 22, 23, 59, 0, 0, time.UTC)
	l, clock := memoryAt(t0, Options{Spender: sp})
	s := keyScope("a", Limits{BudgetUSD: NanoUSD(usd), BudgetPeriod: "daily"})
	tk, _ := admit(t, l, "1", 0, usd, s)
	l.Settle(ctx, tk, Used{Cost: usd})
	_, r := admit(t, l, "2", 0, 1, s)
	if r == nil || r.RetryAfter != time.Minute || !strings.Contains(r.Message, "daily budget") {
		t.Fatalf("spent: %+v", r)
	}
	clock.t = t0.Add(time.Minute)
	if _, r := admit(t, l, "2", 0, usd, s); r != nil {
		t.Fatalf("the next day: %v", r)
	}
	if sp.calls.Load() != 2 {
		t.Errorf("ledger read %d times, want once per day", sp.calls.Load())
	}
}

func TestRollingBudget(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	slot := 24 * time.Hour / 60 // 24 minutes
	// The ledger holds 0.6 USD spent 23 hours ago.
	sp := &fakeSpender{bySlot: map[int64]int64{t0.Add(-23*time.Hour).UnixMilli() / slot.Milliseconds(): 6 * usd / 10}}
	l, clock := memoryAt(t0, Options{Spender: sp})
	s := keyScope("a", Limits{BudgetUSD: NanoUSD(usd), BudgetPeriod: "24h"})
	_, r := admit(t, l, "1", 0, usd/2, s)
	if r == nil || !strings.Contains(r.Message, "rolling 24h budget") {
		t.Fatalf("want a refusal: %+v", r)
	}
	// The old spend leaves its slot's 24 h + one slot later.
	clock.t = t0.Add(r.RetryAfter)
	if _, r := admit(t, l, "1", 0, usd/2, s); r != nil {
		t.Fatalf("after %s: %v", clock.t.Sub(t0), r)
	}
	if r.RetryAfter < time.Hour || r.RetryAfter > time.Hour+2*slot {
		t.Errorf("retry after %s", r.RetryAfter)
	}
}
