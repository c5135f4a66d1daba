// Package limiter enforces rate limits, concurrency limits and USD budgets
// (the values of package limit).
//
// A request is admitted against every scope that applies to it (its key,
// its key for this model, and the model across all keys) in one atomic
// step: either every counter takes the request or none does. Admission
// reserves the request's worst case (tokens and cost); Settle replaces the
// reservation with what the request actually used.
//
// Two back ends implement the same rules: Memory, for one replica, and
// Redis, where every counter lives in Redis and is changed by Lua scripts,
// so that any number of replicas enforce one limit.
package limiter

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tollgate/tollgate/internal/limit"
	"github.com/tollgate/tollgate/internal/units"
)

// Scope is one holder of counters with its limits: a key, a key for one
// model, or a model across all keys.
type Scope struct {
	// Name identifies the counters; it must be the same on every replica.
	Name   string
	Limits limit.Limits
	// KeyID and Models select this scope's spend in the ledger, to reload
	// a budget's counter: "" is every key, nil every model.
	KeyID  string
	Models []string
	// UserID or TeamID, when set, select a user's or a team's spend
	// instead of a key's (through a HolderSpender).
	UserID, TeamID string
}

// Request is what one request asks of its scopes.
type Request struct {
	// ID is unique per request (its request id); it names its leases.
	ID     string
	Scopes []Scope
	// Tokens is the reservation against tpm limits: the estimated input
	// plus the most output the request may produce.
	Tokens int64
	// Cost is the reservation against budgets in nano-USD: the worst case.
	Cost int64
	// OutputParam names the request's output limit in its protocol
	// (max_tokens, max_output_tokens…), for refusals ("" is max_tokens).
	OutputParam string
	// InputOnly: the request makes no output (embeddings); its
	// reservation is its estimated input alone.
	InputOnly bool
	// OutputDefault is the output reserved for a request that set no
	// output limit (the model's most); 0 when the request set one.
	OutputDefault int64
	// Both may take any value: a negative one (an overflowed sum) counts
	// as more than any limit, as does one past 2^53, so such a request is
	// refused as too large.
}

// Used is what a request actually used, given at settlement.
type Used struct {
	Tokens int64 // as counted for tpm limits
	Cost   int64 // nano-USD
	// Negative usage counts as none; usage past 2^53 as 2^53.
}

// What names a kind of limit.
type What string

// The kinds of limit.
const (
	Requests What = "requests"
	Tokens   What = "tokens"
	Parallel What = "parallel"
	Budget   What = "budget"
)

// Quota is the state of the tightest limit of one kind, for response headers.
type Quota struct {
	Limit     int64
	Remaining int64
	// Reserved, for a budget, is what the admitted request holds against
	// it until it is settled at its actual cost: its worst case. Remaining
	// is then what was left before it (the limit less what was spent and
	// what other requests in flight hold), not after its worst case.
	Reserved int64
	// Reset is when the limit is whole again; zero when unknown or never.
	Reset time.Time
}

// Status is what the response headers show: the tightest limit of each
// kind that applied to the request, after it was admitted (or refused).
type Status struct {
	Requests, Tokens, Budget *Quota
}

// Refusal is returned by Admit when a limit refuses the request.
type Refusal struct {
	Scope string
	What  What
	Limit int64
	// RetryAfter is how long until the request could be admitted, if the
	// rest stays as it is; 0 means it never could (it asks for more than
	// the limit) or the time is unknown.
	RetryAfter time.Duration
	Message    string
	Status     Status
}

func (r *Refusal) Error() string { return r.Message }

// ErrUnavailable is returned by Admit, with on_error fail_closed, when the
// counters cannot be reached.
var ErrUnavailable = errors.New("limits and budgets cannot be checked right now: their store is unreachable")

// Spender reads spend from the ledger, to reload a budget's counter after
// a restart: the total since since, or with slot > 0, totals per slot
// (index = unix milliseconds / slot milliseconds).
type Spender interface {
	Spend(ctx context.Context, keyID string, models []string, since time.Time, slot time.Duration) (total int64, bySlot map[int64]int64, err error)
}

// HolderSpender is a Spender that also reads a user's or a team's spend
// (kind "user" or "team"), for the scopes of people and teams.
type HolderSpender interface {
	SpendOf(ctx context.Context, kind, id string, models []string, since time.Time, slot time.Duration) (total int64, bySlot map[int64]int64, err error)
}

