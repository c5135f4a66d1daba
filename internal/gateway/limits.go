package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/tollgate/tollgate/internal/clock"
	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/limit"
	"github.com/tollgate/tollgate/internal/limiter"
	"github.com/tollgate/tollgate/internal/route"
	"github.com/tollgate/tollgate/internal/translate"
	"github.com/tollgate/tollgate/internal/units"
)

// Limits configure the gateway's rate limits and budgets.
type Limits struct {
	Limiter *limiter.Limiter
	// KeyDefaults fill what a virtual key's own limits leave unset.
	KeyDefaults limit.Limits
	// CacheReads and CacheWrites count those prompt-cache tokens against
	// tpm limits.
	CacheReads, CacheWrites bool
}

// scopes lists the limits that apply to a request for model m.
func (g *Gateway) scopes(x *exchange, m *route.Model) []limiter.Scope {
	var scopes []limiter.Scope
	if k := x.key; k != nil {
		if l := k.Limits.Over(x.gen.limits.KeyDefaults); !l.IsZero() {
			scopes = append(scopes, limiter.Scope{Name: "key:" + k.ID, Limits: l, KeyID: k.ID})
		}
		if l, ok := k.LimitsFor(m.Name, m.Aliases); ok && !l.IsZero() {
			scopes = append(scopes, limiter.Scope{Name: "key:" + k.ID + ":model:" + m.Name, Limits: l, KeyID: k.ID, Models: m.Names()})
		}
	}
	// A person's requests also fit their own limits (over their team's
	// per-member defaults) and their team's, in the same atomic step.
	if p := x.person; p != nil {
		if !p.Limits.IsZero() {
			scopes = append(scopes, limiter.Scope{Name: "user:" + p.UserID, Limits: p.Limits, UserID: p.UserID})
		}
		if p.TeamID != "" && !p.TeamLimits.IsZero() {
			scopes = append(scopes, limiter.Scope{Name: "team:" + p.TeamID, Limits: p.TeamLimits, TeamID: p.TeamID})
		}
	}
	if !m.Limits.IsZero() {
		scopes = append(scopes, limiter.Scope{Name: "model:" + m.Name, Limits: m.Limits, Models: m.Names()})
	}
	return scopes
}

// admitCount admits a count_tokens request against the request-rate and
// parallel limits only.
func (g *Gateway) admitCount(c *call) error { return g.admitScopes(c, true) }

// admit reserves the request's worst case against every limit that
// applies, before anything is sent upstream. The reservation is settled
// in finish, however the request ends.
func (g *Gateway) admit(c *call) error { return g.admitScopes(c, false) }

func (g *Gateway) admitScopes(c *call, count bool) error {
	lim := c.x.gen.limits.Limiter
	if lim == nil {
		return nil
	}
	w, r, x, m, body := c.w, c.r, c.x, c.m, c.body
	scopes := g.scopes(x, m)
	if count {
		kept := scopes[:0]
		for _, sc := range scopes {
			sc.Limits.TPM, sc.Limits.BudgetUSD = 0, nil
			if !sc.Limits.IsZero() {
				kept = append(kept, sc)
			}
		}
		scopes = kept
	}
	if len(scopes) == 0 {
		return nil
	}
	input, output, defaulted := reservation(m, body, &c.s)
	inputOnly := c.op == dialect.Embed || c.op.PassThroughOnly() && c.op != dialect.Complete
	if inputOnly {
		// Embeddings cost their input only; images, audio, moderations and
		// reranking are billed by what they make, which no request bounds.
		output, defaulted = 0, 0
	}
	req := &limiter.Request{ID: x.id, Scopes: scopes, Tokens: input + output, OutputDefault: defaulted, InputOnly: inputOnly}
	fields := &x.dialect.Fields
	if c.fields != nil {
		fields = c.fields // the endpoint's own (/v1/completions: max_tokens)
	}
	if f := fields.MaxOutput; len(f) > 0 && !req.InputOnly {
		req.OutputParam = f[0]
	}
	for _, sc := range scopes {
		if sc.Limits.BudgetUSD == nil {
			continue
		}
		if f := unpriced(x.dialect, body); f != "" {
			return &Error{Status: http.StatusForbidden, Kind: dialect.Permission, Param: f, Code: "unpriced_feature",
				Message: fmt.Sprintf("a USD budget applies to this request, but %s is billed by the provider at prices this gateway does not know, so its cost cannot be counted; leave it out, or use a key without a budget", f)}
		}
		cost, err := worstCase(m, input, output)
		if err != nil {
			return &Error{Status: http.StatusForbidden, Kind: dialect.Permission, Param: "model", Code: "model_unpriced", Err: err,
				Message: fmt.Sprintf("a USD budget applies to this request, but model %q has no price, so its cost cannot be counted; the operator must give it pricing", m.Name)}
		}
		req.Cost = cost
		break
	}
	t, err := lim.Admit(r.Context(), req)
	var refused *limiter.Refusal
	switch {
	case errors.As(err, &refused):
		return g.refusal(w, x, refused)
	case errors.Is(err, limiter.ErrUnavailable):
		return &Error{Status: http.StatusServiceUnavailable, Kind: dialect.Unavailable, Err: err,
			Header:  http.Header{"Retry-After": {"1"}},
			Message: "rate limits and budgets cannot be checked right now; try again shortly"}
	case err != nil:
		return err
	}
	if t != nil {
		x.ticket = t
		x.limitHeaders = true
		quotaHeaders(w.Header(), x.dialect, t.Status, clock.Now())
	}
	return nil
}

