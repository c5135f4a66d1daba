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
)

var _ backend = (*Redis)(nil)

// NewRedis returns a back end on the Redis at url (redis://[user:pass@]host:port/db,
// or rediss:// for TLS). It does not connect until first used.
func NewRedis(url string) (*Redis, error) { return newRedis(url, "tollgate:", LeaseTTL, 0) }

func newRedis(url, prefix string, lease, moved time.Duration) (*Redis, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("redis url: %w", err)
	}
	// Fail fast: a request waits on Redis, and the fail mode decides what
	// happens when it is away.
	opt.DialTimeout = time.Second
	opt.ReadTimeout = time.Second
	opt.WriteTimeout = time.Second
	opt.MaxRetries = 1
	r := &Redis{c: redis.NewClient(opt), prefix: prefix, lease: lease, moved: moved, leases: map[string][]string{}, stop: make(chan struct{}), done: make(chan struct{})}
	go r.renewLoop()
	return r, nil
}

// Ping checks that Redis answers.
func (r *Redis) Ping(ctx context.Context) error { return r.c.Ping(ctx).Err() }

func (r *Redis) clockNow() time.Time { return clock.Now().Add(r.moved) }

// offset is how far the scripts move Redis's clock, in microseconds (the
// resolution of TIME): as far as clockNow is from the system clock.
func (r *Redis) offset() int64 { return (clock.Offset() + r.moved).Microseconds() }

func (r *Redis) close() error {
	close(r.stop)
	<-r.done
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
		kind := "w"
		switch c.what {
		case Parallel:
			kind = "p"
			leaseSets = append(leaseSets, keys[i])
		case Budget:
			kind = "b"
			leaseSets = append(leaseSets, keys[i]+":l")
		}
		// Amounts and limits within what the scripts count exactly.
		args = append(args, kind, clampAmount(c.limit), clampAmount(c.amount), c.slotMS, c.endMS, r.ttl(c))
	}
	res, err := scriptAdmit.Run(ctx, r.c, keys, args...).Slice()
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
	return scriptSeed.Run(ctx, r.c, []string{r.prefix + c.key}, args...).Err()
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
	return scriptSettle.Run(ctx, r.c, keys, args...).Err()
}

func (r *Redis) forget(ctx context.Context, cs []check) error {
	keys := make([]string, 0, 4*len(cs))
	for _, c := range cs {
		k := r.prefix + c.key
		keys = append(keys, k, k+":s", k+":l", k+":a")
	}
	for len(keys) > 0 {
		n := min(len(keys), 400)
		if err := r.c.Del(ctx, keys[:n]...).Err(); err != nil {
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
			scriptRenew.Run(ctx, r.c, keys[:n], append([]any{r.offset(), r.lease.Milliseconds()}, members[:n]...)...)
			cancel()
			keys, members = keys[n:], members[n:]
		}
	}
}
