// Package pricing turns usage into cost, exactly. Prices are USD per million
// tokens per billing bucket, parsed from decimal text (never through a
// float) into integers of nano-USD per million tokens; a request's cost is
// summed in 128-bit integers and rounded once, to whole nano-USD.
//
// Streaming and non-streaming requests, and either lane, produce the same
// meter.Usage for the same upstream usage, so they cost the same by
// construction.
package pricing

import (
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/tollgate/tollgate/internal/meter"
	"github.com/tollgate/tollgate/internal/units"
)

// Price is an exact price in USD per million tokens. The zero value means
// "not priced".
type Price struct {
	nano int64 // nano-USD per million tokens
	set  bool
}

// maxPriceDecimals is the precision of prices: 1e-9 USD per million tokens.
const maxPriceDecimals = 9

// ParsePrice reads a non-negative decimal such as "3", "0.075" or "1.25"
// with at most nine decimal places.
func ParsePrice(s string) (Price, error) {
	n, err := units.ParseNano(s)
	switch {
	case errors.Is(err, units.ErrPrecision):
		return Price{}, fmt.Errorf("price %q: at most %d decimal places", s, maxPriceDecimals)
	case errors.Is(err, units.ErrRange):
		return Price{}, fmt.Errorf("price %q: too large", s)
	case err != nil:
		return Price{}, fmt.Errorf("price %q: want a decimal number of USD per million tokens, like 3 or 0.075", s)
	}
	return Price{nano: n, set: true}, nil
}

// MustPrice is ParsePrice for constants; it panics on a bad price.
func MustPrice(s string) Price {
	p, err := ParsePrice(s)
	if err != nil {
		panic(err)
	}
	return p
}

// IsSet reports whether the price was given.
func (p Price) IsSet() bool { return p.set }

// String renders the price as decimal USD per million tokens.
func (p Price) String() string {
	if !p.set {
		return "unpriced"
	}
	return units.FormatNano(p.nano, 0)
}

// Prices are a model's prices per bucket. Reasoning, when unset, is billed
// at the Output price (reasoning tokens are output tokens).
type Prices struct {
	Input        Price
	Output       Price
	CacheRead    Price
	CacheWrite5m Price
	CacheWrite1h Price
	Reasoning    Price
	// Image, Second, Character and Query price what some endpoints bill
	// apart from tokens (meter.Usage.Units), per image made, second of
	// audio, character spoken, search query; held per million units, as
	// token prices are (ParseUnitPrice).
	Image, Second, Character, Query Price
	// LongPrompt, when set, replaces these prices for a whole request
	// whose prompt (input, cache reads and cache writes) is longer than
	// its threshold, as some providers price long prompts higher.
	LongPrompt *Tier
}

// Tier is a set of prices that applies above a prompt length.
type Tier struct {
	ThresholdTokens int64
	Prices          Prices
}

// ErrUnpriced means usage fell in a bucket that has no price: the cost is
// unknown, which is recorded as such and never as zero.
var ErrUnpriced = errors.New("usage in a bucket without a price")

// Cost returns the cost of u in nano-USD, rounded once (half up). It fails
// with ErrUnpriced when tokens fall in a bucket without a price.
func (p *Prices) Cost(u meter.Usage) (int64, error) {
	if p == nil {
		return 0, ErrUnpriced
	}
	if !p.Input.set && !p.Output.set && u.Units > 0 && p.unitPrice(u.Unit).set {
		// A model priced by the unit alone bills its units; the tokens an
		// answer reports too (gpt-image-1's) are what the units cost.
		u = meter.Usage{Units: u.Units, Unit: u.Unit}
	}
	ps := p.pricesFor(u)
	reasoning := min(max(u.Reasoning, 0), max(u.Output, 0))
	var acc uint128
	for _, b := range [...]struct {
		tokens int64
		price  Price
	}{
		{u.Input, ps.Input},
		{u.CacheRead, ps.CacheRead},
		{u.CacheWrite5m, ps.CacheWrite5m},
		{u.CacheWrite1h, ps.CacheWrite1h},
		{u.Output - reasoning, ps.Output},
		{reasoning, ps.reasoningPrice()},
	} {
		if b.tokens <= 0 {
			continue
		}
		if !b.price.set {
			return 0, ErrUnpriced
		}
		acc.addMul(uint64(b.tokens), uint64(b.price.nano))
	}
	if u.Units > 0 {
		// Units without a price of their own are what the tokens already
		// bill (gpt-image-1's images are its output tokens); without
		// tokens either, the cost is unknown.
		switch price := p.unitPrice(u.Unit); {
		case price.set:
			acc.addMul(uint64(u.Units), uint64(price.nano))
		case u.TotalInput() == 0 && u.Output == 0:
			return 0, ErrUnpriced
		}
	}
	// Σ tokens × nano-USD per million tokens, divided by a million, once.
	return acc.divRound(1_000_000)
}