// maxReservedOutput bounds the output a request reserves, whatever its
// max_tokens says: no model writes more, and the arithmetic of
// reservations and costs stays far from overflowing.
const maxReservedOutput = 1 << 24

// reservation is what a request reserves against token limits and, at
// its prices, budgets: its estimated prompt, and the most output it may
// produce (max_tokens, at most the model's maximum, times n answers).
// defaulted is the output of one answer reserved for a request that sets
// no output limit (the model's most), 0 when it sets one.
func reservation(m *route.Model, body []byte, s *dialect.Scanned) (input, output, defaulted int64) {
	output = s.MaxOutput
	if top := m.Caps.MaxOutputTokens; top > 0 && (output <= 0 || output > top) {
		// No limit in the request, or one past the model's: the most the
		// model can write.
		output = top
	}
	if output <= 0 {
		output = translate.DefaultMaxOutputTokens
	}
	output = min(output, maxReservedOutput)
	if s.MaxOutput <= 0 {
		defaulted = output
	}
	if s.Choices > 1 {
		output = min(output*min(s.Choices, 128), 128*maxReservedOutput)
	}
	return reserveInputTokens(body), output, defaulted
}

// unpriced names a feature of the request that the provider bills apart
// from tokens, at prices the gateway does not know; "" when there is none.
func unpriced(d *dialect.Dialect, body []byte) string {
	if d.Unpriced == nil {
		return ""
	}
	return d.Unpriced(body)
}

// reserveInputTokens estimates a request's prompt for its reservation,
// from its bytes, without a tokenizer. It must not be gamed downwards:
//
//   - Text with white space counts a quarter of its bytes.
//   - A run of word characters longer than wordRun without white space
//     (long identifiers, random strings, minified data) counts half its
//     bytes: tokenizers split such text into short pieces (random letters
//     and digits are about 0.65 tokens a byte), and a quarter would let a
//     2 MB prompt reserve a hundredth of what it costs.
//   - A base64 payload (after "data":" or ";base64,") of at least
//     base64RunMin bytes is an image or a document, which costs a couple
//     of thousand tokens, not a quarter of its bytes: base64RunTokens plus
//     one token per base64RunBytesPerToken bytes, so that many-page
//     documents still weigh.
//
// Settlement corrects the estimate with the upstream's count.
func reserveInputTokens(body []byte) int64 {
	var quarter, half, tokens int64
	run := 0
	for i := 0; i <= len(body); i++ {
		if i < len(body) && isBase64Byte(body[i]) {
			run++
			continue
		}
		switch start := i - run; {
		case run >= base64RunMin && isPayloadStart(body[:start]):
			tokens += base64RunTokens + int64(run)/base64RunBytesPerToken
		case run > wordRun:
			half += int64(run)
		default:
			quarter += int64(run)
		}
		if i < len(body) {
			quarter++ // the separator
		}
		run = 0
	}
	return tokens + (quarter+3)/4 + (half+1)/2
}

// Long base64 payloads and long words; see reserveInputTokens.
const (
	base64RunMin           = 1024
	base64RunTokens        = 2000
	base64RunBytesPerToken = 256
	wordRun                = 32
)

// isPayloadStart reports whether a base64 run that follows before is a
// payload: the value of a "data" member (Anthropic sources, audio) or
// the body of a data URL (OpenAI images and files).
func isPayloadStart(before []byte) bool {
	before = before[max(len(before)-16, 0):]
	return bytes.HasSuffix(before, []byte(";base64,")) || bytes.HasSuffix(bytes.TrimRight(before, " \t\r\n\""), []byte(`"data":`)) ||
		bytes.HasSuffix(bytes.TrimRight(before, " \t\r\n\""), []byte(`"data" :`))
}

func isBase64Byte(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '='
}

// worstCase is the most the request can cost on any of the model's
// targets (a retry may land on the dearest). Every target must be priced.
func worstCase(m *route.Model, input, output int64) (int64, error) {
	var worst int64
	for _, t := range m.Targets {
		c, err := t.Prices.WorstCase(input, output)
		if err != nil {
			return 0, err
		}
		worst = max(worst, c)
	}
	return worst, nil
}

