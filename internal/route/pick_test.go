package route

import (
	"slices"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/breaker"
)

// model makes a model whose targets are named by names, each of its own
// priority (so the plan is their order), each with a breaker that opens
// after one failure and stays open an hour.
func model(maxAttempts int, deadline time.Duration, names ...string) *Model {
	m := &Model{Name: "m", MaxAttempts: maxAttempts, RetryDeadline: deadline}
	for i, n := range names {
		m.Targets = append(m.Targets, Target{Name: n, Weight: 1, Priority: i,
			Breaker: breaker.New(breaker.Settings{Failures: 1, Cooldown: time.Hour})})
	}
	m.tiers = tiers(m.Targets)
	return m
}

// picker starts a picker on a fake clock, with backoffs that take their
// whole bound.
func picker(m *Model) (*Picker, *time.Time) {
	now := time.Unix(1_000_000, 0)
	pk := m.Pick(now, 0)
	p := &pk
	p.Now = func() time.Time { return now }
	p.Jitter = func(d time.Duration) time.Duration { return d }
	return p, &now
}

type step struct {
	target  string
	wait    time.Duration
	outcome breaker.Outcome
	after   time.Duration // the upstream's retry-after
}

// run drives p as the gateway does, answering each target with the next
// step's outcome until one succeeds (the gateway stops at the first answer
// it does not retry), and returns the steps taken.
func run(t *testing.T, p *Picker, now *time.Time, outcomes []step) []step {
	t.Helper()
	var got []step
	for i := 0; ; i++ {
		tg, wait, ok := p.Next()
		if !ok {
			break
		}
		if i >= len(outcomes) {
			t.Fatalf("attempt %d (%s) past the script", i+1, tg.Name)
		}
		*now = now.Add(wait)
		s := outcomes[i]
		got = append(got, step{target: tg.Name, wait: wait, outcome: s.outcome, after: s.after})
		p.Done(s.outcome, s.after)
		if s.outcome == breaker.Success {
			break
		}
	}
	return got
}

