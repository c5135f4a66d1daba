package limiter

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tollgate/tollgate/internal/clock"
)

// Redis keeps every counter, reservation and lease in Redis, changed only
// by the scripts in lua.go, so that any number of replicas share them.
// Reservations and places among parallel requests are leases: a replica
// renews its own while the requests run, so those of a replica that dies
// expire by themselves within LeaseTTL.
type Redis struct {
	c      redis.UniversalClient
	h      *health // fails calls fast while Redis is down
	prefix string
	lease  time.Duration
	// moved moves this back end's clock past the process's, in tests.
	moved time.Duration

	mu     sync.Mutex
	leases map[string][]string // request id -> its lease sets
	stop   chan struct{}
	done   chan struct{}
}

// LeaseTTL is how long a reservation or a parallel place outlives its
// replica; leases are renewed every LeaseTTL/3.
const LeaseTTL = 30 * time.Second

// totalTTL is how long an idle total budget counter is kept before it is
// reloaded from the ledger.
const totalTTL = 30 * 24 * time.Hour

var (
	scriptAdmit  = redis.NewScript(luaAdmit)
	scriptSeed   = redis.NewScript(luaSeed)
	scriptSettle = redis.NewScript(luaSettle)
	scriptRenew  = redis.NewScript(luaRenew)
	scriptPeek   = redis.NewScript(luaPeek)
)

var _ backend = (*Redis)(nil)

// NewRedis returns a back end on the Redis at url (redis://[user:pass@]host:port/db,
// or rediss:// for TLS), whose calls may take timeout (0: the default). It
// does not connect until first used.
func NewRedis(url string, timeout time.Duration) (*Redis, error) {
	return newRedis(url, "tollgate:", LeaseTTL, 0, timeout)
}

// Bounds on one call to Redis. A request waits on Redis before anything
// else, and counters answer in well under a millisecond, so a Redis that
// takes longer than this is treated as away and the fail mode decides.
const (
	redisDialTimeout = 200 * time.Millisecond
	redisIOTimeout   = 200 * time.Millisecond
)

// RedisOptions are the go-redis options for the Redis at url: timeouts
// short enough that a request never waits near a second on it (timeout,
// when not 0, replaces the defaults), and no retries (a limit script must
// not run twice; the back end's probe does the waiting for Redis to come
// back).
func RedisOptions(url string, timeout time.Duration) (*redis.Options, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, err
	}
	dial, io := redisDialTimeout, redisIOTimeout
	if timeout > 0 {
		dial, io = timeout, timeout
	}
	opt.DialTimeout = dial
	opt.DialerRetries = 1 // go-redis's default, 5 dials 100 ms apart, is most of a refused request's wait
	opt.ReadTimeout = io
	opt.WriteTimeout = io
	opt.PoolTimeout = io
	opt.MaxRetries = -1
	return opt, nil
}

func newRedis(url, prefix string, lease, moved, timeout time.Duration) (*Redis, error) {
	opt, err := RedisOptions(url, timeout)
	if err != nil {
		return nil, fmt.Errorf("redis url: %w", err)
	}
	return newRedisClient(redis.NewClient(opt), prefix, lease, moved, nil), nil
}

// newRedisClient is a back end on c; setup, when not nil, adjusts its
// health before the back end is used (tests inject the probe's clock).
func newRedisClient(c redis.UniversalClient, prefix string, lease, moved time.Duration, setup func(*health)) *Redis {
	r := &Redis{c: c, prefix: prefix, lease: lease, moved: moved, leases: map[string][]string{}, stop: make(chan struct{}), done: make(chan struct{})}
	r.h = newHealth(func(ctx context.Context) error { return r.c.Ping(ctx).Err() })
	if setup != nil {
		setup(r.h)
	}
	go r.renewLoop()
	return r
}

// Ping checks that Redis answers; while it is known down, it says so
// without asking.
func (r *Redis) Ping(ctx context.Context) error {
	return r.call(ctx, func() error { return r.c.Ping(ctx).Err() })
}

// call runs f unless Redis is known down, and marks it down when f could
// not reach it.
func (r *Redis) call(ctx context.Context, f func() error) error {
	if err := r.h.check(); err != nil {
		return err
	}
	err := f()
	r.h.observe(ctx, err)
	return err
}

// up reports whether Redis is thought to answer.
func (r *Redis) up() bool { return r.h.up() }

// watch calls f when a probe finds Redis again after an outage.
func (r *Redis) watch(f func(probes int, downFor time.Duration)) { r.h.watch(f) }

func (r *Redis) clockNow() time.Time { return clock.Now().Add(r.moved) }

// offset is how far the scripts move Redis's clock, in microseconds (the
// resolution of TIME): as far as clockNow is from the system clock.
func (r *Redis) offset() int64 { return (clock.Offset() + r.moved).Microseconds() }

func (r *Redis) close() error {
	close(r.stop)
	<-r.done
	r.h.close()
	return r.c.Close()
}

