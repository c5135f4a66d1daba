package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/store"
)

func newTestThrottle(clk *fakeClock, max int, proxies ...string) *Throttle {
	var ps []netip.Prefix
	for _, p := range proxies {
		ps = append(ps, netip.MustParsePrefix(p))
	}
	return NewThrottle(ThrottleOptions{MaxFailures: max, Window: time.Minute, TrustedProxies: ps, Now: clk.now})
}

func request(remote, key string, headers ...string) *http.Request {
	r, _ := http.NewRequest("POST", "/v1/messages", nil)
	r.RemoteAddr = remote
	if key != "" {
		r.Header.Set("X-Api-Key", key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Add(headers[i], headers[i+1])
	}
	return r
}

func TestThrottleFailedAuthentications(t *testing.T) {
	clk := &fakeClock{t: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	const master = "sk-master-0123456789abcdef0123456789"
	a := New(master, nil, WithThrottle(newTestThrottle(clk, 5)))
	for i := 0; i < 5; i++ {
		if _, err := a.Check(request("203.0.113.9:4000", "sk-guess")); !errors.Is(err, ErrInvalidKey) {
			t.Fatalf("failure %d: %v", i+1, err)
		}
		if i < 4 {
			clk.add(time.Second)
		}
	}
	// The key that failed is refused from that address, unchecked.
	_, err := a.Check(request("203.0.113.9:4001", "sk-guess"))
	ra, ok := RetryAfter(err)
	if !errors.Is(err, ErrThrottled) || !ok || Status(err) != http.StatusTooManyRequests || ra != time.Minute || Reason(err) != "throttled" {
		t.Fatalf("after 5 failures: %v (retry after %v, status %d)", err, ra, Status(err))
	}
	// A valid key from the same address (another client behind the same
	// NAT or proxy) still works, and so does the bad key from another
	// address; missing and malformed keys are not failures of a guess.
	if p, err := a.Check(request("203.0.113.9:4002", master)); err != nil || !p.Master {
		t.Fatalf("the master key from the same address: %v", err)
	}
	if _, err := a.Check(request("203.0.113.10:4000", "sk-guess")); !errors.Is(err, ErrInvalidKey) || errors.Is(err, ErrThrottled) {
		t.Fatalf("another address: %v", err)
	}
	for i := 0; i < 10; i++ {
		a.Check(request("198.51.100.1:1", ""))
		a.Check(request("198.51.100.1:1", "", "Authorization", "Basic eDp5"))
		a.Check(request("198.51.100.1:1", "", "X-Api-Key", "a", "X-Api-Key", "b"))
	}
	if _, err := a.Check(request("198.51.100.1:1", "sk-guess")); !errors.Is(err, ErrInvalidKey) {
		t.Fatalf("missing or malformed keys counted as failures: %v", err)
	}
	// The refusal ends after the window.
	clk.add(59 * time.Second)
	_, err = a.Check(request("203.0.113.9:4000", "sk-guess"))
	if !errors.Is(err, ErrThrottled) {
		t.Fatalf("within the window: %v", err)
	}
	if ra, _ := RetryAfter(err); ra != time.Second {
		t.Errorf("retry after %v, want 1s", ra)
	}
	clk.add(time.Second)
	if _, err := a.Check(request("203.0.113.9:4000", "sk-guess")); !errors.Is(err, ErrInvalidKey) || errors.Is(err, ErrThrottled) {
		t.Fatalf("after the window: %v", err)
	}
	// Failures spread wider than the window never add up.
	for i := 0; i < 20; i++ {
		a.Check(request("192.0.2.1:1", "sk-guess"))
		clk.add(13 * time.Second)
	}
	if _, err := a.Check(request("192.0.2.1:1", "sk-guess")); errors.Is(err, ErrThrottled) {
		t.Fatalf("4 failures a minute with a limit of 5: %v", err)
	}
}

// A guesser trying a new key each time from one address is slowed to
// MaxFailures checks a window (and as many database queries), while the
// valid keys of others at that address keep working: those known valid
// at once, and one the replica has not seen at its turn.
func TestThrottleSlowsRotatingGuesses(t *testing.T) {
	c, fs, clk := newTestCache(t)
	const master = "sk-master-0123456789abcdef0123456789"
	const max = 20
	a := New(master, c, WithThrottle(newTestThrottle(clk, max)))
	used := createKey(t, fs.Store, store.Key{Name: "in use"})
	fresh := createKey(t, fs.Store, store.Key{Name: "not seen yet"})
	if _, err := a.Check(request("203.0.113.9:1", used)); err != nil {
		t.Fatal(err)
	}
	guess := 0
	try := func() error {
		guess++
		_, err := a.Check(request("203.0.113.9:1", fmt.Sprintf("%sguess-%d", SecretPrefix, guess)))
		return err
	}
	for i := 0; i < max; i++ {
		if err := try(); !errors.Is(err, ErrInvalidKey) {
			t.Fatalf("guess %d: %v", i+1, err)
		}
	}
	// The address is slowed: its next unknown key is checked, the others
	// are refused until the turn after.
	if err := try(); !errors.Is(err, ErrInvalidKey) {
		t.Fatalf("the first guess of a slowed address: %v", err)
	}
	before := fs.lookups.Load()
	for i := 0; i < 100; i++ {
		err := try()
		if ra, ok := RetryAfter(err); !errors.Is(err, ErrThrottled) || !ok || ra != 3*time.Second {
			t.Fatalf("guess %d after the address failed %d times: %v (retry after %v)", guess, max, err, ra)
		}
	}
	if n := fs.lookups.Load() - before; n != 0 {
		t.Errorf("refused guesses queried the database %d times", n)
	}
	// Valid keys known at once still work: the master key and a key in use.
	for _, k := range []string{master, used} {
		if _, err := a.Check(request("203.0.113.9:2", k)); err != nil {
			t.Fatalf("a valid key from the slowed address: %v", err)
		}
	}
	// A key made since the replica last read the digests of the keys that
	// exist (on another replica) is checked at the address's next turn.
	if _, err := a.Check(request("203.0.113.9:2", fresh)); !errors.Is(err, ErrThrottled) {
		t.Fatalf("a key not seen yet before its turn: %v", err)
	}
	clk.add(3 * time.Second)
	if _, err := a.Check(request("203.0.113.9:2", fresh)); err != nil {
		t.Fatalf("a key not seen yet at its turn: %v", err)
	}
	// Once the digests are read again (every 30 s), every key that exists
	// works from the slowed address, used here or not, however fast a
	// guesser sharing the address takes its turns.
	other := createKey(t, fs.Store, store.Key{Name: "made elsewhere, never used here"})
	c.readDigests(context.Background())
	for i := range 50 {
		try()
		if _, err := a.Check(request("203.0.113.9:3", other)); err != nil {
			t.Fatalf("a key that exists, beside guess %d: %v", i, err)
		}
	}
	// Over a minute of guessing as fast as it can, the address gets
	// max guesses checked.
	checked := 0
	for range 600 {
		clk.add(100 * time.Millisecond)
		for range 10 {
			if err := try(); errors.Is(err, ErrInvalidKey) {
				checked++
			} else if !errors.Is(err, ErrThrottled) {
				t.Fatal(err)
			}
		}
	}
	t.Logf("%d guesses checked in a minute", checked)
	if checked > max+1 {
		t.Errorf("%d guesses checked in a minute, want at most %d", checked, max+1)
	}
	if _, err := a.Check(request("203.0.113.9:2", master)); err != nil {
		t.Fatalf("the master key after a minute of guessing: %v", err)
	}
}

// IPv6 clients are counted by /64: one subscriber cannot get a fresh
// count from each of its addresses.
func TestThrottleCountsIPv6By64(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1e9, 0)}
	th := newTestThrottle(clk, 3)
	for i := 1; i <= 3; i++ {
		th.Fail(netip.MustParseAddr(fmt.Sprintf("2001:db8:1:2::%x", i)), 7)
	}
	if err := th.Check(netip.MustParseAddr("2001:db8:1:2:ffff::1"), 7, false); !errors.Is(err, ErrThrottled) {
		t.Errorf("same /64: %v", err)
	}
	if err := th.Check(netip.MustParseAddr("2001:db8:1:3::1"), 7, false); err != nil {
		t.Errorf("another /64: %v", err)
	}
	if err := th.Check(netip.Addr{}, 7, false); err != nil {
		t.Errorf("an unknown peer is never refused: %v", err)
	}
}

