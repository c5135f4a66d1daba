package auth

import (
	"errors"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tollgate/tollgate/internal/clock"
)

// ThrottledError is the error Check returns for a client address that
// failed to authenticate too often. It matches ErrThrottled.
type ThrottledError struct {
	// RetryAfter is how long the address stays refused.
	RetryAfter time.Duration
}

func (e *ThrottledError) Error() string        { return ErrThrottled.Error() }
func (e *ThrottledError) Is(target error) bool { return target == ErrThrottled }

// RetryAfter returns how long a throttled client is to wait, rounded up
// to whole seconds as a retry-after header gives it (at least 1), and
// whether err is ErrThrottled at all.
func RetryAfter(err error) (time.Duration, bool) {
	var te *ThrottledError
	if !errors.As(err, &te) {
		return 0, errors.Is(err, ErrThrottled)
	}
	d := max(te.RetryAfter, time.Second)
	return (d + time.Second - 1).Truncate(time.Second), true
}

// ThrottleOptions configure a Throttle.
type ThrottleOptions struct {
	// MaxFailures failed authentications from one address within Window
	// get the address refused for Window.
	MaxFailures int
	Window      time.Duration
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names
	// the client; without them the client is the connection's peer.
	TrustedProxies []netip.Prefix
	// MaxAddresses bounds the addresses tracked (default 100 000, a few
	// MB); when it is reached, addresses that are not refused are dropped
	// first.
	MaxAddresses int
	// Now is the clock (default clock.Now).
	Now func() time.Time
}

// DefaultMaxAddresses is ThrottleOptions.MaxAddresses's default.
const DefaultMaxAddresses = 100_000

// Throttle counts failed authentications per client address and refuses
// an address that failed too often. IPv6 clients are counted by /64, the
// block one subscriber usually holds. It lives in memory, per process,
// bounded in size. It is safe for concurrent use.
type Throttle struct {
	max     int
	window  time.Duration
	proxies []netip.Prefix
	limit   int
	now     func() time.Time

	// until is the end (unix nanoseconds) of the latest refusal: while it
	// is past, no address is refused and Check takes no lock.
	until atomic.Int64

	mu        sync.Mutex
	addrs     map[netip.Addr]*failures
	lastSweep time.Time
}

type failures struct {
	count int
	start time.Time // of the counting window
	until time.Time // refused before this
}

// NewThrottle returns a throttle, or nil (no throttle) when MaxFailures or
// Window is not positive.
func NewThrottle(o ThrottleOptions) *Throttle {
	if o.MaxFailures <= 0 || o.Window <= 0 {
		return nil
	}
	if o.MaxAddresses <= 0 {
		o.MaxAddresses = DefaultMaxAddresses
	}
	if o.Now == nil {
		o.Now = clock.Now
	}
	return &Throttle{max: o.MaxFailures, window: o.Window, proxies: o.TrustedProxies, limit: o.MaxAddresses,
		now: o.Now, addrs: map[netip.Addr]*failures{}}
}

// ClientAddr is the request's client address as the throttle counts it.
func (t *Throttle) ClientAddr(r *http.Request) netip.Addr { return ClientAddr(r, t.proxies) }

// refusing reports whether any address may be refused now; while none
// is, requests need not look their address up.
func (t *Throttle) refusing() bool { return t.now().UnixNano() < t.until.Load() }

// Check returns a *ThrottledError while addr is refused. An invalid
// address (the peer is unknown) is never refused.
func (t *Throttle) Check(addr netip.Addr) error {
	now := t.now()
	if !addr.IsValid() || now.UnixNano() >= t.until.Load() {
		return nil
	}
	key := throttleKey(addr)
	t.mu.Lock()
	defer t.mu.Unlock()
	if f := t.addrs[key]; f != nil && now.Before(f.until) {
		return &ThrottledError{RetryAfter: f.until.Sub(now)}
	}
	return nil
}

// Fail counts a failed authentication from addr.
func (t *Throttle) Fail(addr netip.Addr) {
	if !addr.IsValid() {
		return
	}
	now := t.now()
	key := throttleKey(addr)
	t.mu.Lock()
	defer t.mu.Unlock()
	if now.Sub(t.lastSweep) >= t.window {
		t.sweep(now)
	}
	f := t.addrs[key]
	if f == nil {
		if len(t.addrs) >= t.limit {
			t.evict(now)
		}
		f = &failures{start: now}
		t.addrs[key] = f
	}
	if now.Sub(f.start) >= t.window {
		f.count, f.start = 0, now
	}
	f.count++
	if f.count >= t.max {
		f.count, f.start, f.until = 0, now, now.Add(t.window)
		if u := f.until.UnixNano(); u > t.until.Load() {
			t.until.Store(u)
		}
	}
}

// sweep drops the addresses whose counting window and refusal are over.
func (t *Throttle) sweep(now time.Time) {
	t.lastSweep = now
	for k, f := range t.addrs {
		if now.Sub(f.start) >= t.window && !now.Before(f.until) {
			delete(t.addrs, k)
		}
	}
}

// evict makes room for one address: one that is over if the last sweep
// is a second old, else one that is not refused among a few, else any.
func (t *Throttle) evict(now time.Time) {
	if now.Sub(t.lastSweep) >= time.Second {
		t.sweep(now)
		if len(t.addrs) < t.limit {
			return
		}
	}
	var victim netip.Addr
	seen := 0
	for k, f := range t.addrs { // map order is random
		if !victim.IsValid() || !now.Before(f.until) {
			victim = k
		}
		if seen++; !now.Before(f.until) || seen == 16 {
			break
		}
	}
	delete(t.addrs, victim)
}

// Len is the number of addresses tracked.
func (t *Throttle) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.addrs)
}

// throttleKey counts an IPv6 client by its /64.
func throttleKey(a netip.Addr) netip.Addr {
	a = a.Unmap().WithZone("")
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.Addr()
	}
	return a
}

// ClientAddr returns the address of the client that sent r: the peer of
// the connection (r.RemoteAddr), unless the peer is one of the trusted
// proxies. Then X-Forwarded-For is read from the right, skipping trusted
// proxies, and the first other address is the client's; addresses left
// of it were written by the client and are never believed. The zero Addr
// means the peer is unknown.
func ClientAddr(r *http.Request, trusted []netip.Prefix) netip.Addr {
	peer := parseHostAddr(r.RemoteAddr)
	if !peer.IsValid() || !inPrefixes(peer, trusted) {
		return peer
	}
	hops := r.Header.Values("X-Forwarded-For")
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		list := hops[i]
		for list != "" {
			var hop string
			if j := strings.LastIndexByte(list, ','); j >= 0 {
				list, hop = list[:j], list[j+1:]
			} else {
				list, hop = "", list
			}
			a := parseHostAddr(strings.TrimSpace(hop))
			if !a.IsValid() {
				return client // not written by a trusted proxy: stop at the last one known
			}
			client = a
			if !inPrefixes(a, trusted) {
				return a
			}
		}
	}
	return client
}

// parseHostAddr reads "ip", "ip:port" or "[ip]:port".
func parseHostAddr(s string) netip.Addr {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap()
	}
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")); err == nil {
		return a.Unmap()
	}
	return netip.Addr{}
}

func inPrefixes(a netip.Addr, ps []netip.Prefix) bool {
	a = a.WithZone("")
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
