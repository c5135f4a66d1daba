package limiter

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/clock"
	"github.com/tollgate/tollgate/internal/limit"
)

// backends runs a test against every back end: the in-process one, and
// Redis when TOLLGATE_TEST_REDIS_URL is set.
func backends(t *testing.T, f func(t *testing.T, mk func(Options) *Limiter)) {
	t.Run("memory", func(t *testing.T) {
		f(t, func(o Options) *Limiter { return New(NewMemory(), o) })
	})
	t.Run("redis", func(t *testing.T) {
		url := redisURL(t)
		prefix := "tgtest:" + newEpoch() + ":"
		f(t, func(o Options) *Limiter {
			r, err := newRedis(url, prefix, LeaseTTL, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.close() })
			return New(r, o)
		})
		t.Cleanup(func() { dropPrefix(t, url, prefix) })
	})
}

func redisURL(t testing.TB) string {
	url := os.Getenv("TOLLGATE_TEST_REDIS_URL")
	if url == "" {
		t.Skip("TOLLGATE_TEST_REDIS_URL is not set; set it (e.g. redis://127.0.0.1:6379/0) to run the Redis tests")
	}
	return url
}

func dropPrefix(t testing.TB, url, prefix string) {
	r, err := newRedis(url, prefix, LeaseTTL, 0, 0)
	if err != nil {
		return
	}
	defer r.close()
	ctx := context.Background()
	keys, _ := r.c.Keys(ctx, prefix+"*").Result()
	if len(keys) > 0 {
		r.c.Del(ctx, keys...)
	}
}

var ctx = context.Background()

func keyScope(id string, l limit.Limits) Scope { return Scope{Name: "key:" + id, Limits: l, KeyID: id} }

func admit(t *testing.T, l *Limiter, id string, tokens, cost int64, scopes ...Scope) (*Ticket, *Refusal) {
	t.Helper()
	tk, err := l.Admit(ctx, &Request{ID: id, Scopes: scopes, Tokens: tokens, Cost: cost})
	var r *Refusal
	if errors.As(err, &r) {
		return nil, r
	}
	if err != nil {
		t.Fatalf("Admit: %v", err)
	}
	return tk, nil
}

func TestRequestsPerMinute(t *testing.T) {
	backends(t, func(t *testing.T, mk func(Options) *Limiter) {
		l := mk(Options{})
		s := keyScope("a", limit.Limits{RPM: 3})
		for i := int64(0); i < 3; i++ {
			tk, r := admit(t, l, "r", 0, 0, s)
			if r != nil {
				t.Fatalf("request %d refused: %v", i, r)
			}
			if q := tk.Status.Requests; q == nil || q.Limit != 3 || q.Remaining != 2-i || q.Reset.IsZero() {
				t.Fatalf("request %d: quota %+v", i, q)
			}
		}
		_, r := admit(t, l, "r", 0, 0, s)
		if r == nil || r.What != Requests || r.RetryAfter <= 0 || r.RetryAfter > 61*time.Second {
			t.Fatalf("4th request: %+v", r)
		}
		if !strings.Contains(r.Message, "3 requests per minute") || r.Status.Requests.Remaining != 0 {
			t.Errorf("refusal: %q %+v", r.Message, r.Status.Requests)
		}
		// A refusal says when the window is whole again, as an admission does.
		if d := r.Status.Requests.Reset.Sub(l.b.clockNow()); d <= 0 || d > 61*time.Second {
			t.Errorf("refusal's reset in %v, want within the minute", d)
		}
	})
}

func TestAllOrNothing(t *testing.T) {
	backends(t, func(t *testing.T, mk func(Options) *Limiter) {
		l := mk(Options{})
		wide, narrow := keyScope("wide", limit.Limits{RPM: 10}), Scope{Name: "model:m", Limits: limit.Limits{RPM: 1}, Models: []string{"m"}}
		if _, r := admit(t, l, "1", 0, 0, wide, narrow); r != nil {
			t.Fatal(r)
		}
		_, r := admit(t, l, "2", 0, 0, wide, narrow)
		if r == nil || r.Scope != "model:m" || !strings.Contains(r.Message, `model "m" (across all keys)`) {
			t.Fatalf("want a refusal by the model scope, got %+v", r)
		}
		// The refused request took nothing from the wide scope.
		tk, r := admit(t, l, "3", 0, 0, wide)
		if r != nil || tk.Status.Requests.Remaining != 8 {
			t.Fatalf("wide scope after a refusal: %+v %+v", tk, r)
		}
	})
}

