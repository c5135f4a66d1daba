package auth

import (
	"crypto/sha256"
	"encoding/binary"
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
	// MaxFailures failed authentications of one credential from one
	// address within Window get that credential refused from that address
	// for Window; as many failures of any credentials from one address get
	// the address slowed for Window.
	MaxFailures int
	Window      time.Duration
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names
	// the client; without them the client is the connection's peer.
	TrustedProxies []netip.Prefix
	// MaxEntries bounds the addresses and address-credential pairs
	// tracked (default 100 000, about 20 MB); when it is reached, entries
	// that refuse nothing are dropped first.
	MaxEntries int
	// Now is the clock (default clock.Now).
	Now func() time.Time
}

// DefaultMaxEntries is ThrottleOptions.MaxEntries's default.
const DefaultMaxEntries = 100_000

// Throttle counts failed authentications per client address and presented
// credential, so that a guesser is slowed while the valid keys of
// everyone else behind the same address (a NAT, a proxy) keep working:
//
//   - a credential that failed MaxFailures times from one address within
//     Window is refused from that address for Window, unchecked;
//   - an address whose credentials failed MaxFailures times within Window
//     (a guesser trying a new one each time) is slowed until a Window
//     has passed without a failure from it: a credential from it that is
//     known valid without a database query (the master key; a virtual
//     key the key cache holds) is checked as usual, any other is checked
//     at most once per Window/MaxFailures and refused unchecked in
//     between, so that the address's failures, and the database queries
//     they cost, stay at MaxFailures a Window.
//
// A valid credential is never refused for its address's failures while
// it is known valid, so a refusal tells a guesser only what a failure
// would; that is safe because every valid credential is a long random
// secret (config.MinMasterKeyLen, NewSecret). A valid key the replica has
// not seen lately waits, from a slowed address, for its next check.
//
// IPv6 clients are counted by /64, the block one subscriber usually
// holds. The throttle lives in memory, per process, bounded in size. It
// is safe for concurrent use.
type Throttle struct {
	max      int
	window   time.Duration
	interval time.Duration // between the unknown credentials checked from a slowed address
	proxies  []netip.Prefix
	limit    int
	now      func() time.Time

	// until is the end (unix nanoseconds) of the latest refusal: while it
	// is past, nothing is refused and Check takes no lock.
	until atomic.Int64

	mu        sync.Mutex
	entries   map[entryKey]*failures
	lastSweep time.Time
}

// entryKey is an address's count (cred 0) or an address-credential pair's.
type entryKey struct {
	addr netip.Addr
	cred Credential
}

type failures struct {
	count int
	start time.Time // of the counting window
	until time.Time // refused (a pair) or slowed (an address) before this
	next  time.Time // a slowed address: when its next unknown credential may be checked
}

// Credential identifies a presented credential in the throttle: 64 bits
// of its SHA-256 digest (never 0), so that a pair's entry holds no
// secret, and a guesser cannot aim a collision at a key it does not know.
type Credential uint64

// CredentialOf is the Credential of a key with this SHA-256 digest.
func CredentialOf(sum [sha256.Size]byte) Credential {
	return Credential(binary.LittleEndian.Uint64(sum[:]) | 1)
}

// NewThrottle returns a throttle, or nil (no throttle) when MaxFailures or
// Window is not positive.
func NewThrottle(o ThrottleOptions) *Throttle {
	if o.MaxFailures <= 0 || o.Window <= 0 {
		return nil
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = DefaultMaxEntries
	}
	if o.Now == nil {
		o.Now = clock.Now
	}
	return &Throttle{max: o.MaxFailures, window: o.Window, interval: o.Window / time.Duration(o.MaxFailures),
		proxies: o.TrustedProxies, limit: o.MaxEntries, now: o.Now, entries: map[entryKey]*failures{}}
}

// ClientAddr is the request's client address as the throttle counts it.
func (t *Throttle) ClientAddr(r *http.Request) netip.Addr { return ClientAddr(r, t.proxies) }

