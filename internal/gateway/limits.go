package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/tollgate/tollgate/internal/api"
	"github.com/tollgate/tollgate/internal/limit"
	"github.com/tollgate/tollgate/internal/route"
	"github.com/tollgate/tollgate/internal/translate"
)

// Limits configure the gateway's rate limits and budgets.
type Limits struct {
	Limiter *limit.Limiter
	// KeyDefaults fill what a virtual key's own limits leave unset.
	KeyDefaults limit.Limits
	// CacheReads and CacheWrites count those prompt-cache tokens against
	// tpm limits.
	CacheReads, CacheWrites bool
}

// settleTimeout bounds a settlement, which runs after the client's
// request has ended and so cannot use its context.
const settleTimeout = 5 * time.Second

// scopes lists the limits that apply to a request for model m.
func (g *Gateway) scopes(x *exchange, m *route.Model) []limit.Scope {
	var scopes []limit.Scope
	if k := x.key; k != nil {
		if l := k.Limits.Over(g.limits.KeyDefaults); !l.IsZero() {
			scopes = append(scopes, limit.Scope{Name: "key:" + k.ID, Limits: l, KeyID: k.ID})
		}
		if l, ok := k.LimitsFor(m.Name, m.Aliases); ok && !l.IsZero() {
			scopes = append(scopes, limit.Scope{Name: "key:" + k.ID + ":model:" + m.Name, Limits: l, KeyID: k.ID, Models: m.Names()})
		}
	}
	if !m.Limits.IsZero() {
		scopes = append(scopes, limit.Scope{Name: "model:" + m.Name, Limits: m.Limits, Models: m.Names()})
	}
	return scopes
}

// admit reserves the request's worst case against every limit that
// applies, before anything is sent upstream. The reservation is settled
// in finish, however the request ends.
func (g *Gateway) admit(w http.ResponseWriter, r *http.Request, x *exchange, m *route.Model, body []byte, s scanned) error {
	if g.limits.Limiter == nil {
		return nil
	}
	scopes := g.scopes(x, m)
	if len(scopes) == 0 {
		return nil
	}
	output := s.maxOutput
	if output <= 0 {
		// No limit in the request: the most the gateway would let an
		// Anthropic upstream write, the model's configured maximum.
		output = m.Caps.MaxOutputTokens
		if output <= 0 {
			output = translate.DefaultMaxOutputTokens
		}
	}
	input := estimateTokens(body)
	req := &limit.Request{ID: x.id, Scopes: scopes, Tokens: input + output}
	for _, sc := range scopes {
		if sc.Limits.BudgetUSD == nil {
			continue
		}
		cost, err := m.Targets[0].Prices.WorstCase(input, output)
		if err != nil {
			return &Error{Status: http.StatusForbidden, Kind: kindPermission, Param: "model", Code: "model_unpriced", Err: err,
				Message: fmt.Sprintf("a USD budget applies to this request, but model %q has no price, so its cost cannot be counted; the operator must give it pricing", m.Name)}
		}
		req.Cost = cost
		break
	}
	t, err := g.limits.Limiter.Admit(r.Context(), req)
	var refused *limit.Refusal
	switch {
	case errors.As(err, &refused):
		return g.refusal(w, x, refused)
	case errors.Is(err, limit.ErrUnavailable):
		return &Error{Status: http.StatusServiceUnavailable, Kind: kindUnavailable, Err: err,
			Header:  http.Header{"Retry-After": {"1"}},
			Message: "rate limits and budgets cannot be checked right now; try again shortly"}
	case err != nil:
		return err
	}
	if t != nil {
		x.ticket = t
		x.limitHeaders = true
		quotaHeaders(w.Header(), x.dialect, t.Status, time.Now())
	}
	return nil
}

// refusal is the 429 for a refused request, with the quota headers.
func (g *Gateway) refusal(w http.ResponseWriter, x *exchange, r *limit.Refusal) error {
	x.limitHeaders = true
	h := w.Header()
	quotaHeaders(h, x.dialect, r.Status, time.Now())
	if r.RetryAfter > 0 {
		h.Set("Retry-After", strconv.FormatInt(int64((r.RetryAfter+time.Second-1)/time.Second), 10))
		h.Set("Retry-After-Ms", strconv.FormatInt(r.RetryAfter.Milliseconds(), 10))
	} else {
		h.Set("X-Should-Retry", "false") // it asks for more than the limit allows
	}
	k := kindRateLimit
	if r.What == limit.Budget {
		k = kindBudget
	}
	return &Error{Status: http.StatusTooManyRequests, Kind: k, Message: r.Message}
}

// quotaHeaders writes the limits' state in the dialect's usual headers,
// and budgets in tollgate's own.
func quotaHeaders(h http.Header, d api.Dialect, st limit.Status, now time.Time) {
	for _, q := range [...]struct {
		q            *limit.Quota
		what         string // Anthropic's name
		openai       string
		isRequestish bool
	}{{st.Requests, "requests", "requests", true}, {st.Tokens, "tokens", "tokens", false}} {
		if q.q == nil {
			continue
		}
		limit, remaining := strconv.FormatInt(q.q.Limit, 10), strconv.FormatInt(q.q.Remaining, 10)
		if d == api.Anthropic {
			h["Anthropic-Ratelimit-"+title(q.what)+"-Limit"] = []string{limit}
			h["Anthropic-Ratelimit-"+title(q.what)+"-Remaining"] = []string{remaining}
			if !q.q.Reset.IsZero() {
				h["Anthropic-Ratelimit-"+title(q.what)+"-Reset"] = []string{q.q.Reset.UTC().Format(time.RFC3339)}
			}
		} else {
			h["X-Ratelimit-Limit-"+title(q.openai)] = []string{limit}
			h["X-Ratelimit-Remaining-"+title(q.openai)] = []string{remaining}
			if !q.q.Reset.IsZero() {
				h["X-Ratelimit-Reset-"+title(q.openai)] = []string{max(q.q.Reset.Sub(now), 0).Round(time.Millisecond).String()}
			}
		}
	}
	if b := st.Budget; b != nil {
		h["Tollgate-Budget-Limit-Usd"] = []string{limit.FormatNano(b.Limit)}
		h["Tollgate-Budget-Remaining-Usd"] = []string{limit.FormatNano(b.Remaining)}
		if !b.Reset.IsZero() {
			h["Tollgate-Budget-Reset"] = []string{b.Reset.UTC().Format(time.RFC3339)}
		}
	}
}

func title(s string) string { return string(s[0]-'a'+'A') + s[1:] }

// isRateLimitHeader reports whether an upstream response header describes
// the upstream's own rate limits. When the gateway's limits apply, the
// client sees those instead.
func isRateLimitHeader(k string) bool {
	const a, o = "Anthropic-Ratelimit-", "X-Ratelimit-"
	return len(k) > len(a) && k[:len(a)] == a || len(k) > len(o) && k[:len(o)] == o
}

// settle ends the request's reservations with what it used.
func (g *Gateway) settle(x *exchange) {
	if x.ticket == nil {
		return
	}
	u := x.usage
	tokens := u.Input + u.Output
	if g.limits.CacheReads {
		tokens += u.CacheRead
	}
	if g.limits.CacheWrites {
		tokens += u.CacheWrite5m + u.CacheWrite1h
	}
	cost, _ := x.cost() // unknown only for unpriced models, which have no budget
	ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
	defer cancel()
	g.limits.Limiter.Settle(ctx, x.ticket, limit.Used{Tokens: tokens, Cost: cost})
}