// A flood of addresses and keys cannot grow the table past its bound,
// and refused entries are the last to be dropped.
func TestThrottleIsBounded(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1e9, 0)}
	th := NewThrottle(ThrottleOptions{MaxFailures: 2, Window: time.Minute, MaxEntries: 100, Now: clk.now})
	bad := netip.MustParseAddr("192.0.2.1")
	th.Fail(bad, 1)
	th.Fail(bad, 1)
	for i := 0; i < 10_000; i++ {
		th.Fail(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), Credential(2*i+3))
		th.Fail(bad, Credential(2*i+3)) // one address, many keys
	}
	if n := th.Len(); n > 100 {
		t.Fatalf("%d entries tracked, bound 100", n)
	}
	if err := th.Check(bad, 1, true); !errors.Is(err, ErrThrottled) {
		t.Errorf("the refused key was dropped by the flood: %v", err)
	}
	th.Check(bad, 5, false) // the address's turn
	if err := th.Check(bad, 7, false); !errors.Is(err, ErrThrottled) {
		t.Errorf("the slowed address was dropped by the flood: %v", err)
	}
	// Once the window is over, a sweep empties the table.
	clk.add(2 * time.Minute)
	th.Fail(netip.MustParseAddr("192.0.2.2"), 1)
	if n := th.Len(); n != 2 {
		t.Errorf("%d entries after the window, want 2 (an address and its key)", n)
	}
}