// spend reads a scope's spend from the ledger.
func (l *Limiter) spend(ctx context.Context, s Scope, since time.Time, slot time.Duration) (int64, map[int64]int64, error) {
	kind, id := "", ""
	switch {
	case s.UserID != "":
		kind, id = "user", s.UserID
	case s.TeamID != "":
		kind, id = "team", s.TeamID
	default:
		return l.spender.Spend(ctx, s.KeyID, s.Models, since, slot)
	}
	hs, ok := l.spender.(HolderSpender)
	if !ok {
		return 0, nil, fmt.Errorf("the ledger cannot read a %s's spend", kind)
	}
	return hs.SpendOf(ctx, kind, id, s.Models, since, slot)
}

// Options configure a Limiter.
type Options struct {
	// Spender reloads budgets; nil starts every budget counter at zero.
	Spender Spender
	// FailOpen admits requests, unchecked, while the counters (or the
	// ledger, to reload a budget) are unreachable; otherwise they are
	// refused with ErrUnavailable.
	FailOpen bool
	Logger   *slog.Logger
}

// Limiter admits and settles requests. It is safe for concurrent use.
type Limiter struct {
	b        backend
	probed   interface{ up() bool } // the back end, when it probes its store while away
	spender  Spender
	failOpen bool
	log      *slog.Logger

	down atomic.Bool // the back end is failing; logged once per outage
	// unchecked lists the budget counters that requests passed unchecked
	// (fail open) during the outage; they are reloaded from the ledger
	// when the back end answers again, so the outage's spend counts.
	uncheckedMu sync.Mutex
	unchecked   map[string]check

	// Counts for metrics: failures to reach the counters, requests let
	// through unchecked, and refusals by kind of limit.
	Errors     atomic.Int64
	FailedOpen atomic.Int64
	refused    [4]atomic.Int64
}

// Kinds lists the kinds of limit, in a fixed order.
var Kinds = [...]What{Requests, Tokens, Parallel, Budget}

// Refused counts the requests refused by a kind of limit.
func (l *Limiter) Refused(w What) int64 {
	for i, k := range Kinds {
		if k == w {
			return l.refused[i].Load()
		}
	}
	return 0
}

// Ping checks that the counters can be reached (always, in process).
func (l *Limiter) Ping(ctx context.Context) error {
	if p, ok := l.b.(interface{ Ping(context.Context) error }); ok {
		return p.Ping(ctx)
	}
	return nil
}

// Up reports whether the counters answered the last time they were asked,
// or, for Redis, since a background probe found it again.
func (l *Limiter) Up() bool { return !l.down.Load() }

// backend keeps the counters. admit applies checks atomically: all or none.
type backend interface {
	admit(ctx context.Context, member string, checks []check) (outcome, error)
	seed(ctx context.Context, c check, epoch string, total int64, bySlot map[int64]int64) error
	settle(ctx context.Context, member string, settles []settlement) error
	// peek reads what admit would count for each check, changing nothing;
	// loaded is false for a budget whose counter is not loaded.
	peek(ctx context.Context, checks []check) (used []int64, loaded []bool, err error)
	// forget drops budget counters, to be reloaded from the ledger.
	forget(ctx context.Context, cs []check) error
	close() error
	// clockNow is the time that budget periods are computed from: the
	// back end's own, so that one clock decides both.
	clockNow() time.Time
}

// check is one counter test within an admission.
type check struct {
	scope  int  // index into Request.Scopes
	what   What // which limit
	key    string
	limit  int64
	amount int64
	slotMS int64 // window slot; 0 for budgets that are not rolling
	// Budgets: when the period ends (unix ms, 0 never), and where the
	// ledger is summed from to reload it.
	endMS  int64
	since  time.Time
	period limit.Span
}

// outcome is a back end's answer to admit.
type outcome struct {
	refused int   // index of the refusing check, or -1
	seed    []int // budget checks whose counter must be reloaded first
	now     int64 // the back end's clock, unix ms
	used    []int64
	reset   []int64 // unix ms when each check's counter is whole again; 0 unknown
	retry   int64   // unix ms when the refused check could admit; 0 never
	slot    []int64 // per check: the window slot it was counted in
	epoch   []string
}

// settlement adjusts one admitted check.
type settlement struct {
	check
	slot   int64
	epoch  string
	actual int64 // tokens or nano-USD used; for requests and parallel unused
}

// Ticket is an admitted request's claim on its counters; Settle ends it.
type Ticket struct {
	member  string
	settles []settlement
	Status  Status
	once    sync.Once
}