func (r *Redis) ttl(c check) int64 {
	switch {
	case c.endMS > 0:
		return c.endMS - r.clockNow().UnixMilli() + 24*time.Hour.Milliseconds()
	case c.slotMS > 0:
		return (keepSlots+1)*c.slotMS + r.lease.Milliseconds()
	}
	return totalTTL.Milliseconds()
}

func (r *Redis) admit(ctx context.Context, member string, cs []check) (outcome, error) {
	keys := make([]string, len(cs))
	args := make([]any, 0, 3+6*len(cs))
	args = append(args, r.offset(), member, r.lease.Milliseconds())
	var leaseSets []string
	for i, c := range cs {
		keys[i] = r.prefix + c.key
		kind := scriptKind(c.what)
		switch c.what {
		case Parallel:
			leaseSets = append(leaseSets, keys[i])
		case Budget:
			leaseSets = append(leaseSets, keys[i]+":l")
		}
		// Amounts and limits within what the scripts count exactly.
		args = append(args, kind, clampAmount(c.limit), clampAmount(c.amount), c.slotMS, c.endMS, r.ttl(c))
	}
	var res []any
	err := r.call(ctx, func() (err error) {
		res, err = scriptAdmit.Run(ctx, r.c, keys, args...).Slice()
		return err
	})
	if err != nil {
		return outcome{}, err
	}
	o, err := parseOutcome(res, len(cs))
	if err != nil {
		return outcome{}, err
	}
	if o.refused < 0 && len(o.seed) == 0 && len(leaseSets) > 0 {
		r.mu.Lock()
		r.leases[member] = leaseSets
		r.mu.Unlock()
	}
	return o, nil
}

func parseOutcome(res []any, n int) (outcome, error) {
	bad := fmt.Errorf("limit: unexpected reply from the admit script: %v", res)
	if len(res) < 4 {
		return outcome{}, bad
	}
	num := func(v any) int64 { x, _ := v.(int64); return x }
	o := outcome{refused: -1, now: num(res[2]), retry: num(res[3])}
	switch num(res[0]) {
	case 2:
		for _, v := range res[4:] {
			o.seed = append(o.seed, int(num(v))-1)
		}
		return o, nil
	case 1:
		o.refused = int(num(res[1])) - 1
	}
	if len(res) != 4+4*n {
		return outcome{}, bad
	}
	o.used, o.reset, o.slot, o.epoch = make([]int64, n), make([]int64, n), make([]int64, n), make([]string, n)
	for i := 0; i < n; i++ {
		v := res[4+4*i:]
		o.used[i], o.reset[i], o.slot[i] = num(v[0]), num(v[1]), num(v[2])
		o.epoch[i], _ = v[3].(string)
	}
	return o, nil
}

func (r *Redis) seed(ctx context.Context, c check, epoch string, total int64, bySlot map[int64]int64) error {
	args := []any{r.offset(), epoch, r.ttl(c), clampAmount(total)}
	for s, v := range bySlot {
		args = append(args, strconv.FormatInt(s, 10), clampAmount(v))
	}
	return r.call(ctx, func() error { return scriptSeed.Run(ctx, r.c, []string{r.prefix + c.key}, args...).Err() })
}

func (r *Redis) settle(ctx context.Context, member string, ss []settlement) error {
	r.mu.Lock()
	delete(r.leases, member)
	r.mu.Unlock()
	keys := make([]string, 0, len(ss))
	args := make([]any, 0, 2+6*len(ss))
	args = append(args, r.offset(), member)
	for _, s := range ss {
		kind := "t"
		switch s.what {
		case Parallel:
			kind = "p"
		case Budget:
			kind = "b"
		}
		keys = append(keys, r.prefix+s.key)
		args = append(args, kind, clampAmount(s.amount), clampAmount(s.actual), s.slot, s.slotMS, s.epoch)
	}
	return r.call(ctx, func() error { return scriptSettle.Run(ctx, r.c, keys, args...).Err() })
}

func (r *Redis) forget(ctx context.Context, cs []check) error {
	keys := make([]string, 0, 4*len(cs))
	for _, c := range cs {
		k := r.prefix + c.key
		keys = append(keys, k, k+":s", k+":l", k+":a")
	}
	for len(keys) > 0 {
		n := min(len(keys), 400)
		if err := r.call(ctx, func() error { return r.c.Del(ctx, keys[:n]...).Err() }); err != nil {
			return err
		}
		keys = keys[n:]
	}
	return nil
}

// renewLoop extends the leases of this replica's requests in flight.
func (r *Redis) renewLoop() {
	defer close(r.done)
	t := time.NewTicker(r.lease / 3)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
		}
		r.mu.Lock()
		var keys []string
		var members []any
		for member, sets := range r.leases {
			for _, k := range sets {
				keys = append(keys, k)
				members = append(members, member)
			}
		}
		r.mu.Unlock()
		for len(keys) > 0 {
			n := min(len(keys), 500)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			r.call(ctx, func() error {
				return scriptRenew.Run(ctx, r.c, keys[:n], append([]any{r.offset(), r.lease.Milliseconds()}, members[:n]...)...).Err()
			})
			cancel()
			keys, members = keys[n:], members[n:]
		}
	}
}