// unitPrice is the price of one kind of meter.Usage.Units.
func (p *Prices) unitPrice(unit string) Price {
	switch unit {
	case meter.UnitImage:
		return p.Image
	case meter.UnitSecond:
		return p.Second
	case meter.UnitCharacter:
		return p.Character
	case meter.UnitQuery:
		return p.Query
	}
	return Price{}
}

// ParseUnitPrice reads a price in USD per unit (an image, a second…),
// such as "0.04", into a Price held per million units.
func ParseUnitPrice(s string) (Price, error) {
	p, err := ParsePrice(s)
	if err != nil {
		return Price{}, err
	}
	if p.nano > math.MaxInt64/1_000_000 {
		return Price{}, fmt.Errorf("price %q: too large", s)
	}
	p.nano *= 1_000_000
	return p, nil
}

// SetUnits sets the per-unit prices from decimal texts in USD per unit;
// empty leaves one unset.
func (p *Prices) SetUnits(image, second, character, query string) error {
	for _, f := range []struct {
		name string
		s    string
		dst  *Price
	}{{"per_image", image, &p.Image}, {"per_second", second, &p.Second}, {"per_character", character, &p.Character}, {"per_query", query, &p.Query}} {
		if f.s == "" {
			continue
		}
		v, err := ParseUnitPrice(f.s)
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		*f.dst = v
	}
	return nil
}

// pricesFor is the prices that apply to u: the long-prompt tier's (completed
// from p) when u's prompt is past its threshold, else p.
func (p *Prices) pricesFor(u meter.Usage) *Prices {
	if t := p.LongPrompt; t != nil && u.TotalInput() > t.ThresholdTokens {
		return t.Prices.over(p)
	}
	return p
}

// Savings is what prompt caching saved on u, in nano-USD: for each cache
// bucket (cache reads, 5-minute and 1-hour cache writes), its tokens
// times the input price less the bucket's price, summed exactly and
// rounded once (half up, as Cost). It is negative when cache writes,
// priced above input, cost more than cache reads saved. The prices are
// those Cost uses (the long-prompt tier's past its threshold), so Cost(u)
// + Savings(u) is the cost of u with its cache tokens all billed as input:
// exactly when every price is a whole number of thousandths of a USD per
// million tokens (no term has a fraction of a nano-USD), else within the
// one nano-USD that rounding each of the three once can leave.
//
// Usage without cache tokens saved 0. Savings fails with ErrUnpriced when
// a cache bucket holds tokens and it or the input has no price.
//
// Savings = CacheReadSavings − CacheWritePremium, exactly.
func (p *Prices) Savings(u meter.Usage) (nano int64, err error) {
	_, net, err := p.SavingsParts(u)
	return net, err
}

// CacheReadSavings is the gross part of Savings: what the cache buckets
// priced below the input price saved against it, ≥ 0. With the usual
// prices (cache reads below input, cache writes above) that is the cache
// reads'; a write priced below input (a long-prompt tier that raises the
// input price and keeps the base write price) counts here too. It is
// rounded once, as Savings is, and fails as Savings does.
func (p *Prices) CacheReadSavings(u meter.Usage) (nano int64, err error) {
	read, _, err := p.SavingsParts(u)
	return read, err
}

// CacheWritePremium is the other part of Savings: what the cache buckets
// priced above the input price cost beyond it, ≥ 0 (with the usual
// prices, the cache writes'). It is CacheReadSavings − Savings, so
// that the two parts always make Savings exactly; each of those is
// rounded once, so it is within a nano-USD of the exact premium (equal
// to it when every price is a whole number of thousandths of a USD per
// million tokens). It fails as Savings does.
func (p *Prices) CacheWritePremium(u meter.Usage) (nano int64, err error) {
	read, net, err := p.SavingsParts(u)
	if err == nil && net < 0 && read > math.MaxInt64+net {
		return 0, errOverflow
	}
	return read - net, err
}

// SavingsParts returns CacheReadSavings (read) and Savings (net) in one
// pass, for a caller that needs both; read ≥ net, as rounding is monotone
// and the exact gross saving is at least the exact net one.
func (p *Prices) SavingsParts(u meter.Usage) (read, net int64, err error) {
	if u.CacheRead <= 0 && u.CacheWrite5m <= 0 && u.CacheWrite1h <= 0 {
		return 0, 0, nil // nothing cached: nothing saved, priced or not
	}
	if p == nil {
		return 0, 0, ErrUnpriced
	}
	ps := p.pricesFor(u)
	// Σ tokens × (input − bucket price), in nano-USD per million tokens:
	// the terms of buckets priced below input in saved, the others' in
	// premium.
	var saved, premium uint128
	for _, b := range [...]struct {
		tokens int64
		price  Price
	}{
		{u.CacheRead, ps.CacheRead},
		{u.CacheWrite5m, ps.CacheWrite5m},
		{u.CacheWrite1h, ps.CacheWrite1h},
	} {
		if b.tokens <= 0 {
			continue
		}
		if !ps.Input.set || !b.price.set {
			return 0, 0, ErrUnpriced
		}
		if d := ps.Input.nano - b.price.nano; d >= 0 {
			saved.addMul(uint64(b.tokens), uint64(d))
		} else {
			premium.addMul(uint64(b.tokens), uint64(-d))
		}
	}
	if read, err = saved.divRound(1_000_000); err != nil {
		return 0, 0, err
	}
	// saved − premium, divided by a million, once.
	if !saved.less(premium) {
		net, err = saved.sub(premium).divRound(1_000_000)
	} else {
		net, err = premium.sub(saved).divRoundNeg(1_000_000)
	}
	if err != nil {
		return 0, 0, err
	}
	return read, net, nil
}