// New returns a Limiter over a back end (NewMemory, NewRedis).
func New(b backend, o Options) *Limiter {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	l := &Limiter{b: b, spender: o.Spender, failOpen: o.FailOpen, log: o.Logger}
	// A back end that probes its store while away (Redis) says when it is
	// back, so that recovery is logged and acted on without waiting for a
	// request; it may already be away (found so at start-up).
	if w, ok := b.(interface {
		up() bool
		watch(func(probes int, downFor time.Duration))
	}); ok {
		l.probed = w
		l.down.Store(!w.up())
		w.watch(func(probes int, downFor time.Duration) {
			l.recovered("probes", probes, "down_for", downFor.Round(time.Millisecond).String())
		})
	}
	return l
}

// Close stops the back end.
func (l *Limiter) Close() error { return l.b.close() }

// maxLimit bounds the limits the counters apply, valid or not: below
// maxAmount, so that a reservation cut down to maxAmount never fits.
const maxLimit = maxAmount - 1

// checks lists the counters a request touches, in a stable order.
func checks(req *Request, now time.Time) []check {
	cs := make([]check, 0, 4*len(req.Scopes))
	tokens, cost := reserved(req.Tokens), reserved(req.Cost)
	for i, s := range req.Scopes {
		lim := s.Limits
		if lim.RPM > 0 {
			cs = append(cs, check{scope: i, what: Requests, key: s.Name + ":rpm", limit: min(lim.RPM, maxLimit), amount: 1, slotMS: 1000})
		}
		if lim.TPM > 0 {
			cs = append(cs, check{scope: i, what: Tokens, key: s.Name + ":tpm", limit: min(lim.TPM, maxLimit), amount: tokens, slotMS: 1000})
		}
		if lim.MaxParallel > 0 {
			cs = append(cs, check{scope: i, what: Parallel, key: s.Name + ":par", limit: min(lim.MaxParallel, maxLimit), amount: 1})
		}
		if lim.BudgetUSD != nil {
			p, _ := limit.ParsePeriod(string(lim.BudgetPeriod)) // validated when set
			id, since, end := p.At(now)
			// Every request reserves at least one nano-USD, so a spent
			// budget refuses even requests that claim to cost nothing.
			c := check{scope: i, what: Budget, key: s.Name + ":usd:" + id, limit: min(max(lim.BudgetUSD.Nano(), 0), maxLimit), amount: max(cost, 1),
				slotMS: p.Slot().Milliseconds(), since: since, period: p}
			if !end.IsZero() {
				c.endMS = end.UnixMilli()
			}
			cs = append(cs, c)
		}
	}
	return cs
}

// Admit checks every limit of the request's scopes and, if all allow it,
// takes the request from each counter. It returns a *Refusal when a limit
// refuses, ErrUnavailable when the counters cannot be reached (fail
// closed), and a nil ticket with no error when nothing limits the
// request. A request let through unchecked (fail open) gets a ticket that
// reserved nothing and has no Status, to settle its cost into its budgets.
func (l *Limiter) Admit(ctx context.Context, req *Request) (*Ticket, error) {
	now := l.b.clockNow()
	cs := checks(req, now)
	if len(cs) == 0 {
		return nil, nil
	}
	for attempt := 0; ; attempt++ {
		o, err := l.b.admit(ctx, req.ID, cs)
		if err != nil {
			return l.passUnchecked(req, cs, now), l.failure(err)
		}
		l.recovered()
		if len(o.seed) > 0 && attempt < 3 {
			if err := l.reload(ctx, req, cs, o.seed); err != nil {
				return l.passUnchecked(req, cs, now), l.failure(err)
			}
			continue
		}
		if len(o.seed) > 0 {
			return nil, l.failure(errors.New("budget counters were not reloaded"))
		}
		st := status(req, cs, o)
		if o.refused >= 0 {
			for i, k := range Kinds {
				if k == cs[o.refused].what {
					l.refused[i].Add(1)
				}
			}
			return nil, refusal(req, cs, o, st)
		}
		t := &Ticket{member: req.ID, Status: st, settles: make([]settlement, 0, len(cs))}
		for i, c := range cs {
			if c.what == Requests {
				continue // nothing to settle: a request is a request
			}
			t.settles = append(t.settles, settlement{check: c, slot: o.slot[i], epoch: o.epoch[i]})
		}
		return t, nil
	}
}