func TestTokensPerMinute(t *testing.T) {
	backends(t, func(t *testing.T, mk func(Options) *Limiter) {
		l := mk(Options{})
		s := keyScope("a", limit.Limits{TPM: 1000})
		t1, _ := admit(t, l, "1", 400, 0, s)
		t2, _ := admit(t, l, "2", 400, 0, s)
		if t1 == nil || t2 == nil || t2.Status.Tokens.Remaining != 200 {
			t.Fatalf("reservations: %+v %+v", t1, t2)
		}
		if _, r := admit(t, l, "3", 400, 0, s); r == nil || r.What != Tokens || r.RetryAfter <= 0 {
			t.Fatalf("third: %+v", r)
		}
		// Settling gives back what the first did not use.
		l.Settle(ctx, t1, Used{Tokens: 100})
		l.Settle(ctx, t1, Used{Tokens: 100}) // once only
		t3, r := admit(t, l, "3", 400, 0, s)
		if r != nil || t3.Status.Tokens.Remaining != 100 {
			t.Fatalf("after settling: %+v %+v", t3, r)
		}
		// A request may use more than it reserved; the window shows it.
		l.Settle(ctx, t2, Used{Tokens: 500})
		if _, r := admit(t, l, "4", 1, 0, s); r == nil || r.Status.Tokens.Remaining != 0 {
			t.Fatalf("after an overrun: %+v", r)
		}
		// A request that can never fit says so and gives no retry time.
		_, r = admit(t, l, "5", 1001, 0, s)
		if r == nil || r.RetryAfter != 0 || !strings.Contains(r.Message, "request too large") {
			t.Fatalf("oversized: %+v", r)
		}
	})
}

func TestParallel(t *testing.T) {
	backends(t, func(t *testing.T, mk func(Options) *Limiter) {
		l := mk(Options{})
		s := keyScope("a", limit.Limits{MaxParallel: 2})
		a, _ := admit(t, l, "a", 0, 0, s)
		b, _ := admit(t, l, "b", 0, 0, s)
		if a == nil || b == nil {
			t.Fatal("the first two were refused")
		}
		if _, r := admit(t, l, "c", 0, 0, s); r == nil || r.What != Parallel || r.RetryAfter != time.Second {
			t.Fatalf("third in flight: %+v", r)
		}
		l.Settle(ctx, a, Used{})
		if c, r := admit(t, l, "c", 0, 0, s); c == nil {
			t.Fatalf("after one ended: %+v", r)
		}
	})
}

type fakeSpender struct {
	calls  atomic.Int64
	total  int64
	bySlot map[int64]int64
	err    error

	mu    sync.Mutex
	since time.Time // of the last call
}

func (f *fakeSpender) Spend(_ context.Context, keyID string, models []string, since time.Time, slot time.Duration) (int64, map[int64]int64, error) {
	f.calls.Add(1)
	f.mu.Lock()
	f.since = since
	f.mu.Unlock()
	return f.total, f.bySlot, f.err
}

func (f *fakeSpender) lastSince() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.since
}

const usd = int64(1e9)

