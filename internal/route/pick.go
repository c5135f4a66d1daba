package route

import (
	"math/rand/v2"
	"time"

	"github.com/tollgate/tollgate/internal/affinity"
	"github.com/tollgate/tollgate/internal/breaker"
)

// Backoff between attempts on a target that already failed this request.
const (
	backoffBase = 100 * time.Millisecond
	backoffMax  = 2 * time.Second
)

// Picker chooses the targets one request tries, in the order of the
// model's plan, until one answers: a target whose circuit breaker is open
// is skipped without a network call, unless no target is left to try:
// then the open ones are tried too, rather than refusing while attempts
// remain. After a whole pass, the targets skipped for an open breaker that
// still answered well in its window are tried before any is tried again:
// a flaky target is a better bet than one that has just failed this
// request. A target that is down (not one good answer in its breaker's
// window) is asked at most once per request, and not forced past its open
// breaker, while another target of the plan answers well: attempts are
// better spent on a target that works 70% of the time than on one that
// refuses connections. Attempts stop at the model's max_attempts, and no
// attempt starts past its retry_deadline.
//
// Use: Next, wait as it says, try the target, and report with Done (or
// Abandon when the wait was cut short). A Picker is made per request and
// is not safe for concurrent use.
type Picker struct {
	m        *Model
	plan     []Target
	deadline time.Time
	// Now and Jitter are the clock and the random backoff; tests set them.
	Now    func() time.Time
	Jitter func(d time.Duration) time.Duration

	k, attempts, skipped int
	forced, untried      bool
	someUp               bool        // after the first pass: a target of the plan answered well in its window
	tried                []bool      // per place in the plan: tried by this request
	waitUntil            []time.Time // per place in the plan: not before, after a retry-after
	cur                  int         // place of the target last returned
	allowed              bool        // its breaker let it through (and waits for Done)
}

// Pick starts choosing targets for a request of conversation k (0: none)
// that arrived at start. The Picker is a value, so that it can live
// inside the request's own state.
func (m *Model) Pick(start time.Time, k affinity.Key) Picker {
	return Picker{m: m, plan: m.PlanFor(k), deadline: start.Add(m.RetryDeadline), Now: time.Now, Jitter: jitter}
}

func jitter(d time.Duration) time.Duration { return rand.N(d) }

// Attempts is how many targets Next has returned.
func (p *Picker) Attempts() int { return p.attempts }

// Next returns the next target to try and how long to wait before trying
// it; ok is false when no attempt is left.
func (p *Picker) Next() (t *Target, wait time.Duration, ok bool) {
	plan := p.plan
	for ; p.attempts < p.m.MaxAttempts && p.k < 4*len(plan)*p.m.MaxAttempts; p.k++ {
		k := p.k
		i := k % len(plan)
		t := &plan[i]
		if i == 0 && k > 0 {
			p.untried, p.someUp = false, false
			for j := range plan {
				up := plan[j].Breaker.Recovering()
				p.someUp = p.someUp || up
				p.untried = p.untried || up && !p.triedBefore(j)
			}
		}
		if p.skipped >= len(plan) {
			// A whole turn and nothing could be tried: every breaker is
			// open (or past the deadline). Rather than give up while
			// attempts remain, try the targets anyway, as a probe would.
			if p.forced || p.Now().After(p.deadline) {
				break
			}
			p.forced, p.skipped = true, 0
		}
		if p.untried || p.someUp { // set from the second pass on
			up := t.Breaker.Recovering()
			if p.untried && (p.triedBefore(i) || !up) {
				continue // a second pass: targets not yet tried that still often work
			}
			if !up && (p.triedBefore(i) || p.forced) {
				p.skipped++
				continue // down, and another target works: not asked again, nor forced
			}
		}
		allowed := t.Breaker.Allow()
		if !allowed && !p.forced && !p.untried {
			p.skipped++
			continue
		}
		wait = 0
		if p.attempts > 0 {
			if p.triedBefore(i) { // this target failed this request already: back off
				wait = p.Jitter(min(backoffBase<<max(k/len(plan)-1, 0), backoffMax))
			}
			if p.waitUntil != nil {
				wait = max(wait, p.waitUntil[i].Sub(p.Now()))
			}
			if p.Now().Add(wait).After(p.deadline) {
				if allowed {
					t.Breaker.Done(breaker.Ignore)
				}
				p.skipped++
				continue // this target cannot be tried in time; perhaps another can
			}
		}
		p.skipped = 0
		p.attempts++
		if len(plan) > 1 {
			if p.tried == nil {
				p.tried = make([]bool, len(plan))
			}
			p.tried[i] = true
		}
		p.cur, p.allowed = i, allowed
		p.k++
		return t, wait, true
	}
	return nil, 0, false
}

// triedBefore reports whether this request tried the target at place i.
func (p *Picker) triedBefore(i int) bool {
	if len(p.plan) == 1 {
		return p.attempts > 0
	}
	return p.tried != nil && p.tried[i]
}

// Done reports how the attempt at the last target went: its breaker's
// verdict, and the upstream's retry-after, if any, before which the
// target is not asked again.
func (p *Picker) Done(v breaker.Outcome, retryAfter time.Duration) {
	if p.allowed {
		p.plan[p.cur].Breaker.Done(v)
		p.allowed = false
	}
	if retryAfter > 0 {
		if p.waitUntil == nil {
			p.waitUntil = make([]time.Time, len(p.plan))
		}
		p.waitUntil[p.cur] = p.Now().Add(retryAfter)
	}
}

// Abandon gives the last target back untried (the client left while
// waiting for it).
func (p *Picker) Abandon() { p.Done(breaker.Ignore, 0) }
