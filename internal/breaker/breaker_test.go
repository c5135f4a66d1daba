package breaker

import (
	"testing"
	"time"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func newAt(s Settings) (*Breaker, *fakeClock) {
	c := &fakeClock{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	b := New(s)
	b.now = c.now
	return b, c
}

func TestConsecutiveFailuresOpenAndAProbeCloses(t *testing.T) {
	b, c := newAt(Settings{Failures: 3, Cooldown: 10 * time.Second})
	for i := 0; i < 2; i++ {
		b.Allow()
		b.Done(Failure)
	}
	b.Allow()
	b.Done(Success) // a success resets the run
	for i := 0; i < 3; i++ {
		if !b.Allow() {
			t.Fatalf("closed breaker refused request %d", i)
		}
		b.Done(Failure)
	}
	if b.State() != Open || b.Allow() {
		t.Fatalf("after 3 failures: %s", b.State())
	}
	c.t = c.t.Add(10 * time.Second)
	if b.State() != HalfOpen || !b.Allow() {
		t.Fatal("no probe after the cooldown")
	}
	if b.Allow() {
		t.Fatal("a second probe while the first runs")
	}
	b.Done(Failure) // the probe failed: open again, for a new cooldown
	if b.State() != Open || b.Allow() {
		t.Fatalf("after a failed probe: %s", b.State())
	}
	c.t = c.t.Add(10 * time.Second)
	b.Allow()
	b.Done(Success)
	if b.State() != Closed || !b.Allow() {
		t.Fatalf("after a good probe: %s", b.State())
	}
}

func TestErrorRateOpens(t *testing.T) {
	b, c := newAt(Settings{Failures: 100, ErrorRate: 0.5, MinRequests: 10, Window: 10 * time.Second})
	for i := 0; i < 9; i++ { // 4 failures of 9: under the minimum
		b.Allow()
		if i%2 == 0 {
			b.Done(Success)
		} else {
			b.Done(Failure)
		}
		c.t = c.t.Add(100 * time.Millisecond)
	}
	if b.State() != Closed {
		t.Fatal("opened under the minimum of requests")
	}
	b.Allow()
	b.Done(Failure) // 5 of 10
	if b.State() != Open {
		t.Fatalf("5 failures of 10 at 50%%: %s", b.State())
	}
	// Old outcomes leave the window.
	b2, c2 := newAt(Settings{Failures: 100, ErrorRate: 0.5, MinRequests: 10, Window: 10 * time.Second})
	for i := 0; i < 9; i++ {
		b2.Allow()
		b2.Done(Failure)
	}
	c2.t = c2.t.Add(11 * time.Second)
	b2.Allow()
	b2.Done(Failure)
	if b2.State() != Closed {
		t.Fatal("failures older than the window counted")
	}
}

func TestIgnoreReleasesTheProbe(t *testing.T) {
	b, c := newAt(Settings{Failures: 1, Cooldown: time.Second})
	b.Allow()
	b.Done(Failure)
	c.t = c.t.Add(time.Second)
	b.Allow()
	b.Done(Ignore)
	if !b.Allow() {
		t.Fatal("an ignored probe kept the breaker from probing again")
	}
}

func TestNilBreakerAllows(t *testing.T) {
	var b *Breaker
	if !b.Allow() || b.State() != Closed {
		t.Fatal("nil breaker")
	}
	b.Done(Failure)
}

func TestRecentCountsTheWindow(t *testing.T) {
	b, c := newAt(Settings{Failures: 100, MinRequests: 1000, Window: 10 * time.Second})
	for i := range 6 {
		b.Allow()
		if i%3 == 0 {
			b.Done(Failure)
		} else {
			b.Done(Success)
		}
		c.t = c.t.Add(time.Second)
	}
	if ok, fails := b.Recent(); ok != 4 || fails != 2 {
		t.Fatalf("recent: %d ok, %d failed; want 4 and 2", ok, fails)
	}
	c.t = c.t.Add(6 * time.Second) // at 12 s: the outcomes of 0 s to 2 s have left the window
	if ok, fails := b.Recent(); ok != 2 || fails != 1 {
		t.Fatalf("at 12 s: %d ok, %d failed; want 2 and 1", ok, fails)
	}
	if ok, fails := (*Breaker)(nil).Recent(); ok != 0 || fails != 0 {
		t.Fatal("a nil breaker saw requests")
	}
}

// Recovering tells a target that still answers well from one that is
// down: a success in the window, or a probe that closed the breaker.
func TestRecovering(t *testing.T) {
	b, c := newAt(Settings{Failures: 2, Cooldown: 10 * time.Second, Window: 20 * time.Second})
	if b.Recovering() {
		t.Fatal("a breaker that saw nothing is recovering")
	}
	b.Allow()
	b.Done(Success)
	for range 2 {
		b.Allow()
		b.Done(Failure)
	}
	if b.State() != Open || !b.Recovering() {
		t.Fatalf("open after answering well once: state %v, recovering %v; want open and recovering", b.State(), b.Recovering())
	}
	c.t = c.t.Add(25 * time.Second) // the success has left the window
	if b.Recovering() {
		t.Fatal("recovering on a success older than the window")
	}
	if !b.Allow() {
		t.Fatal("no probe after the cooldown")
	}
	b.Done(Success)
	if b.State() != Closed || !b.Recovering() {
		t.Fatalf("after a good probe: state %v, recovering %v; want closed and recovering", b.State(), b.Recovering())
	}
	if ok, fails := b.Recent(); ok != 1 || fails != 0 {
		t.Fatalf("after a good probe: %d ok, %d failed; want the probe's 1 and 0", ok, fails)
	}
}