// reload seeds the named budget counters from the ledger.
func (l *Limiter) reload(ctx context.Context, req *Request, cs []check, idx []int) error {
	for _, i := range idx {
		c := cs[i]
		var total int64
		var bySlot map[int64]int64
		if l.spender != nil {
			s := req.Scopes[c.scope]
			var err error
			if total, bySlot, err = l.spend(ctx, s, c.since, time.Duration(c.slotMS)*time.Millisecond); err != nil {
				return fmt.Errorf("reloading spend from the ledger: %w", err)
			}
		}
		if err := l.b.seed(ctx, c, newEpoch(), total, bySlot); err != nil {
			return err
		}
	}
	return nil
}

func newEpoch() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// passUnchecked is the ticket of a request let through unchecked (fail open):
// it reserved nothing, and settles its cost into the budgets it would have
// been checked against, if they can be reached by then. now is the back
// end's clock when the checks were made: the cost goes to the period and
// the rolling slot they named.
func (l *Limiter) passUnchecked(req *Request, cs []check, now time.Time) *Ticket {
	if !l.failOpen {
		return nil
	}
	t := &Ticket{member: req.ID}
	l.uncheckedMu.Lock()
	defer l.uncheckedMu.Unlock()
	for _, c := range cs {
		if c.what == Budget {
			c.amount = 0
			t.settles = append(t.settles, settlement{check: c, slot: now.UnixMilli() / max(c.slotMS, 1)})
			if l.unchecked == nil {
				l.unchecked = map[string]check{}
			}
			if len(l.unchecked) < 100_000 {
				l.unchecked[c.key] = c
			}
		}
	}
	if len(t.settles) == 0 {
		return nil
	}
	return t
}

// failure applies the fail mode to an error reaching the counters.
func (l *Limiter) failure(err error) error {
	l.Errors.Add(1)
	// A request turned away just before a probe found the store again
	// does not start another outage.
	stale := errors.Is(err, errRedisDown) && l.probed != nil && l.probed.up()
	if !stale && !l.down.Swap(true) {
		l.log.Error("limits: counters unreachable", "error", err, "fail_open", l.failOpen)
	}
	if l.failOpen {
		l.FailedOpen.Add(1)
		return nil
	}
	return fmt.Errorf("%w: %v", ErrUnavailable, err)
}

// recovered ends an outage, once: it logs it, with attrs, and reloads the
// budgets that requests passed unchecked meanwhile.
func (l *Limiter) recovered(attrs ...any) {
	if l.down.Load() && l.down.Swap(false) {
		l.log.Info("limits: counters reachable again", attrs...)
		l.uncheckedMu.Lock()
		cs := make([]check, 0, len(l.unchecked))
		for _, c := range l.unchecked {
			cs = append(cs, c)
		}
		l.unchecked = nil
		l.uncheckedMu.Unlock()
		if len(cs) > 0 {
			go l.resync(cs)
		}
	}
}

// resyncDelay lets the ledger write the outage's records (it flushes at
// least every 500 ms) before the counters are reloaded from it.
var resyncDelay = 1500 * time.Millisecond

// resync drops the budget counters that requests passed unchecked, so
// that their next use reloads them from the ledger, outage spend included.
func (l *Limiter) resync(cs []check) {
	time.Sleep(resyncDelay)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := l.b.forget(ctx, cs); err != nil {
		l.log.Error("limits: reloading budgets after the outage failed", "error", err)
		return
	}
	l.log.Info("limits: budgets used during the outage reloaded from the ledger", "counters", len(cs))
}

// Settle replaces the ticket's reservations with what the request used and
// frees its place among parallel requests. It is safe to call more than
// once; only the first call counts. ctx should outlive the client's request.
func (l *Limiter) Settle(ctx context.Context, t *Ticket, used Used) {
	if t == nil {
		return
	}
	t.once.Do(func() {
		for i := range t.settles {
			switch t.settles[i].what {
			case Tokens:
				t.settles[i].actual = clampAmount(used.Tokens)
			case Budget:
				t.settles[i].actual = clampAmount(used.Cost)
			}
		}
		if err := l.b.settle(ctx, t.member, t.settles); err != nil {
			l.Errors.Add(1)
			if errors.Is(err, errRedisDown) {
				return // the outage is logged once, when it starts
			}
			l.log.Error("limits: settling a request failed; its spend is in the ledger and is counted when the counter is next reloaded", "error", err)
		}
	})
}

