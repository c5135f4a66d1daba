package pricing

import (
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/meter"
)

func TestParsePrice(t *testing.T) {
	for _, tc := range []struct {
		in   string
		nano int64
		str  string
		err  bool
	}{
		{"3", 3_000_000_000, "3", false},
		{"0.075", 75_000_000, "0.075", false},
		{"1.25", 1_250_000_000, "1.25", false},
		{"0.000000001", 1, "0.000000001", false},
		{" 15 ", 15_000_000_000, "15", false},
		{"0.0000000001", 0, "", true}, // ten decimals
		{"-1", 0, "", true},
		{"1e-3", 0, "", true},
		{"", 0, "", true},
		{".5", 0, "", true},
		{"5.", 0, "", true},
		{"99999999999", 0, "", true},
	} {
		p, err := ParsePrice(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("ParsePrice(%q) error = %v, want error %v", tc.in, err, tc.err)
			continue
		}
		if err == nil && (p.nano != tc.nano || p.String() != tc.str) {
			t.Errorf("ParsePrice(%q) = %d (%s), want %d (%s)", tc.in, p.nano, p, tc.nano, tc.str)
		}
	}
}

var sonnet = &Prices{
	Input: MustPrice("3"), Output: MustPrice("15"), CacheRead: MustPrice("0.30"),
	CacheWrite5m: MustPrice("3.75"), CacheWrite1h: MustPrice("6"),
}

func TestCost(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    *Prices
		u    meter.Usage
		want int64
		err  error
	}{
		// 1,000,000 input tokens at $3/M is $3 = 3e9 nano-USD.
		{"input only", sonnet, meter.Usage{Input: 1_000_000}, 3_000_000_000, nil},
		// The LiteLLM#9812 sample: cache writes are billed once, at the write price,
		// never also as input. 3×3 + 12304×3.75 + 550×15 = 9 + 46140 + 8250 = 54399 µ-USD.
		{"cache write billed once", sonnet, meter.Usage{Input: 3, CacheWrite5m: 12304, Output: 550}, 54_399_000, nil},
		// Cache reads at the read price, never as input: 800×0.30 + 200×3 + 50×15.
		{"cache read at read price", sonnet, meter.Usage{Input: 200, CacheRead: 800, Output: 50}, 240_000 + 600_000 + 750_000, nil},
		{"1h writes", sonnet, meter.Usage{CacheWrite1h: 1000}, 6_000_000, nil},
		// Rounded once: 1 token at $0.0000005/M is 0.0005 nano-USD → 0; 1500 of them 0.75 → 1.
		{"round once, half up", &Prices{Input: MustPrice("0.0000005")}, meter.Usage{Input: 1500}, 1, nil},
		{"reasoning at output price by default", sonnet, meter.Usage{Output: 100, Reasoning: 60}, 1_500_000, nil},
		{"reasoning priced", &Prices{Output: MustPrice("10"), Reasoning: MustPrice("20")}, meter.Usage{Output: 100, Reasoning: 60}, 400_000 + 1_200_000, nil},
		{"unpriced bucket with tokens", &Prices{Input: MustPrice("1"), Output: MustPrice("2")}, meter.Usage{Input: 10, CacheRead: 5}, 0, ErrUnpriced},
		{"unpriced bucket without tokens", &Prices{Input: MustPrice("1"), Output: MustPrice("2")}, meter.Usage{Input: 10}, 10_000, nil},
		{"no prices", nil, meter.Usage{Input: 1}, 0, ErrUnpriced},
		{"zero usage is zero cost", sonnet, meter.Usage{}, 0, nil},
		{"long prompt tier", &Prices{Input: MustPrice("1"), Output: MustPrice("2"),
			LongPrompt: &Tier{ThresholdTokens: 100, Prices: Prices{Input: MustPrice("4")}}},
			meter.Usage{Input: 101, Output: 10}, 404_000 + 20_000, nil},
		{"at the threshold: base prices", &Prices{Input: MustPrice("1"), LongPrompt: &Tier{ThresholdTokens: 100, Prices: Prices{Input: MustPrice("4")}}},
			meter.Usage{Input: 100}, 100_000, nil},
		{"huge but exact", &Prices{Input: MustPrice("150")}, meter.Usage{Input: 1 << 40}, 164_926_744_166_400_000, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.p.Cost(tc.u)
			if !errors.Is(err, tc.err) || got != tc.want {
				t.Errorf("Cost(%+v) = %d, %v; want %d, %v", tc.u, got, err, tc.want, tc.err)
			}
		})
	}
}