func TestPicker(t *testing.T) {
	const F, S, I = breaker.Failure, breaker.Success, breaker.Ignore
	for _, tc := range []struct {
		name     string
		m        *Model
		setup    func(m *Model)
		outcomes []step
		want     []string
		waits    []time.Duration
	}{
		{name: "the first answers", m: model(3, time.Minute, "a", "b", "c"),
			outcomes: []step{{outcome: S}}, want: []string{"a"}, waits: []time.Duration{0}},
		{name: "failures move on at once, in plan order", m: model(3, time.Minute, "a", "b", "c"),
			outcomes: []step{{outcome: F}, {outcome: F}, {outcome: S}}, want: []string{"a", "b", "c"}, waits: []time.Duration{0, 0, 0}},
		{name: "max_attempts bounds the attempts", m: model(2, time.Minute, "a", "b", "c"),
			outcomes: []step{{outcome: F}, {outcome: F}}, want: []string{"a", "b"}, waits: []time.Duration{0, 0}},
		{name: "one target is tried again after a backoff", m: model(3, time.Minute, "a"),
			outcomes: []step{{outcome: I}, {outcome: I}, {outcome: S}}, want: []string{"a", "a", "a"},
			waits: []time.Duration{0, backoffBase, 2 * backoffBase}},
		{name: "retry-after is honoured", m: model(2, time.Minute, "a"),
			outcomes: []step{{outcome: I, after: 5 * time.Second}, {outcome: S}}, want: []string{"a", "a"},
			waits: []time.Duration{0, 5 * time.Second}},
		{name: "a retry-after past the deadline is not waited for", m: model(3, 10*time.Second, "a", "b"),
			outcomes: []step{{outcome: I, after: time.Minute}, {outcome: I, after: time.Minute}}, want: []string{"a", "b"},
			waits: []time.Duration{0, 0}},
		{name: "an open breaker is skipped", m: model(3, time.Minute, "a", "b"),
			setup:    func(m *Model) { m.Targets[0].Breaker.Allow(); m.Targets[0].Breaker.Done(F) },
			outcomes: []step{{outcome: S}}, want: []string{"b"}, waits: []time.Duration{0}},
		{name: "when every breaker is open the targets are tried anyway", m: model(3, time.Minute, "a", "b"),
			setup: func(m *Model) {
				for _, t := range m.Targets {
					t.Breaker.Allow()
					t.Breaker.Done(F)
				}
			},
			outcomes: []step{{outcome: F}, {outcome: S}}, want: []string{"a", "b"}, waits: []time.Duration{0, 0}},
		{name: "a flaky target skipped for its breaker is tried before the failed one again", m: model(3, time.Minute, "a", "b"),
			setup: func(m *Model) {
				b := m.Targets[1].Breaker // answered well once, then failed: open, but recovering
				b.Allow()
				b.Done(S)
				b.Allow()
				b.Done(F)
			},
			outcomes: []step{{outcome: F}, {outcome: S}}, want: []string{"a", "b"}, waits: []time.Duration{0, 0}},
		{name: "a down target is asked once per request while another answers well", m: model(4, time.Minute, "a", "dead"),
			setup: func(m *Model) {
				for i := range m.Targets { // breakers that stay closed, as before the failures add up
					m.Targets[i].Breaker = breaker.New(breaker.Settings{Failures: 100, MinRequests: 100})
				}
				m.tiers = tiers(m.Targets)
				answered(m.Targets[0].Breaker)
			},
			outcomes: []step{{outcome: F}, {outcome: F}, {outcome: F}, {outcome: S}}, want: []string{"a", "dead", "a", "a"},
			waits: []time.Duration{0, 0, backoffBase, 2 * backoffBase}},
		{name: "when every breaker is open a down target is not forced while another answered well", m: model(3, time.Minute, "dead", "a"),
			setup: func(m *Model) {
				answered(m.Targets[1].Breaker)
				for _, t := range m.Targets {
					t.Breaker.Allow()
					t.Breaker.Done(F)
				}
			},
			outcomes: []step{{outcome: F}, {outcome: S}}, want: []string{"a", "a"}, waits: []time.Duration{0, 2 * backoffBase}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.setup != nil {
				tc.setup(tc.m)
			}
			p, now := picker(tc.m)
			got := run(t, p, now, tc.outcomes)
			var names []string
			var waits []time.Duration
			for _, s := range got {
				names, waits = append(names, s.target), append(waits, s.wait)
			}
			if !slices.Equal(names, tc.want) || !slices.Equal(waits, tc.waits) {
				t.Errorf("tried %q after waits %v, want %q after %v", names, waits, tc.want, tc.waits)
			}
			if p.Attempts() != len(tc.want) {
				t.Errorf("Attempts() = %d, want %d", p.Attempts(), len(tc.want))
			}
		})
	}
}

// answered has b see one good answer.
func answered(b *breaker.Breaker) {
	b.Allow()
	b.Done(breaker.Success)
}

// A probe let through a half-open breaker is given back when the request
// abandons it, so the next request may probe.
func TestPickerAbandonReleasesTheProbe(t *testing.T) {
	m := model(1, time.Minute, "a")
	b := breaker.New(breaker.Settings{Failures: 1, Cooldown: time.Nanosecond})
	m.Targets[0].Breaker = b
	b.Allow()
	b.Done(breaker.Failure)
	time.Sleep(time.Millisecond) // past the cooldown: half-open
	p, _ := picker(m)
	if _, _, ok := p.Next(); !ok {
		t.Fatal("no target")
	}
	if b.Allow() {
		t.Fatal("a second probe was let through while the first was out")
	}
	p.Abandon()
	if !b.Allow() {
		t.Error("the abandoned probe was not given back")
	}
}
