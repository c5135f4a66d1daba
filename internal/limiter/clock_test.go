package limiter

import (
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/clock"
	"github.com/tollgate/tollgate/internal/limit"
)

// Tests that move the clock: on the in-process back end, whose clock can be
// set exactly, and on Redis, whose clock the scripts move as far as the
// back end's (clock.Offset and the back end's moved), and which runs on.

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
	s := keyScope("a", limit.Limits{RPM: 2})
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
	s := keyScope("a", limit.Limits{BudgetUSD: limit.NanoUSD(usd), BudgetPeriod: "daily"})
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
	s := keyScope("a", limit.Limits{BudgetUSD: limit.NanoUSD(usd), BudgetPeriod: "24h"})
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

// redisAt is a limiter on Redis whose clock reads at now, and runs on.
func redisAt(t *testing.T, url, prefix string, at time.Time, o Options) *Limiter {
	r, err := newRedis(url, prefix, LeaseTTL, at.Sub(clock.Now()), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.close() })
	return New(r, o)
}

// lastMilli is the last millisecond of every period tested: a leap day,
// the day before it, and the year's last day.
var lastMilli = []time.Time{
	time.Date(2028, 2, 29, 23, 59, 59, 999e6, time.UTC),
	time.Date(2028, 2, 28, 23, 59, 59, 999e6, time.UTC),
	time.Date(2026, 12, 31, 23, 59, 59, 999e6, time.UTC),
}

// periodSpan is when the period p holding at starts and ends.
func periodSpan(t *testing.T, p limit.Period, at time.Time) (start, end time.Time) {
	pp, err := limit.ParsePeriod(string(p))
	if err != nil {
		t.Fatal(err)
	}
	_, start, end = pp.At(at)
	return start, end
}

func nextEnd(t *testing.T, p limit.Period, at time.Time) time.Time {
	_, end := periodSpan(t, p, at)
	return end
}

// Daily and monthly budgets start again at midnight UTC at the end of
// their period, not a millisecond before or after: on a leap day (and
// the day before it, which ends a day and not the month) and on Dec 31.
func TestCalendarBudgetsRollOverAtMidnight(t *testing.T) {
	for _, last := range lastMilli {
		midnight := last.Add(time.Millisecond)
		for _, p := range []limit.Period{"daily", "monthly"} {
			t.Run(last.Format("2006-01-02")+"/"+string(p), func(t *testing.T) {
				start, end := periodSpan(t, p, last)
				if p == "daily" || last.Month() != midnight.Month() {
					if !end.Equal(midnight) {
						t.Fatalf("the %s period of %s ends at %s", p, last, end)
					}
				} else if !end.Equal(time.Date(2028, 3, 1, 0, 0, 0, 0, time.UTC)) {
					t.Fatalf("the %s period of %s ends at %s", p, last, end)
				}
				sp := &fakeSpender{}
				l, c := memoryAt(last, Options{Spender: sp})
				s := keyScope("a", limit.Limits{BudgetUSD: limit.NanoUSD(usd), BudgetPeriod: p})
				tk, r := admit(t, l, "1", 0, usd, s)
				if r != nil || !tk.Status.Budget.Reset.Equal(end) {
					t.Fatalf("the whole budget: %+v %+v", tk, r)
				}
				if !sp.lastSince().Equal(start) {
					t.Errorf("ledger summed since %s, want %s", sp.lastSince(), start)
				}
				l.Settle(ctx, tk, Used{Cost: usd})
				_, r = admit(t, l, "2", 0, 1, s)
				if r == nil || !strings.Contains(r.Message, "budget exhausted: the "+string(p)+" budget") ||
					r.RetryAfter != end.Sub(last) {
					t.Fatalf("spent, at %s: %+v", last, r)
				}
				c.t = midnight
				tk, r = admit(t, l, "3", 0, usd, s)
				if !end.Equal(midnight) {
					// Still the same month: still spent.
					if r == nil || r.RetryAfter != end.Sub(midnight) || sp.calls.Load() != 1 {
						t.Fatalf("at %s: %+v, %d reloads", midnight, r, sp.calls.Load())
					}
					return
				}
				if r != nil || sp.calls.Load() != 2 || !sp.lastSince().Equal(midnight) || !tk.Status.Budget.Reset.Equal(nextEnd(t, p, midnight)) {
					t.Fatalf("at %s: %+v %+v, %d reloads since %s", midnight, tk, r, sp.calls.Load(), sp.lastSince())
				}
			})
		}
	}
}

// The same on Redis, moved to just before midnight and running on: the
// scripts see the moved clock, so a spent budget's retry time, reckoned
// there from the period's end computed here, is the time to midnight.
func TestRedisCalendarBudgetsRollOverAtMidnight(t *testing.T) {
	url := redisURL(t)
	for _, last := range lastMilli {
		for _, p := range []limit.Period{"daily", "monthly"} {
			t.Run(last.Format("2006-01-02")+"/"+string(p), func(t *testing.T) {
				// Each try starts further from midnight, in case a slow
				// run reaches it before the budget is spent.
				for margin := 300 * time.Millisecond; !redisRollOver(t, url, p, last, margin); margin *= 3 {
					if margin > 10*time.Second {
						t.Fatal("midnight passed before the budget was spent, however early the clock started")
					}
				}
			})
		}
	}
}