// Regression: OpenAI's prompt_tokens includes cached tokens. The same upstream
// usage read through the OpenAI convention costs cached tokens at the cached
// price, not twice and not at the full input price.
func TestOpenAICachedTokensAtCachedPrice(t *testing.T) {
	gpt := &Prices{Input: MustPrice("2.50"), Output: MustPrice("10"), CacheRead: MustPrice("1.25")}
	var u meter.Usage
	openai.SetUsage(&u, `{"prompt_tokens":1000,"completion_tokens":50,"prompt_tokens_details":{"cached_tokens":800}}`)
	got, err := gpt.Cost(u)
	if want := int64(200*2500 + 800*1250 + 50*10000); err != nil || got != want {
		t.Errorf("cost = %d, %v; want %d (200 fresh + 800 cached + 50 output)", got, err, want)
	}
}

// Property: cost is a sum over buckets, so it does not depend on how usage
// arrived (split across stream events, or whole); and it is monotone.
func TestCostProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		u := meter.Usage{Input: r.Int64N(1e6), CacheRead: r.Int64N(1e6), CacheWrite5m: r.Int64N(1e5),
			CacheWrite1h: r.Int64N(1e5), Output: r.Int64N(1e5)}
		u.Reasoning = r.Int64N(u.Output + 1)
		c1, err1 := sonnet.Cost(u)
		// The same usage built the way a stream delivers it: message_start then a cumulative message_delta.
		var s meter.Usage
		anthropic.MergeUsage(&s, `{"input_tokens":`+strconv.FormatInt(u.Input, 10)+`,"cache_read_input_tokens":`+strconv.FormatInt(u.CacheRead, 10)+
			`,"cache_creation_input_tokens":`+strconv.FormatInt(u.CacheWrite5m+u.CacheWrite1h, 10)+
			`,"cache_creation":{"ephemeral_5m_input_tokens":`+strconv.FormatInt(u.CacheWrite5m, 10)+`,"ephemeral_1h_input_tokens":`+strconv.FormatInt(u.CacheWrite1h, 10)+`},"output_tokens":1}`)
		anthropic.MergeUsage(&s, `{"output_tokens":`+strconv.FormatInt(u.Output, 10)+`}`)
		s.Reasoning = u.Reasoning
		c2, err2 := sonnet.Cost(s)
		if err1 != nil || err2 != nil || c1 != c2 {
			t.Fatalf("usage %+v: whole %d (%v), streamed %d (%v)", u, c1, err1, c2, err2)
		}
		more := u
		more.Output++
		if c3, _ := sonnet.Cost(more); c3 < c1 {
			t.Fatalf("one more output token lowered the cost: %d < %d", c3, c1)
		}
	}
}

func TestWorstCase(t *testing.T) {
	p := &Prices{Input: MustPrice("3"), Output: MustPrice("15"), CacheRead: MustPrice("0.3"),
		CacheWrite5m: MustPrice("3.75"), CacheWrite1h: MustPrice("6")}
	// 1000 prompt tokens all written to the 1-hour cache: 6000 nano-USD... per token-million:
	// 1000 × 6 / 1e6 USD = 0.006 USD; 500 output × 15 / 1e6 = 0.0075 USD.
	got, err := p.WorstCase(1000, 500)
	if err != nil || got != 13_500_000 {
		t.Errorf("WorstCase = %d, %v; want 13500000", got, err)
	}
	p.LongPrompt = &Tier{ThresholdTokens: 999, Prices: Prices{Input: MustPrice("6"), Output: MustPrice("30")}}
	// Long prompt: input 6 (cache writes keep their base prices), output 30.
	if got, err := p.WorstCase(1000, 500); err != nil || got != 21_000_000 {
		t.Errorf("long prompt WorstCase = %d, %v; want 21000000", got, err)
	}
	if _, err := (&Prices{Input: MustPrice("1")}).WorstCase(1, 1); err != ErrUnpriced {
		t.Errorf("output unpriced: %v", err)
	}
	var none *Prices
	if _, err := none.WorstCase(1, 1); err != ErrUnpriced {
		t.Errorf("nil prices: %v", err)
	}
}

