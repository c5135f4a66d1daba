// Package breaker is a circuit breaker per upstream target. Closed, it
// lets every request through and watches the outcomes; after too many
// failures in a row, or too high a share of failures over a window, it
// opens: the target is skipped without a network call. After a cooldown
// it lets one probe through (half-open): success closes it, failure
// opens it again.
package breaker

import (
	"sync"
	"time"

	"github.com/tollgate/tollgate/internal/clock"
)

// State is a breaker's state.
type State int

// The states, in the order their gauge reports them.
const (
	Closed State = iota
	HalfOpen
	Open
)

func (s State) String() string { return [...]string{"closed", "half_open", "open"}[s] }

// Settings tune a breaker; zero fields take the defaults.
type Settings struct {
	// Failures in a row that open the breaker (default 5).
	Failures int
	// ErrorRate, between 0 and 1, opens the breaker when that share of
	// the requests in Window failed, once MinRequests were seen (default
	// 0.5 of at least 20 in 60 s).
	ErrorRate   float64
	Window      time.Duration
	MinRequests int
	// Cooldown is how long it stays open before a probe (default 30 s).
	Cooldown time.Duration
}

// Defaults.
const (
	DefaultFailures    = 5
	DefaultErrorRate   = 0.5
	DefaultWindow      = time.Minute
	DefaultMinRequests = 20
	DefaultCooldown    = 30 * time.Second
)

const buckets = 10 // the window is counted in tenths

// Breaker is safe for concurrent use.
type Breaker struct {
	s   Settings
	now func() time.Time

	// onChange, when set, hears every open and close (to share them);
	// it is called without the lock held.
	onChange func(open bool, at time.Time)

	mu          sync.Mutex
	state       State
	consecutive int
	openedAt    time.Time
	probing     bool
	counts      [buckets]struct {
		slot      int64
		ok, fails int
	}
}

// New returns a closed breaker.
func New(s Settings) *Breaker {
	if s.Failures == 0 {
		s.Failures = DefaultFailures
	}
	if s.ErrorRate == 0 {
		s.ErrorRate = DefaultErrorRate
	}
	if s.Window == 0 {
		s.Window = DefaultWindow
	}
	if s.MinRequests == 0 {
		s.MinRequests = DefaultMinRequests
	}
	if s.Cooldown == 0 {
		s.Cooldown = DefaultCooldown
	}
	return &Breaker{s: s, now: clock.Now}
}

// Allow reports whether a request may go to the target now. In the
// half-open state it lets one probe through at a time; a caller that was
// allowed must call Done.
func (b *Breaker) Allow() bool {
	if b == nil {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.state {
	case Closed:
		return true
	case Open:
		if b.now().Sub(b.openedAt) < b.s.Cooldown {
			return false
		}
		b.state = HalfOpen
	}
	if b.probing {
		return false
	}
	b.probing = true
	return true
}

// Outcome is what an attempt tells the breaker.
type Outcome int

// Outcomes. Ignore releases a probe without a verdict (the client left).
const (
	Success Outcome = iota
	Failure
	Ignore
)

// Done records an allowed request's outcome.
func (b *Breaker) Done(o Outcome) {
	if b == nil {
		return
	}
	b.mu.Lock()
	was := b.state
	b.done(o)
	now, at := b.state, b.openedAt
	b.mu.Unlock()
	if b.onChange != nil {
		switch {
		case was != Open && now == Open:
			b.onChange(true, at)
		case was != Closed && now == Closed:
			b.onChange(false, b.now())
		}
	}
}

func (b *Breaker) done(o Outcome) {
	if b.state == HalfOpen {
		b.probing = false
		switch o {
		case Success:
			b.close()
			b.bucket().ok++ // the probe's answer: the target works (Recovering)
		case Failure:
			b.open()
		}
		return
	}
	if o == Ignore {
		return
	}
	c := b.bucket()
	if o == Success {
		c.ok++
		b.consecutive = 0
		return
	}
	c.fails++
	b.consecutive++
	if b.state == Closed && (b.consecutive >= b.s.Failures || b.rateExceeded()) {
		b.open()
	}
}

func (b *Breaker) open() {
	b.state, b.openedAt, b.consecutive = Open, b.now(), 0
}

func (b *Breaker) close() {
	b.state, b.consecutive = Closed, 0
	b.counts = [buckets]struct {
		slot      int64
		ok, fails int
	}{}
}

// bucket returns the current tenth of the window, emptied if it is stale.
func (b *Breaker) bucket() *struct {
	slot      int64
	ok, fails int
} {
	slot := b.now().UnixNano() / int64(b.s.Window/buckets)
	c := &b.counts[slot%buckets]
	if c.slot != slot {
		c.slot, c.ok, c.fails = slot, 0, 0
	}
	return c
}

// Recent counts the successes and failures this breaker saw in its
// window (Settings.Window, a minute by default) while closed: the
// target's recent error rate, on this replica.
func (b *Breaker) Recent() (ok, fails int) {
	if b == nil {
		return 0, 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.windowCounts()
}

// windowCounts sums the buckets still in the window.
func (b *Breaker) windowCounts() (ok, fails int) {
	slot := b.now().UnixNano() / int64(b.s.Window/buckets)
	for _, c := range b.counts {
		if slot-c.slot < buckets {
			ok, fails = ok+c.ok, fails+c.fails
		}
	}
	return ok, fails
}

func (b *Breaker) rateExceeded() bool {
	ok, fails := b.windowCounts()
	n := ok + fails
	return n >= b.s.MinRequests && float64(fails) >= b.s.ErrorRate*float64(n)
}

// Opened opens the breaker as of at, as another replica saw it; it
// changes nothing if the breaker is already open since then or later.
func (b *Breaker) Opened(at time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == Open && !b.openedAt.Before(at) {
		return
	}
	if b.now().Sub(at) >= b.s.Cooldown {
		return // its cooldown is already over
	}
	b.state, b.openedAt, b.consecutive, b.probing = Open, at, 0, false
}

// Closed closes the breaker, as another replica's probe found the target
// healthy at at; an open newer than that stays.
func (b *Breaker) Closed(at time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state != Closed && b.openedAt.Before(at) {
		b.close()
		b.probing = false
	}
}

// OnChange sets a function told of every open (true) and close (false).
func (b *Breaker) OnChange(f func(open bool, at time.Time)) { b.onChange = f }

// Recovering reports whether the target answered well at least once in
// the window: an open breaker on a target that still often works, not on
// one that is down.
func (b *Breaker) Recovering() bool {
	if b == nil {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	slot := b.now().UnixNano() / int64(b.s.Window/buckets)
	for _, c := range b.counts {
		if slot-c.slot < buckets && c.ok > 0 {
			return true
		}
	}
	return false
}

// State returns the breaker's state, an open one turning half-open once
// its cooldown is over.
func (b *Breaker) State() State {
	if b == nil {
		return Closed
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == Open && b.now().Sub(b.openedAt) >= b.s.Cooldown {
		return HalfOpen
	}
	return b.state
}
