package limiter

import (
	"context"
	"sync"
	"time"

	"github.com/tollgate/tollgate/internal/clock"
)

// Memory keeps the counters in this process: limits hold for one replica.
// Budgets are reloaded from the ledger (the Limiter's Spender) when a
// counter is first used after a start.
type Memory struct {
	mu        sync.Mutex
	now       func() time.Time
	windows   map[string]map[int64]int64
	parallel  map[string]map[string]struct{}
	budgets   map[string]*memBudget
	lastSweep int64
}

type memBudget struct {
	epoch     string
	committed int64           // calendar and total periods
	slots     map[int64]int64 // rolling periods
	reserved  int64
	leases    map[string]int64
	endMS     int64
}

var _ backend = (*Memory)(nil)

// NewMemory returns an in-process back end.
func NewMemory() *Memory {
	return &Memory{now: clock.Now, windows: map[string]map[int64]int64{}, parallel: map[string]map[string]struct{}{}, budgets: map[string]*memBudget{}}
}

func (m *Memory) clockNow() time.Time { return m.now() }

func (m *Memory) close() error { return nil }

// spent is the budget's committed spend at now.
func (b *memBudget) spent(c check, now int64) (sum, newest int64) {
	if c.slotMS == 0 {
		return b.committed, -1
	}
	return windowSum(b.slots, now/c.slotMS)
}

func (m *Memory) admit(_ context.Context, member string, cs []check) (outcome, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now().UnixMilli()
	m.sweep(now)
	n := len(cs)
	nums := make([]int64, 4*n) // one allocation for the four per-check columns
	o := outcome{refused: -1, now: now, used: nums[:n:n], reset: nums[n : 2*n : 2*n],
		slot: nums[2*n : 3*n : 3*n], epoch: make([]string, n)}
	newest := nums[3*n:]
	refuse := func(i int, retry int64) {
		if o.refused < 0 {
			o.refused, o.retry = i, retry
		}
	}
	for i, c := range cs {
		switch c.what {
		case Requests, Tokens:
			w := m.windows[c.key]
			cur := now / c.slotMS
			sum, nw := windowSum(w, cur)
			o.used[i], newest[i], o.slot[i] = sum, nw, cur
			o.reset[i] = windowReset(nw, c.slotMS) // a refusal says when, too
			if addAmounts(sum, c.amount) > c.limit {
				refuse(i, windowRetry(w, cur, c.slotMS, sum, c.amount, c.limit))
			}
		case Parallel:
			n := int64(len(m.parallel[c.key]))
			o.used[i] = n
			if n+1 > c.limit {
				refuse(i, now+1000)
			}
		case Budget:
			b := m.budgets[c.key]
			if b == nil {
				o.seed = append(o.seed, i)
				continue
			}
			spent, nw := b.spent(c, now)
			o.used[i], newest[i], o.epoch[i] = addAmounts(spent, b.reserved), nw, b.epoch
			o.reset[i] = c.endMS
			if c.slotMS > 0 {
				o.slot[i] = now / c.slotMS
				o.reset[i] = windowReset(nw, c.slotMS)
			}
			if addAmounts(o.used[i], c.amount) > c.limit {
				refuse(i, budgetRetry(b, c, now, spent))
			}
		}
	}
	if len(o.seed) > 0 || o.refused >= 0 {
		return o, nil
	}
	for i, c := range cs {
		switch c.what {
		case Requests, Tokens:
			w := m.windows[c.key]
			if w == nil {
				w = map[int64]int64{}
				m.windows[c.key] = w
			}
			w[o.slot[i]] = addAmounts(w[o.slot[i]], c.amount)
			o.used[i] = addAmounts(o.used[i], c.amount)
			if c.amount > 0 {
				newest[i] = o.slot[i]
			}
			o.reset[i] = windowReset(newest[i], c.slotMS)
		case Parallel:
			p := m.parallel[c.key]
			if p == nil {
				p = map[string]struct{}{}
				m.parallel[c.key] = p
			}
			p[member] = struct{}{}
			o.used[i]++
		case Budget:
			b := m.budgets[c.key]
			b.leases[member] = addAmounts(b.leases[member], c.amount)
			b.reserved = addAmounts(b.reserved, c.amount)
			o.used[i] = addAmounts(o.used[i], c.amount)
			o.reset[i] = c.endMS
			if c.slotMS > 0 {
				o.reset[i] = windowReset(newest[i], c.slotMS)
			}
		}
	}
	return o, nil
}

// budgetRetry is when a refused budget could admit the request: at the
// end of its period, when enough rolling spend has left the window, in a
// second when only in-flight reservations are in the way, or never.
func budgetRetry(b *memBudget, c check, now, spent int64) int64 {
	switch {
	case addAmounts(spent, c.amount) <= c.limit:
		return now + 1000 // in-flight requests hold the rest; they settle soon
	case c.slotMS > 0:
		return windowRetry(b.slots, now/c.slotMS, c.slotMS, spent, c.amount, c.limit)
	}
	if c.amount > c.limit {
		return 0
	}
	return c.endMS
}

func (m *Memory) seed(_ context.Context, c check, epoch string, total int64, bySlot map[int64]int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.budgets[c.key] != nil {
		return nil // another request reloaded it first
	}
	b := &memBudget{epoch: epoch, leases: map[string]int64{}, endMS: c.endMS}
	if c.slotMS > 0 {
		b.slots = map[int64]int64{}
		for s, v := range bySlot {
			b.slots[s] = clampAmount(v)
		}
	} else {
		b.committed = clampAmount(total)
	}
	m.budgets[c.key] = b
	return nil
}

func (m *Memory) settle(_ context.Context, member string, ss []settlement) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now().UnixMilli()
	for _, s := range ss {
		switch s.what {
		case Tokens:
			w := m.windows[s.key]
			if v, ok := w[s.slot]; ok && s.slot > now/s.slotMS-keepSlots {
				w[s.slot] = addAmounts(v, s.actual-s.amount) // both in [0, maxAmount]
			}
		case Parallel:
			if p := m.parallel[s.key]; p != nil {
				delete(p, member)
				if len(p) == 0 {
					delete(m.parallel, s.key)
				}
			}
		case Budget:
			b := m.budgets[s.key]
			if b == nil {
				continue // reloaded from the ledger, which has this request, when next used
			}
			if b.epoch == s.epoch {
				if amt, ok := b.leases[member]; ok {
					delete(b.leases, member)
					b.reserved = clampAmount(b.reserved - amt)
				}
			}
			if s.slotMS == 0 {
				b.committed = addAmounts(b.committed, s.actual)
			} else if s.slot > now/s.slotMS-keepSlots {
				b.slots[s.slot] = addAmounts(b.slots[s.slot], s.actual)
			}
		}
	}
	return nil
}

func (m *Memory) forget(_ context.Context, cs []check) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range cs {
		delete(m.budgets, c.key)
	}
	return nil
}

// sweep forgets, once a minute, counters that hold nothing any more.
func (m *Memory) sweep(now int64) {
	if now-m.lastSweep < 60_000 {
		return
	}
	m.lastSweep = now
	for k, w := range m.windows {
		if sum, _ := windowSum(w, now/1000); sum == 0 {
			delete(m.windows, k)
		}
	}
	for k, b := range m.budgets {
		if b.endMS > 0 && now >= b.endMS && len(b.leases) == 0 {
			delete(m.budgets, k)
		}
	}
}