// refusal is the 429 for a refused request, with the quota headers.
func (g *Gateway) refusal(w http.ResponseWriter, x *exchange, r *limiter.Refusal) error {
	x.limitHeaders = true
	h := w.Header()
	quotaHeaders(h, x.dialect, r.Status, clock.Now())
	if r.RetryAfter > 0 {
		h.Set("Retry-After", strconv.FormatInt(int64((r.RetryAfter+time.Second-1)/time.Second), 10))
		h.Set("Retry-After-Ms", strconv.FormatInt(r.RetryAfter.Milliseconds(), 10))
	} else {
		h.Set("X-Should-Retry", "false") // it asks for more than the limit allows
	}
	k := dialect.RateLimit
	if r.What == limiter.Budget {
		k = dialect.Budget
	}
	return &Error{Status: http.StatusTooManyRequests, Kind: k, Message: r.Message}
}

// quotaHeaders writes the limits' state in the dialect's rate-limit
// headers, and budgets in tollgate's own.
func quotaHeaders(h http.Header, d *dialect.Dialect, st limiter.Status, now time.Time) {
	rl := d.RateLimit
	for i, q := range [2]*limiter.Quota{st.Requests, st.Tokens} {
		if q == nil {
			continue
		}
		names := [2][3]string{rl.Requests, rl.Tokens}[i]
		if names[0] == "" {
			continue // the protocol has no such headers (Gemini)
		}
		h[names[0]] = []string{strconv.FormatInt(q.Limit, 10)}
		h[names[1]] = []string{strconv.FormatInt(q.Remaining, 10)}
		if !q.Reset.IsZero() {
			h[names[2]] = []string{rl.Reset(q.Reset, now)}
		}
	}
	if b := st.Budget; b != nil {
		h["Tollgate-Budget-Limit-Usd"] = []string{units.FormatNano(b.Limit, 0)}
		h["Tollgate-Budget-Remaining-Usd"] = []string{units.FormatNano(b.Remaining, 0)}
		if b.Reserved > 0 {
			h["Tollgate-Budget-Reserved-Usd"] = []string{units.FormatNano(b.Reserved, 0)}
		}
		if !b.Reset.IsZero() {
			h["Tollgate-Budget-Reset"] = []string{dialect.CeilSecond(b.Reset).Format(time.RFC3339)}
		}
	}
}

// settle ends the request's reservations with what it used.
func (g *Gateway) settle(x *exchange) {
	if x.ticket == nil {
		return
	}
	u := x.usage
	tokens := u.Input + u.Output
	limits := x.gen.limits // those it was admitted under
	if limits.CacheReads {
		tokens += u.CacheRead
	}
	if limits.CacheWrites {
		tokens += u.CacheWrite5m + u.CacheWrite1h
	}
	cost, _ := x.cost() // unknown only for unpriced models, which have no budget
	// Not the client's context: the request is over, and it may be gone.
	// The Redis back end bounds its own calls.
	limits.Limiter.Settle(context.Background(), x.ticket, limiter.Used{Tokens: tokens, Cost: cost})
}

// KeyLimitUse is the current use of every limit that applies to a key's
// requests, scope by scope as admission counts them: the key's own limits
// over the key defaults, then its limits for each model it names (by
// model or alias; a name no model has any more is left out). Limits on a
// model across all keys are not the key's: they are not listed. Nil when
// no limiter is configured or nothing limits the key.
func (g *Gateway) KeyLimitUse(ctx context.Context, keyID string, own limit.Limits, perModel map[string]limit.Limits) ([]limiter.Use, error) {
	gen := g.gen.Load()
	lim := gen.limits.Limiter
	if lim == nil {
		return nil, nil
	}
	var scopes []limiter.Scope
	if l := own.Over(gen.limits.KeyDefaults); !l.IsZero() {
		scopes = append(scopes, limiter.Scope{Name: "key:" + keyID, Limits: l, KeyID: keyID})
	}
	names := make([]string, 0, len(perModel))
	for name := range perModel {
		names = append(names, name)
	}
	slices.Sort(names)
	seen := map[string]bool{}
	for _, name := range names {
		m := gen.routes.Lookup([]byte(name))
		if m == nil || seen[m.Name] {
			continue
		}
		seen[m.Name] = true
		// As auth.Key.LimitsFor picks them: the model's name, then its aliases.
		l, ok := perModel[m.Name]
		for _, a := range m.Aliases {
			if !ok {
				l, ok = perModel[a]
			}
		}
		if !l.IsZero() {
			scopes = append(scopes, limiter.Scope{Name: "key:" + keyID + ":model:" + m.Name, Limits: l, KeyID: keyID, Models: m.Names()})
		}
	}
	if len(scopes) == 0 {
		return nil, nil
	}
	return lim.Use(ctx, scopes)
}