func (p *Prices) reasoningPrice() Price {
	if p.Reasoning.set {
		return p.Reasoning
	}
	return p.Output
}

// over fills the prices a tier leaves unset from base.
func (p Prices) over(base *Prices) *Prices {
	for _, f := range []struct{ dst, src *Price }{
		{&p.Input, &base.Input}, {&p.Output, &base.Output}, {&p.CacheRead, &base.CacheRead},
		{&p.CacheWrite5m, &base.CacheWrite5m}, {&p.CacheWrite1h, &base.CacheWrite1h}, {&p.Reasoning, &base.Reasoning},
	} {
		if !f.dst.set {
			*f.dst = *f.src
		}
	}
	p.LongPrompt = nil
	return &p
}

// errOverflow is a cost past int64: over nine billion dollars.
var errOverflow = errors.New("cost overflows")

// uint128 accumulates products without overflow.
type uint128 struct{ hi, lo uint64 }

func (a *uint128) addMul(x, y uint64) {
	hi, lo := bits.Mul64(x, y)
	var carry uint64
	a.lo, carry = bits.Add64(a.lo, lo, 0)
	a.hi, _ = bits.Add64(a.hi, hi, carry)
}

func (a uint128) less(b uint128) bool { return a.hi < b.hi || a.hi == b.hi && a.lo < b.lo }

// sub returns a − b, for b ≤ a.
func (a uint128) sub(b uint128) uint128 {
	lo, borrow := bits.Sub64(a.lo, b.lo, 0)
	hi, _ := bits.Sub64(a.hi, b.hi, borrow)
	return uint128{hi, lo}
}

// divRound divides by d, rounding half up; it fails if the quotient does
// not fit an int64 (a cost of over nine billion dollars).
func (a uint128) divRound(d uint64) (int64, error) { return a.divAdding(d, d/2) }

// divRoundNeg is −a divided by d (an even d), rounding half up as
// divRound does, toward +∞: −2.5 is −2 and −2.6 is −3.
func (a uint128) divRoundNeg(d uint64) (int64, error) {
	q, err := a.divAdding(d, d/2-1)
	return -q, err
}

// divAdding is (a + add) / d, rounded down; it fails past an int64.
func (a uint128) divAdding(d, add uint64) (int64, error) {
	lo, carry := bits.Add64(a.lo, add, 0)
	hi := a.hi + carry
	if hi >= d {
		return 0, errOverflow
	}
	q, _ := bits.Div64(hi, lo, d)
	if q > 1<<63-1 {
		return 0, errOverflow
	}
	return int64(q), nil
}

// WorstCase is the most a request can cost with this many prompt tokens,
// whatever mix of fresh, cached and cache-written tokens they turn out to
// be, and this many output tokens. Budgets reserve it before a request is
// sent. It fails with ErrUnpriced unless input and output are priced, or
// the model is priced by the unit alone (images, seconds, characters,
// queries): nothing is reserved for it, and its units are charged when
// its answer says them.
//
// A cost past int64 is math.MaxInt64, more than any budget, and so is the
// cost of a negative count (what an overflowed sum gives): a worst case
// is never less than the truth.
func (p *Prices) WorstCase(input, output int64) (int64, error) {
	if p != nil && !p.Input.set && !p.Output.set && (p.Image.set || p.Second.set || p.Character.set || p.Query.set) {
		return 0, nil
	}
	if p == nil || !p.Input.set || !p.Output.set {
		return 0, ErrUnpriced
	}
	if input < 0 || output < 0 {
		return math.MaxInt64, nil
	}
	var worst int64
	for _, u := range [...]struct {
		priced bool
		usage  meter.Usage
	}{
		{true, meter.Usage{Input: input, Output: output}},
		{p.CacheRead.set, meter.Usage{CacheRead: input, Output: output}},
		{p.CacheWrite5m.set, meter.Usage{CacheWrite5m: input, Output: output}},
		{p.CacheWrite1h.set, meter.Usage{CacheWrite1h: input, Output: output}},
		// Reasoning can be priced above other output.
		{p.Reasoning.set, meter.Usage{Input: input, Output: output, Reasoning: output}},
	} {
		if !u.priced {
			continue
		}
		c, err := p.Cost(u.usage)
		if err != nil {
			if errors.Is(err, ErrUnpriced) {
				continue // a long-prompt tier without this bucket's price
			}
			if errors.Is(err, errOverflow) {
				return math.MaxInt64, nil
			}
			return 0, err
		}
		worst = max(worst, c)
	}
	return worst, nil
}
