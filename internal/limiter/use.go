package limiter

import (
	"context"
	"fmt"
)

// Use is how much of one limit a scope holds now, as the next admission
// would count it.
type Use struct {
	Scope string // the scope's name
	What  What
	Limit int64
	// Used is what the window holds (rpm, tpm), the requests in flight
	// (parallel), or what the period spent plus what requests in flight
	// reserved (budgets, nano-USD).
	Used int64
	// FromLedger is true for a budget whose counter is not loaded (no
	// request used it since it was last reloaded): Used is then the
	// ledger's spend for the period, without reservations.
	FromLedger bool
}

// Use reports the current use of every limit of scopes, in checks' order
// (per scope: rpm, tpm, parallel, budget), changing no counter. It is
// what the console shows; admission does not depend on it.
func (l *Limiter) Use(ctx context.Context, scopes []Scope) ([]Use, error) {
	req := &Request{Scopes: scopes}
	cs := checks(req, l.b.clockNow())
	if len(cs) == 0 {
		return nil, nil
	}
	used, loaded, err := l.b.peek(ctx, cs)
	if err != nil {
		return nil, err
	}
	out := make([]Use, len(cs))
	for i, c := range cs {
		s := scopes[c.scope]
		out[i] = Use{Scope: s.Name, What: c.what, Limit: c.limit, Used: used[i]}
		if c.what != Budget || loaded[i] {
			continue
		}
		out[i].FromLedger = true
		if l.spender != nil {
			total, _, err := l.spend(ctx, s, c.since, 0)
			if err != nil {
				return nil, fmt.Errorf("reading spend from the ledger: %w", err)
			}
			out[i].Used = clampAmount(total)
		}
	}
	return out, nil
}

// peek is the memory back end's Use: the sums admit would start from.
func (m *Memory) peek(_ context.Context, cs []check) (used []int64, loaded []bool, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now().UnixMilli()
	used, loaded = make([]int64, len(cs)), make([]bool, len(cs))
	for i, c := range cs {
		loaded[i] = true
		switch c.what {
		case Requests, Tokens:
			used[i], _ = windowSum(m.windows[c.key], now/c.slotMS)
		case Parallel:
			used[i] = int64(len(m.parallel[c.key]))
		case Budget:
			b := m.budgets[c.key]
			if b == nil {
				loaded[i] = false
				continue
			}
			spent, _ := b.spent(c, now)
			used[i] = addAmounts(spent, b.reserved)
		}
	}
	return used, loaded, nil
}

// peek is the Redis back end's Use, in one read-only script.
func (r *Redis) peek(ctx context.Context, cs []check) (used []int64, loaded []bool, err error) {
	keys := make([]string, len(cs))
	args := make([]any, 0, 1+2*len(cs))
	args = append(args, r.offset())
	for i, c := range cs {
		keys[i] = r.prefix + c.key
		args = append(args, scriptKind(c.what), c.slotMS)
	}
	var res []int64
	err = r.call(ctx, func() (err error) {
		res, err = scriptPeek.Run(ctx, r.c, keys, args...).Int64Slice()
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	if len(res) != len(cs) {
		return nil, nil, fmt.Errorf("limit: unexpected reply from the peek script: %v", res)
	}
	used, loaded = make([]int64, len(cs)), make([]bool, len(cs))
	for i, v := range res {
		used[i], loaded[i] = max(v, 0), v >= 0
	}
	return used, loaded, nil
}

// scriptKind is how the admit and peek scripts name a check's counter:
// w a window, p parallel leases, b a budget.
func scriptKind(w What) string {
	switch w {
	case Parallel:
		return "p"
	case Budget:
		return "b"
	}
	return "w"
}