// A worst case is never less than the truth: counts whose cost is past
// int64, and negative counts (an overflowed sum), cost the most there is.
func TestWorstCaseOfAnySize(t *testing.T) {
	p := &Prices{Input: MustPrice("3"), Output: MustPrice("15"), Reasoning: MustPrice("60")}
	for _, c := range [][2]int64{
		{0, math.MaxInt64}, {math.MaxInt64, 0}, {math.MaxInt64, math.MaxInt64}, {1 << 62, 1 << 62},
		{-1, 1000}, {1000, -1}, {math.MinInt64, math.MinInt64}, {0, math.MinInt64},
	} {
		if got, err := p.WorstCase(c[0], c[1]); err != nil || got != math.MaxInt64 {
			t.Errorf("WorstCase(%d, %d) = %d, %v; want math.MaxInt64", c[0], c[1], got, err)
		}
	}
	// Large, but within int64: exact (all output as reasoning, at 60).
	if got, err := p.WorstCase(0, 1<<40); err != nil || got != 65_970_697_666_560_000 {
		t.Errorf("WorstCase(0, 2^40) = %d, %v", got, err)
	}
	if _, err := (&Prices{Input: MustPrice("1")}).WorstCase(-1, -1); err != ErrUnpriced {
		t.Errorf("unpriced, negative counts: %v", err)
	}
}

// Units (images, seconds, characters, queries) cost their per-unit price,
// on top of the tokens; units of a kind without a price are unpriced.
func TestUnitCost(t *testing.T) {
	p, err := Parse("2.50", "10", "", "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.SetUnits("0.04", "0.0001", "0.000015", "0.002"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		u    meter.Usage
		want int64
	}{
		{meter.Usage{Units: 3, Unit: meter.UnitImage}, 120_000_000},
		{meter.Usage{Input: 1000, Units: 2, Unit: meter.UnitImage}, 2_500_000 + 80_000_000},
		{meter.Usage{Units: 61, Unit: meter.UnitSecond}, 6_100_000},
		{meter.Usage{Units: 1000, Unit: meter.UnitCharacter}, 15_000_000},
		{meter.Usage{Units: 1, Unit: meter.UnitQuery}, 2_000_000},
	} {
		if got, err := p.Cost(c.u); err != nil || got != c.want {
			t.Errorf("%+v: %d %v, want %d", c.u, got, err, c.want)
		}
	}
	// A model priced by the image alone bills its images, whatever tokens
	// the answer reports besides.
	perImage := &Prices{}
	if err := perImage.SetUnits("0.04", "", "", ""); err != nil {
		t.Fatal(err)
	}
	if got, err := perImage.Cost(meter.Usage{Input: 50, Output: 4160, Units: 1, Unit: meter.UnitImage}); err != nil || got != 40_000_000 {
		t.Errorf("per image with tokens: %d %v", got, err)
	}
	if w, err := perImage.WorstCase(1000, 1000); err != nil || w != 0 {
		t.Errorf("per image's worst case: %d %v", w, err)
	}
	bare, _ := Parse("1", "1", "", "", "", "")
	if _, err := bare.Cost(meter.Usage{Units: 1, Unit: meter.UnitImage}); err != ErrUnpriced {
		t.Errorf("an image without a price: %v", err)
	}
	if err := p.SetUnits("x", "", "", ""); err == nil || !strings.Contains(err.Error(), "per_image") {
		t.Errorf("a bad per-unit price: %v", err)
	}
}