// Reservations and settlements against a budget. The period is rolling,
// so the test holds at any time of the process's clock: calendar periods
// are tested on a clock set to their ends (clock_test.go).
func TestBudget(t *testing.T) {
	backends(t, func(t *testing.T, mk func(Options) *Limiter) {
		sp := &fakeSpender{total: usd / 10} // 0.1 USD already in the ledger
		l := mk(Options{Spender: sp})
		s := keyScope("a", limit.Limits{BudgetUSD: limit.NanoUSD(usd), BudgetPeriod: "30d"})
		// The ledger's spend is in the current 12-hour slot (or the one
		// before, if a slot starts meanwhile).
		sp.bySlot = map[int64]int64{l.b.clockNow().UnixMilli() / (12 * time.Hour).Milliseconds(): usd / 10}
		a, r := admit(t, l, "a", 0, 4*usd/10, s)
		if r != nil || sp.calls.Load() != 1 {
			t.Fatalf("first: %v, %d reloads", r, sp.calls.Load())
		}
		// Whole again when that slot has left the window: in 30 days or so.
		// Left before it: all but the 0.1 spent; it holds 0.4 until settled.
		if q, d := a.Status.Budget, a.Status.Budget.Reset.Sub(l.b.clockNow()); q.Limit != usd || q.Remaining != 9*usd/10 || q.Reserved != 4*usd/10 ||
			d < 29*24*time.Hour || d > 31*24*time.Hour {
			t.Errorf("quota %+v", q)
		}
		b, _ := admit(t, l, "b", 0, 4*usd/10, s)
		// 0.1 spent + 0.8 reserved: a third 0.4 does not fit while they run.
		_, r = admit(t, l, "c", 0, 4*usd/10, s)
		if r == nil || r.What != Budget || r.RetryAfter != time.Second || !strings.Contains(r.Message, "budget insufficient") {
			t.Fatalf("third: %+v", r)
		}
		l.Settle(ctx, a, Used{Cost: usd / 20})
		c, r := admit(t, l, "c", 0, 4*usd/10, s)
		if r != nil {
			t.Fatalf("after settling: %v", r)
		}
		l.Settle(ctx, b, Used{Cost: 3 * usd / 10})
		l.Settle(ctx, c, Used{Cost: 5 * usd / 10}) // a request may exceed its reservation
		// Spent: 0.1 + 0.05 + 0.3 + 0.5 = 0.95; nothing reserved.
		_, r = admit(t, l, "d", 0, usd/10, s)
		if r == nil || r.Status.Budget.Remaining != usd/20 || r.Status.Budget.Reset.IsZero() {
			t.Fatalf("after settling all: %+v", r)
		}
		d, r := admit(t, l, "d", 0, usd/20, s)
		if r != nil || d.Status.Budget.Remaining != usd/20 || d.Status.Budget.Reserved != usd/20 {
			t.Fatalf("exact fit: %+v %v", d, r)
		}
		l.Settle(ctx, d, Used{Cost: usd / 20})
		_, r = admit(t, l, "e", 0, 0, s)
		if r == nil || !strings.Contains(r.Message, "budget exhausted") || r.RetryAfter <= 0 {
			t.Fatalf("spent: %+v", r)
		}
		if sp.calls.Load() != 1 {
			t.Errorf("the ledger was read %d times, want once", sp.calls.Load())
		}
	})
}

func TestTotalBudgetNeverRetries(t *testing.T) {
	backends(t, func(t *testing.T, mk func(Options) *Limiter) {
		l := mk(Options{Spender: &fakeSpender{total: usd}})
		_, r := admit(t, l, "a", 0, 1, keyScope("a", limit.Limits{BudgetUSD: limit.NanoUSD(usd)}))
		if r == nil || r.RetryAfter != 0 || !strings.Contains(r.Message, "total budget of 1 USD") {
			t.Fatalf("%+v", r)
		}
	})
}

func TestConcurrentAdmissionsAreExact(t *testing.T) {
	backends(t, func(t *testing.T, mk func(Options) *Limiter) {
		l := mk(Options{})
		s := keyScope("a", limit.Limits{RPM: 37, TPM: 100_000, BudgetUSD: limit.NanoUSD(usd)})
		var admitted, spent atomic.Int64
		var wg sync.WaitGroup
		for i := 0; i < 120; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tk, err := l.Admit(ctx, &Request{ID: newEpoch(), Scopes: []Scope{s}, Tokens: 10, Cost: usd / 30})
				if err == nil {
					admitted.Add(1)
					spent.Add(usd / 30)
					l.Settle(ctx, tk, Used{Tokens: 10, Cost: usd / 30})
				}
			}()
		}
		wg.Wait()
		// The budget allows 30 of these, the rpm 37: the budget binds.
		if admitted.Load() != 30 {
			t.Errorf("admitted %d, want exactly 30", admitted.Load())
		}
	})
}

