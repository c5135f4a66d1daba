package pricing

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/tollgate/tollgate/internal/meter"
)

func TestSavings(t *testing.T) {
	tiered := &Prices{Input: MustPrice("1"), Output: MustPrice("2"), CacheRead: MustPrice("0.1"), CacheWrite5m: MustPrice("1.25"),
		LongPrompt: &Tier{ThresholdTokens: 100, Prices: Prices{Input: MustPrice("4"), CacheRead: MustPrice("0.4")}}}
	for _, tc := range []struct {
		name               string
		p                  *Prices
		u                  meter.Usage
		net, read, premium int64
		err                error
	}{
		// 1,000,000 tokens read from the cache at $0.30/M instead of $3/M saved $2.70.
		{"cache read", sonnet, meter.Usage{CacheRead: 1_000_000}, 2_700_000_000, 2_700_000_000, 0, nil},
		// A 5-minute write costs $3.75/M, $0.75/M above input: a negative saving.
		{"5m write only", sonnet, meter.Usage{Input: 10, CacheWrite5m: 1_000_000, Output: 5}, -750_000_000, 0, 750_000_000, nil},
		{"1h write only", sonnet, meter.Usage{CacheWrite1h: 1000}, -3_000_000, 0, 3_000_000, nil},
		// The LiteLLM#9812 sample: 12304 × (3 − 3.75) = −9228 µ-USD.
		{"write outweighs", sonnet, meter.Usage{Input: 3, CacheWrite5m: 12304, Output: 550}, -9_228_000, 0, 9_228_000, nil},
		// 800 × 2.70 − 100 × 0.75 − 10 × 3 = 2160 − 75 − 30 µ-USD.
		{"reads and writes", sonnet, meter.Usage{Input: 200, CacheRead: 800, CacheWrite5m: 100, CacheWrite1h: 10, Output: 50},
			2_055_000, 2_160_000, 105_000, nil},
		{"no cache tokens", sonnet, meter.Usage{Input: 100, Output: 10}, 0, 0, 0, nil},
		{"no cache tokens, unpriced", nil, meter.Usage{Input: 100, Output: 10}, 0, 0, 0, nil},
		{"nothing", &Prices{}, meter.Usage{}, 0, 0, 0, nil},
		// Past the threshold (101 prompt tokens) the tier's input and cache read: 100 × (4 − 0.4).
		{"long prompt tier", tiered, meter.Usage{Input: 1, CacheRead: 100, Output: 7}, 360_000, 360_000, 0, nil},
		// At the threshold, the base prices: 100 × (1 − 0.1).
		{"at the threshold: base prices", tiered, meter.Usage{CacheRead: 100}, 90_000, 90_000, 0, nil},
		// The tier leaves the 5m write price at its base, $1.25, below its
		// input of $4: such a write saves (2.75 × 101), and counts as gross saving.
		{"tier input above a base write price", tiered, meter.Usage{CacheWrite5m: 101}, 277_750, 277_750, 0, nil},
		// Rounded once, half up: 1000 × 0.0005 nano-USD is 0.5 → 1.
		{"round once, half up", &Prices{Input: MustPrice("0.0000015"), CacheRead: MustPrice("0.000001")},
			meter.Usage{CacheRead: 1000}, 1, 1, 0, nil},
		// 999 × 0.0005 = 0.4995 → 0, although 333 tokens alone would be 0.1665: one rounding, of the sum.
		{"round the sum, not the terms", &Prices{Input: MustPrice("0.0000015"), CacheRead: MustPrice("0.000001"), CacheWrite5m: MustPrice("0.000001")},
			meter.Usage{CacheRead: 666, CacheWrite5m: 333}, 0, 0, 0, nil},
		// Negative amounts round half up too, toward +∞: −0.5 → 0, −0.6 → −1.
		{"negative half rounds up", &Prices{Input: MustPrice("0.000001"), CacheWrite5m: MustPrice("0.0000015")},
			meter.Usage{CacheWrite5m: 1000}, 0, 0, 0, nil},
		{"negative past half", &Prices{Input: MustPrice("0.000001"), CacheWrite5m: MustPrice("0.0000015")},
			meter.Usage{CacheWrite5m: 1200}, -1, 0, 1, nil},
		// Read 0.5 → 1 and net 0: the premium is what makes the net exactly (1, within a nano-USD of 0.5).
		{"parts make the net", &Prices{Input: MustPrice("0.000001"), CacheRead: MustPrice("0.0000005"), CacheWrite5m: MustPrice("0.0000015")},
			meter.Usage{CacheRead: 1000, CacheWrite5m: 1000}, 0, 1, 1, nil},
		{"huge but exact", &Prices{Input: MustPrice("150"), CacheRead: MustPrice("15")}, meter.Usage{CacheRead: 1 << 40},
			148_434_069_749_760_000, 148_434_069_749_760_000, 0, nil},
		{"unpriced cache read", &Prices{Input: MustPrice("1"), Output: MustPrice("2")}, meter.Usage{Input: 10, CacheRead: 5}, 0, 0, 0, ErrUnpriced},
		{"unpriced input", &Prices{CacheRead: MustPrice("0.1")}, meter.Usage{CacheRead: 5}, 0, 0, 0, ErrUnpriced},
		{"unpriced 1h write", &Prices{Input: MustPrice("3"), CacheRead: MustPrice("0.3"), CacheWrite5m: MustPrice("3.75")},
			meter.Usage{CacheRead: 5, CacheWrite1h: 1}, 0, 0, 0, ErrUnpriced},
		// Unpriced buckets without tokens do not matter (output here).
		{"unpriced bucket without tokens", &Prices{Input: MustPrice("1"), CacheRead: MustPrice("0.1")},
			meter.Usage{CacheRead: 10, Output: 5}, 9000, 9000, 0, nil},
		{"no prices", nil, meter.Usage{CacheRead: 1}, 0, 0, 0, ErrUnpriced},
		// The tier has no cache-read price and inherits the base's: unpriced there too.
		{"tier without a price", &Prices{Input: MustPrice("1"), LongPrompt: &Tier{ThresholdTokens: 1, Prices: Prices{Input: MustPrice("2")}}},
			meter.Usage{CacheRead: 2}, 0, 0, 0, ErrUnpriced},
	} {
		t.Run(tc.name, func(t *testing.T) {
			net, err := tc.p.Savings(tc.u)
			if !errors.Is(err, tc.err) || net != tc.net {
				t.Errorf("Savings(%+v) = %d, %v; want %d, %v", tc.u, net, err, tc.net, tc.err)
			}
			read, err := tc.p.CacheReadSavings(tc.u)
			if !errors.Is(err, tc.err) || read != tc.read {
				t.Errorf("CacheReadSavings(%+v) = %d, %v; want %d, %v", tc.u, read, err, tc.read, tc.err)
			}
			premium, err := tc.p.CacheWritePremium(tc.u)
			if !errors.Is(err, tc.err) || premium != tc.premium {
				t.Errorf("CacheWritePremium(%+v) = %d, %v; want %d, %v", tc.u, premium, err, tc.premium, tc.err)
			}
		})
	}
}