func TestClientAddr(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}
	for _, tc := range []struct {
		name, remote string
		xff          []string
		trusted      []netip.Prefix
		want         string
	}{
		{"peer", "203.0.113.9:4000", nil, nil, "203.0.113.9"},
		{"forwarded-for ignored without trusted proxies", "203.0.113.9:4000", []string{"1.2.3.4"}, nil, "203.0.113.9"},
		{"forwarded-for ignored from an untrusted peer", "203.0.113.9:4000", []string{"1.2.3.4"}, trusted, "203.0.113.9"},
		{"trusted proxy", "10.0.0.2:80", []string{"198.51.100.7"}, trusted, "198.51.100.7"},
		{"client-written entries are skipped", "10.0.0.2:80", []string{"1.2.3.4, 198.51.100.7, 10.0.0.3"}, trusted, "198.51.100.7"},
		{"several headers", "10.0.0.2:80", []string{"1.2.3.4", "198.51.100.7", "10.9.9.9"}, trusted, "198.51.100.7"},
		{"garbage stops at the last trusted hop", "10.0.0.2:80", []string{"198.51.100.7, nonsense"}, trusted, "10.0.0.2"},
		{"only proxies", "10.0.0.2:80", []string{"10.0.0.5"}, trusted, "10.0.0.5"},
		{"no header", "10.0.0.2:80", nil, trusted, "10.0.0.2"},
		{"ipv6 peer", "[2001:db8::1]:443", nil, nil, "2001:db8::1"},
		{"ipv6 through a proxy", "[fd00::1]:443", []string{"[2001:db8::5]:1234"}, trusted, "2001:db8::5"},
		{"ipv4-mapped", "[::ffff:203.0.113.9]:1", nil, nil, "203.0.113.9"},
		{"unknown peer", "", nil, nil, "invalid IP"},
	} {
		r := request(tc.remote, "")
		for _, v := range tc.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		if got := ClientAddr(r, tc.trusted).String(); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestRetryAfterRoundsUp(t *testing.T) {
	for in, want := range map[time.Duration]time.Duration{0: time.Second, 1: time.Second, 1500 * time.Millisecond: 2 * time.Second, time.Minute: time.Minute} {
		if got, ok := RetryAfter(fmt.Errorf("x: %w", &ThrottledError{RetryAfter: in})); !ok || got != want {
			t.Errorf("RetryAfter(%v) = %v, want %v", in, got, want)
		}
	}
	if _, ok := RetryAfter(ErrInvalidKey); ok {
		t.Error("RetryAfter of another error")
	}
	if NewThrottle(ThrottleOptions{MaxFailures: 0, Window: time.Minute}) != nil {
		t.Error("MaxFailures 0 is no throttle")
	}
}

func BenchmarkCheckWithThrottle(b *testing.B) {
	th := NewThrottle(ThrottleOptions{MaxFailures: 20, Window: time.Minute})
	a := New("sk-master-0123456789abcdef0123456789", nil, WithThrottle(th))
	r := request("203.0.113.9:4000", "sk-master-0123456789abcdef0123456789")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := a.Check(r); err != nil {
				b.Fatal(err)
			}
		}
	})
}