func TestFailModes(t *testing.T) {
	for _, open := range []bool{true, false} {
		l := New(failing{}, Options{FailOpen: open})
		tk, err := l.Admit(ctx, &Request{ID: "x", Scopes: []Scope{keyScope("a", limit.Limits{RPM: 1})}})
		if open && (tk != nil || err != nil) || !open && (tk != nil || !errors.Is(err, ErrUnavailable)) {
			t.Errorf("fail open %v: %v %v", open, tk, err)
		}
		if l.Errors.Load() != 1 {
			t.Errorf("errors counted: %d", l.Errors.Load())
		}
	}
	// Nothing to check: the back end is not asked.
	l := New(failing{}, Options{})
	if tk, err := l.Admit(ctx, &Request{ID: "x", Scopes: []Scope{keyScope("a", limit.Limits{})}}); tk != nil || err != nil {
		t.Errorf("no limits: %v %v", tk, err)
	}
}

type failing struct{}

func (failing) admit(context.Context, string, []check) (outcome, error) {
	return outcome{}, errors.New("connection refused")
}
func (failing) seed(context.Context, check, string, int64, map[int64]int64) error { return nil }
func (failing) settle(context.Context, string, []settlement) error                { return nil }
func (failing) close() error                                                      { return nil }
func (failing) forget(context.Context, []check) error                             { return nil }
func (failing) peek(context.Context, []check) ([]int64, []bool, error) {
	return nil, nil, errors.New("connection refused")
}
func (failing) clockNow() time.Time { return clock.Now() }

func TestReloadFailureFollowsFailMode(t *testing.T) {
	sp := &fakeSpender{err: errors.New("database down")}
	s := keyScope("a", limit.Limits{BudgetUSD: limit.NanoUSD(usd)})
	if _, err := New(NewMemory(), Options{Spender: sp}).Admit(ctx, &Request{ID: "x", Scopes: []Scope{s}}); !errors.Is(err, ErrUnavailable) {
		t.Errorf("fail closed: %v", err)
	}
	// Fail open: admitted with a ticket that settles the cost unreserved.
	if tk, err := New(NewMemory(), Options{Spender: sp, FailOpen: true}).Admit(ctx, &Request{ID: "x", Scopes: []Scope{s}}); tk == nil || err != nil || tk.settles[0].amount != 0 {
		t.Errorf("fail open: %v %v", tk, err)
	}
}

// flaky is a back end that can be made to fail, as Redis does when away.
type flaky struct {
	*Memory
	down atomic.Bool
}

var errDown = errors.New("connection refused")

func (f *flaky) admit(ctx context.Context, m string, cs []check) (outcome, error) {
	if f.down.Load() {
		return outcome{}, errDown
	}
	return f.Memory.admit(ctx, m, cs)
}

func (f *flaky) settle(ctx context.Context, m string, ss []settlement) error {
	if f.down.Load() {
		return errDown
	}
	return f.Memory.settle(ctx, m, ss)
}

// Spend that passed unchecked during an outage counts once the counters
// answer again: budgets used meanwhile are reloaded from the ledger.
func TestOutageSpendIsCountedAfterRecovery(t *testing.T) {
	resyncDelay = 0
	sp := &fakeSpender{}
	b := &flaky{Memory: NewMemory()}
	l := New(b, Options{Spender: sp, FailOpen: true})
	s := keyScope("a", limit.Limits{BudgetUSD: limit.NanoUSD(usd)})
	tk, _ := admit(t, l, "1", 0, usd/10, s)
	l.Settle(ctx, tk, Used{Cost: usd / 10})

	b.down.Store(true)
	during, _ := admit(t, l, "2", 0, usd/10, s) // ends during the outage: settling fails
	late, _ := admit(t, l, "3", 0, usd/10, s)   // ends after it
	l.Settle(ctx, during, Used{Cost: 2 * usd / 10})
	sp.total = 3 * usd / 10 // the ledger: request 1 and request 2
	b.down.Store(false)

	if _, r := admit(t, l, "4", 0, 1, s); r != nil { // the first check after: triggers the reload
		t.Fatal(r)
	}
	for deadline := time.Now().Add(5 * time.Second); sp.calls.Load() < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("budget not reloaded after the outage")
		}
		admit(t, l, "5", 0, 1, s)
	}
	l.Settle(ctx, late, Used{Cost: 4 * usd / 10})
	// 0.1 + 0.2 (ledger) + 0.4 (settled after) = 0.7 spent.
	_, r := admit(t, l, "6", 0, usd, s)
	if r == nil || r.Status.Budget.Remaining > 3*usd/10 {
		t.Fatalf("after the outage: %+v", r)
	}
}