// redisRollOver runs the test from margin before midnight after last; it
// reports false if midnight came before the budget was spent.
func redisRollOver(t *testing.T, url string, p limit.Period, last time.Time, margin time.Duration) bool {
	midnight := last.Add(time.Millisecond)
	prefix := "tgtest:" + newEpoch() + ":"
	t.Cleanup(func() { dropPrefix(t, url, prefix) })
	sp := &fakeSpender{}
	l := redisAt(t, url, prefix, midnight.Add(-margin), Options{Spender: sp})
	start, end := periodSpan(t, p, last)
	s := keyScope("a", limit.Limits{BudgetUSD: limit.NanoUSD(usd), BudgetPeriod: p})
	tk, r := admit(t, l, "1", 0, usd, s)
	if r != nil || !tk.Status.Budget.Reset.Equal(end) || !sp.lastSince().Equal(start) {
		t.Fatalf("the whole budget: %+v %+v, ledger since %s", tk, r, sp.lastSince())
	}
	l.Settle(ctx, tk, Used{Cost: usd})
	_, r = admit(t, l, "2", 0, 1, s)
	if !l.b.clockNow().Before(midnight) {
		return false
	}
	if r == nil || !strings.Contains(r.Message, "budget exhausted: the "+string(p)+" budget") ||
		r.RetryAfter <= end.Sub(midnight) || r.RetryAfter > end.Sub(midnight)+margin {
		t.Fatalf("spent, %s before midnight: %+v", midnight.Sub(l.b.clockNow()), r)
	}
	time.Sleep(midnight.Sub(l.b.clockNow()) + time.Millisecond)
	tk, r = admit(t, l, "3", 0, usd, s)
	if !end.Equal(midnight) {
		// Still the same month: still spent, for a day.
		if r == nil || r.RetryAfter > end.Sub(midnight) || r.RetryAfter < end.Sub(midnight)-margin || sp.calls.Load() != 1 {
			t.Fatalf("after midnight: %+v, %d reloads", r, sp.calls.Load())
		}
		return true
	}
	if r != nil || sp.calls.Load() != 2 || !sp.lastSince().Equal(midnight) || !tk.Status.Budget.Reset.Equal(nextEnd(t, p, midnight)) {
		t.Fatalf("after midnight: %+v %+v, %d reloads since %s", tk, r, sp.calls.Load(), sp.lastSince())
	}
	l.Settle(ctx, tk, Used{})
	return true
}

// Window slots and lease deadlines, which the scripts compute, are on the
// clock that budget periods are computed from here.
func TestRedisScriptsShareTheBackEndsClock(t *testing.T) {
	url := redisURL(t)
	prefix := "tgtest:" + newEpoch() + ":"
	t.Cleanup(func() { dropPrefix(t, url, prefix) })
	l := redisAt(t, url, prefix, lastMilli[0], Options{})
	r := l.b.(*Redis)
	before := r.clockNow().UnixMilli()
	tk, rf := admit(t, l, "1", 1, 0, keyScope("a", limit.Limits{RPM: 5, TPM: 100, MaxParallel: 1}))
	after := r.clockNow().UnixMilli()
	if rf != nil {
		t.Fatal(rf)
	}
	if s := tk.settles[0].slot; tk.settles[0].what != Tokens || s < before/1000 || s > after/1000 {
		t.Errorf("counted in slot %d, want the second of %d to %d", s, before, after)
	}
	if reset := tk.Status.Tokens.Reset.UnixMilli(); reset < (before/1000+61)*1000 || reset > (after/1000+61)*1000 {
		t.Errorf("tokens whole again at %d, want 61 s after the second of %d", reset, before)
	}
	deadline, err := r.c.ZScore(ctx, prefix+"key:a:par", "1").Result()
	if lease := LeaseTTL.Milliseconds(); err != nil || int64(deadline) < before+lease || int64(deadline) > after+lease {
		t.Errorf("lease deadline %v (%v), want %d after %d", deadline, err, lease, before)
	}
	l.Settle(ctx, tk, Used{Tokens: 1})
}

// A request let through unchecked (fail open) settles its cost into the
// period and rolling slot of the back end's clock, whatever the system's.
func TestUncheckedRequestsUseTheBackEndsClock(t *testing.T) {
	at := lastMilli[0]
	m := NewMemory()
	m.now = (&fakeClock{t: at}).now
	b := &flaky{Memory: m}
	b.down.Store(true)
	l := New(b, Options{FailOpen: true})
	scopes := []Scope{
		keyScope("a", limit.Limits{BudgetUSD: limit.NanoUSD(usd), BudgetPeriod: "daily"}),
		{Name: "model:m", Limits: limit.Limits{BudgetUSD: limit.NanoUSD(usd), BudgetPeriod: "24h"}, Models: []string{"m"}},
	}
	tk, err := l.Admit(ctx, &Request{ID: "1", Scopes: scopes, Cost: usd / 10})
	if tk == nil || err != nil || len(tk.settles) != 2 {
		t.Fatalf("fail open: %+v %v", tk, err)
	}
	if k := tk.settles[0].key; k != "key:a:usd:d20280229" {
		t.Errorf("daily budget settles into %s", k)
	}
	if s, want := tk.settles[1].slot, at.UnixMilli()/(24*time.Minute).Milliseconds(); s != want {
		t.Errorf("rolling budget settles into slot %d, want %d", s, want)
	}
	if _, ok := l.unchecked["key:a:usd:d20280229"]; !ok {
		t.Errorf("the daily budget is not reloaded after the outage: %v", l.unchecked)
	}
}
