package limiter

import (
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/limit"
)

// A replica that dies holding places and reservations: its leases expire.
func TestRedisLeasesOfADeadReplicaExpire(t *testing.T) {
	url := redisURL(t)
	prefix := "tgtest:" + newEpoch() + ":"
	t.Cleanup(func() { dropPrefix(t, url, prefix) })
	dead, err := newRedis(url, prefix, 300*time.Millisecond, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	s := keyScope("a", limit.Limits{MaxParallel: 1, BudgetUSD: limit.NanoUSD(usd)})
	if _, r := admit(t, New(dead, Options{}), "1", 0, usd, s); r != nil {
		t.Fatal(r)
	}
	dead.close() // no settlement, no renewal
	live, err := newRedis(url, prefix, 300*time.Millisecond, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer live.close()
	l := New(live, Options{})
	if _, r := admit(t, l, "2", 0, usd, s); r == nil {
		t.Fatal("admitted while the dead replica's lease held")
	}
	time.Sleep(400 * time.Millisecond)
	tk, r := admit(t, l, "2", 0, usd, s)
	if r != nil {
		t.Fatalf("after the lease: %v", r)
	}
	// A live replica's leases are renewed past their TTL.
	time.Sleep(500 * time.Millisecond)
	if _, r := admit(t, l, "3", 0, 1, s); r == nil {
		t.Fatal("a renewed lease expired")
	}
	l.Settle(ctx, tk, Used{Cost: usd / 2})
}

// Redis lost its data (restarted without persistence): budgets are
// reloaded from the ledger, and requests admitted before settle without
// counting twice.
func TestRedisReloadAfterDataLoss(t *testing.T) {
	url := redisURL(t)
	prefix := "tgtest:" + newEpoch() + ":"
	t.Cleanup(func() { dropPrefix(t, url, prefix) })
	r, err := newRedis(url, prefix, LeaseTTL, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	sp := &fakeSpender{}
	l := New(r, Options{Spender: sp})
	s := keyScope("a", limit.Limits{BudgetUSD: limit.NanoUSD(usd)})
	before, _ := admit(t, l, "1", 0, usd/2, s)
	dropPrefix(t, url, prefix)
	// The ledger now holds 0.3 USD (earlier requests).
	sp.total = 3 * usd / 10
	after, rf := admit(t, l, "2", 0, usd/2, s)
	if rf != nil || sp.calls.Load() != 2 {
		t.Fatalf("after the loss: %v, %d reloads", rf, sp.calls.Load())
	}
	l.Settle(ctx, before, Used{Cost: usd / 10}) // reserved in the lost counter: counted once
	l.Settle(ctx, after, Used{Cost: usd / 10})
	// 0.3 + 0.1 + 0.1 spent.
	_, rf = admit(t, l, "3", 0, usd, s)
	if rf == nil || rf.Status.Budget.Remaining != usd/2 {
		t.Fatalf("%+v", rf)
	}
}

// redis.timeout replaces the default bounds on a call to Redis.
func TestRedisOptionsTimeout(t *testing.T) {
	for _, c := range []struct{ set, want time.Duration }{{0, redisIOTimeout}, {2 * time.Second, 2 * time.Second}} {
		opt, err := RedisOptions("redis://127.0.0.1:6379/0", c.set)
		if err != nil {
			t.Fatal(err)
		}
		if opt.ReadTimeout != c.want || opt.WriteTimeout != c.want || opt.PoolTimeout != c.want || opt.DialTimeout < c.want && c.set > 0 {
			t.Errorf("timeout %v: read %v, write %v, pool %v, dial %v", c.set, opt.ReadTimeout, opt.WriteTimeout, opt.PoolTimeout, opt.DialTimeout)
		}
	}
}