// refusing reports whether anything may be refused now; while nothing
// is, requests need not look their address up.
func (t *Throttle) refusing() bool { return t.now().UnixNano() < t.until.Load() }

// Check returns a *ThrottledError when cred, presented from addr, is not
// to be checked now: it failed too often from there, or addr is slowed
// and cred is not known valid (knownValid: it can be told valid without a
// database query) and the address's next check is not due. A check it
// lets through from a slowed address takes the address's turn. An
// invalid address (the peer is unknown) is never refused.
func (t *Throttle) Check(addr netip.Addr, cred Credential, knownValid bool) error {
	now := t.now()
	if !addr.IsValid() || now.UnixNano() >= t.until.Load() {
		return nil
	}
	addr = addrKey(addr)
	t.mu.Lock()
	defer t.mu.Unlock()
	if p := t.entries[entryKey{addr, cred}]; p != nil && now.Before(p.until) {
		return &ThrottledError{RetryAfter: p.until.Sub(now)}
	}
	a := t.entries[entryKey{addr: addr}]
	if a == nil || !now.Before(a.until) || knownValid {
		return nil
	}
	if now.Before(a.next) {
		return &ThrottledError{RetryAfter: a.next.Sub(now)}
	}
	a.next = now.Add(t.interval)
	return nil
}

// Fail counts a failed authentication of cred from addr.
func (t *Throttle) Fail(addr netip.Addr, cred Credential) {
	if !addr.IsValid() {
		return
	}
	now := t.now()
	addr = addrKey(addr)
	t.mu.Lock()
	defer t.mu.Unlock()
	if now.Sub(t.lastSweep) >= t.window {
		t.sweep(now)
	}
	t.count(entryKey{addr, cred}, now)
	t.count(entryKey{addr: addr}, now)
}

// count counts a failure of one entry, and refuses (slows) it for a
// window when it failed too often, or failed again while refused: an
// address that keeps failing at its turns stays slowed.
func (t *Throttle) count(k entryKey, now time.Time) {
	f := t.entries[k]
	if f == nil {
		if len(t.entries) >= t.limit {
			t.evict(now)
		}
		f = &failures{start: now}
		t.entries[k] = f
	}
	if now.Sub(f.start) >= t.window {
		f.count, f.start = 0, now
	}
	f.count++
	if f.count >= t.max || now.Before(f.until) {
		f.count, f.start, f.until = 0, now, now.Add(t.window)
		if u := f.until.UnixNano(); u > t.until.Load() {
			t.until.Store(u)
		}
	}
}

// sweep drops the entries whose counting window and refusal are over.
func (t *Throttle) sweep(now time.Time) {
	t.lastSweep = now
	for k, f := range t.entries {
		if now.Sub(f.start) >= t.window && !now.Before(f.until) {
			delete(t.entries, k)
		}
	}
}

// evict makes room for one entry: one that is over if the last sweep is
// a second old, else one that refuses nothing among a few, else any.
func (t *Throttle) evict(now time.Time) {
	if now.Sub(t.lastSweep) >= time.Second {
		t.sweep(now)
		if len(t.entries) < t.limit {
			return
		}
	}
	var victim entryKey
	found, seen := false, 0
	for k, f := range t.entries { // map order is random
		if !found || !now.Before(f.until) {
			victim, found = k, true
		}
		if seen++; !now.Before(f.until) || seen == 16 {
			break
		}
	}
	delete(t.entries, victim)
}

// Len is the number of entries tracked (addresses and pairs).
func (t *Throttle) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.entries)
}

// addrKey counts an IPv6 client by its /64.
// AddrKey is the part of a client's address that limits count by: the
// address, or for IPv6 its /64 (what one host usually holds).
func AddrKey(a netip.Addr) netip.Addr { return addrKey(a) }

func addrKey(a netip.Addr) netip.Addr {
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