// status picks the tightest limit of each kind for the headers.
func status(req *Request, cs []check, o outcome) Status {
	var st Status
	for i, c := range cs {
		var q **Quota
		switch c.what {
		case Requests:
			q = &st.Requests
		case Tokens:
			q = &st.Tokens
		case Budget:
			q = &st.Budget
		default:
			continue
		}
		used, reserved := o.used[i], int64(0)
		if c.what == Budget && o.refused < 0 {
			reserved = c.amount
			used -= reserved
		}
		rem := max(c.limit-used, 0)
		if *q == nil || rem < (*q).Remaining {
			nq := &Quota{Limit: c.limit, Remaining: rem, Reserved: reserved}
			if o.reset[i] > 0 {
				nq.Reset = time.UnixMilli(o.reset[i])
			}
			*q = nq
		}
	}
	return st
}

// refusal describes the refused check for the client.
func refusal(req *Request, cs []check, o outcome, st Status) *Refusal {
	c := cs[o.refused]
	s := req.Scopes[c.scope]
	r := &Refusal{Scope: s.Name, What: c.what, Limit: c.limit, Status: st}
	if o.retry > 0 {
		r.RetryAfter = max(time.Duration(o.retry-o.now)*time.Millisecond, time.Millisecond)
	}
	who := scopeWords(s)
	used := o.used[o.refused]
	switch c.what {
	case Requests:
		r.Message = fmt.Sprintf("rate limit reached: %s allows %d requests per minute", who, c.limit)
	case Tokens:
		switch {
		case c.amount > c.limit && req.InputOnly:
			r.Message = fmt.Sprintf("request too large: its input is estimated at %s tokens, more than the %d tokens per minute %s allows; send fewer or shorter inputs",
				atLeast(c.amount, strconv.FormatInt(c.amount, 10)), c.limit, who)
		case c.amount > c.limit:
			r.Message = fmt.Sprintf("request too large: it may use %s tokens (estimated input plus %s), more than the %d tokens per minute %s allows%s",
				atLeast(c.amount, strconv.FormatInt(c.amount, 10)), outputParam(req), c.limit, who, lowerOutput(req))
		default:
			r.Message = fmt.Sprintf("rate limit reached: %s allows %d tokens per minute; %d are used and this request may use %d", who, c.limit, used, c.amount)
		}
	case Parallel:
		r.Message = fmt.Sprintf("concurrency limit reached: %s allows %d requests in flight at once", who, c.limit)
		r.RetryAfter = time.Second
	case Budget:
		left := max(c.limit-used, 0)
		span := c.period.Words()
		switch {
		case c.amount > c.limit:
			r.Message = fmt.Sprintf("request too large: its worst-case cost of %s USD is more than the whole %s budget of %s USD for %s%s",
				atLeast(c.amount, units.FormatNano(c.amount, 0)), span, units.FormatNano(c.limit, 0), who, lowerOutput(req))
		case used >= c.limit:
			r.Message = fmt.Sprintf("budget exhausted: the %s budget of %s USD for %s is spent", span, units.FormatNano(c.limit, 0), who)
		default:
			r.Message = fmt.Sprintf("budget insufficient: %s USD of the %s budget of %s USD for %s is left (in-flight requests included), less than this request's worst-case cost of %s USD%s",
				units.FormatNano(left, 0), span, units.FormatNano(c.limit, 0), who, units.FormatNano(c.amount, 0), lowerOutput(req))
		}
	}
	return r
}

func outputParam(req *Request) string {
	if req.OutputParam == "" {
		return "max_tokens"
	}
	return req.OutputParam
}

// lowerOutput ends a refusal that a smaller output limit would avoid: it
// says to lower the request's limit, or, when the request set none, that
// the model's most was reserved and how to ask for less.
func lowerOutput(req *Request) string {
	if req.InputOnly {
		return "; send fewer or shorter inputs"
	}
	p := outputParam(req)
	if req.OutputDefault > 0 {
		return fmt.Sprintf("; the request sets no %s, so the model's most, %d output tokens, was reserved: set %s to what the answer needs", p, req.OutputDefault, p)
	}
	return "; lower " + p
}

// atLeast is an amount as shown to the client: s, or "at least s" when
// the amount asked for was cut down to maxAmount.
func atLeast(n int64, s string) string {
	if n >= maxAmount {
		return "at least " + s
	}
	return s
}

func scopeWords(s Scope) string {
	switch {
	case s.UserID != "":
		return "your account"
	case s.TeamID != "":
		return "your team"
	case s.KeyID != "" && s.Models != nil:
		return fmt.Sprintf("this API key for model %q", s.Models[0])
	case s.KeyID != "":
		return "this API key"
	case s.Models != nil:
		return fmt.Sprintf("model %q (across all keys)", s.Models[0])
	}
	return s.Name
}