// asInput is u with its cache tokens billed as fresh input: what u would
// have cost without prompt caching. Its prompt is as long, so the same
// long-prompt tier applies.
func asInput(u meter.Usage) meter.Usage {
	u.Input += u.CacheRead + u.CacheWrite5m + u.CacheWrite1h
	u.CacheRead, u.CacheWrite5m, u.CacheWrite1h = 0, 0, 0
	return u
}

// Cost(u) + Savings(u) = Cost(asInput(u)). Algebraically: with in the input
// price and p_b bucket b's, both costs bill the output, the reasoning and
// the fresh input alike, and
//
//	Cost(asInput(u)) − Cost(u) = Σ_b t_b·in − Σ_b t_b·p_b = Σ_b t_b·(in − p_b) = Savings(u)
//
// over the cache buckets b, at the prices of one tier (the prompt is as
// long). Each side is a sum of terms t·p/10⁶ nano-USD; with prices in
// whole thousandths of a USD per million tokens (10⁶ nano-USD per million)
// every term is a whole number, so rounding changes none and the identity
// holds exactly. Finer prices can leave fractions that each of the three
// rounds on its own: then it holds within one nano-USD.
func TestSavingsIsCostAsInputLessCost(t *testing.T) {
	fine := &Prices{Input: MustPrice("0.0375"), Output: MustPrice("0.15"), CacheRead: MustPrice("0.009375"),
		CacheWrite5m: MustPrice("0.046875"), CacheWrite1h: MustPrice("0.075")}
	haiku := &Prices{Input: MustPrice("0.10"), Output: MustPrice("0.50"), CacheRead: MustPrice("0.01"),
		CacheWrite5m: MustPrice("0.125"), CacheWrite1h: MustPrice("0.20"),
		LongPrompt: &Tier{ThresholdTokens: 100_000, Prices: Prices{Input: MustPrice("0.50"), Output: MustPrice("2.50"),
			CacheRead: MustPrice("0.05"), CacheWrite5m: MustPrice("0.625"), CacheWrite1h: MustPrice("1.00")}}}
	check := func(t *testing.T, p *Prices, u meter.Usage, exact bool) {
		t.Helper()
		cost, err1 := p.Cost(u)
		saved, err2 := p.Savings(u)
		uncached, err3 := p.Cost(asInput(u))
		read, err4 := p.CacheReadSavings(u)
		premium, err5 := p.CacheWritePremium(u)
		if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
			t.Fatalf("%+v: %v", u, err)
		}
		if d := cost + saved - uncached; d != 0 && (exact || d < -1 || d > 1) {
			t.Errorf("%+v: Cost %d + Savings %d = %d; Cost as input %d", u, cost, saved, cost+saved, uncached)
		}
		if read < 0 || premium < 0 || read-premium != saved {
			t.Errorf("%+v: read %d, premium %d, net %d: want read, premium ≥ 0 and read − premium = net", u, read, premium, saved)
		}
	}
	for _, u := range []meter.Usage{
		{},
		{Input: 1000, Output: 100},
		{CacheRead: 1},
		{Input: 200, CacheRead: 800, Output: 50},
		{Input: 3, CacheWrite5m: 12304, Output: 550},
		{Input: 12, CacheRead: 2048, CacheWrite5m: 512, CacheWrite1h: 256, Output: 310, Reasoning: 100},
		{Input: 1, CacheRead: 99_999},        // at haiku's threshold: base prices
		{Input: 2, CacheRead: 99_999},        // past it, by its cache reads alone: the tier's, both sides
		{Input: 5000, CacheWrite1h: 150_000}, // a long prompt, all written
		{CacheRead: 1 << 40, CacheWrite5m: 1 << 30},
	} {
		check(t, sonnet, u, true)
		check(t, haiku, u, true)
		check(t, fine, u, false)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		u := meter.Usage{Input: r.Int64N(300_000), CacheRead: r.Int64N(300_000), CacheWrite5m: r.Int64N(100_000),
			CacheWrite1h: r.Int64N(100_000), Output: r.Int64N(100_000)}
		u.Reasoning = r.Int64N(u.Output + 1)
		check(t, sonnet, u, true)
		check(t, haiku, u, true)
		check(t, fine, u, false)
	}
}
