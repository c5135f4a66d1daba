package pricing

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// A price file in the format of LiteLLM's model_prices_and_context_window.json,
// which many tools keep and share: one JSON object, a member per model id,
// with prices in USD per token written as JSON numbers (3e-06).
//
//	"claude-sonnet-4-5-20250929": {"input_cost_per_token": 3e-06, "output_cost_per_token": 1.5e-05,
//	    "cache_read_input_token_cost": 3e-07, "cache_creation_input_token_cost": 3.75e-06,
//	    "litellm_provider": "anthropic", "mode": "chat"}
//
// Numbers are read as decimal text and converted exactly. A price that is
// not a whole number of nano-USD per million tokens, such as the float
// artefact 1.0000000000000002e-06, is rounded to the nearest one, and the
// catalogue notes it (Catalogue.Rounded); one that would round to zero
// from above is refused. Members without input_cost_per_token (images,
// audio, a "sample_spec") price nothing and are skipped.

// liteLLMEntry is one model's members that tollgate reads.
type liteLLMEntry struct {
	Provider           string      `json:"litellm_provider"`
	Input              json.Number `json:"input_cost_per_token"`
	Output             json.Number `json:"output_cost_per_token"`
	CacheRead          json.Number `json:"cache_read_input_token_cost"`
	CacheWrite         json.Number `json:"cache_creation_input_token_cost"`
	CacheWrite1h       json.Number `json:"cache_creation_input_token_cost_above_1hr"`
	Reasoning          json.Number `json:"output_cost_per_reasoning_token"`
	InputAbove200k     json.Number `json:"input_cost_per_token_above_200k_tokens"`
	OutputAbove200k    json.Number `json:"output_cost_per_token_above_200k_tokens"`
	CacheReadAbove200k json.Number `json:"cache_read_input_token_cost_above_200k_tokens"`
	CacheWriteAbove200 json.Number `json:"cache_creation_input_token_cost_above_200k_tokens"`
	// Per-unit prices of the endpoints billed apart from tokens (USD per
	// unit); an image or a second is priced on input or on output.
	InputImage     json.Number `json:"input_cost_per_image"`
	OutputImage    json.Number `json:"output_cost_per_image"`
	InputSecond    json.Number `json:"input_cost_per_second"`
	OutputSecond   json.Number `json:"output_cost_per_second"`
	InputCharacter json.Number `json:"input_cost_per_character"`
	InputQuery     json.Number `json:"input_cost_per_query"`
}

// unitPrices are the entry's per-unit prices as Prices takes them (USD
// per million units), each the first of its kind given.
func (e liteLLMEntry) unitPrices() (image, second, character, query json.Number) {
	return cmp.Or(e.OutputImage, e.InputImage), cmp.Or(e.InputSecond, e.OutputSecond), e.InputCharacter, e.InputQuery
}

// Skipped is a member of a price file that priced nothing, and why.
type Skipped struct {
	Model, Reason string
}

// Rounded is a member of a price file with a price rounded to the
// nano-USD per million tokens; Detail says which, from what.
type Rounded struct {
	Model, Detail string
}

// ParseLiteLLM reads a LiteLLM price file. A model is priced under its id
// and, for ids that begin with their provider ("bedrock/…",
// "vertex_ai/…", "azure/…"), also under the rest, unless another entry
// has that id. It returns the members it skipped, with the reason.
func ParseLiteLLM(data []byte) (*Catalogue, []Skipped, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var raw map[string]json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return nil, nil, fmt.Errorf("price file: want one JSON object of models (LiteLLM's format): %w", err)
	}
	ids := make([]string, 0, len(raw))
	for id := range raw {
		ids = append(ids, id)
	}
	slices.Sort(ids) // a stable choice where short ids collide
	c := &Catalogue{models: make(map[string]*Prices, len(raw))}
	var skipped []Skipped
	short := map[string]*Prices{}
	for _, id := range ids {
		if id == "sample_spec" {
			continue
		}
		var e liteLLMEntry
		d := json.NewDecoder(bytes.NewReader(raw[id]))
		d.UseNumber()
		if err := d.Decode(&e); err != nil {
			skipped = append(skipped, Skipped{id, "not an object of prices: " + err.Error()})
			continue
		}
		if image, second, character, query := e.unitPrices(); e.Input == "" && image+second+character+query == "" {
			skipped = append(skipped, Skipped{id, "no input_cost_per_token"})
			continue
		}
		p, rounded, err := e.prices()
		if err != nil {
			skipped = append(skipped, Skipped{id, err.Error()})
			continue
		}
		for _, r := range rounded {
			c.Rounded = append(c.Rounded, Rounded{id, r})
		}
		c.models[id] = p
		if rest, ok := strings.CutPrefix(id, e.Provider+"/"); ok && e.Provider != "" && rest != "" {
			if _, taken := short[rest]; !taken {
				short[rest] = p
			}
		}
	}
	for id, p := range short {
		if _, ok := c.models[id]; !ok {
			c.models[id] = p
		}
	}
	if len(c.models) == 0 {
		return nil, skipped, errors.New("price file: no model in it has a price")
	}
	return c, skipped, nil
}

// prices converts the entry's per-token prices to Prices; rounded says
// which were rounded, from what.
func (e liteLLMEntry) prices() (p *Prices, rounded []string, err error) {
	convert := func(name string, v json.Number) (string, error) {
		t, r, err := perMillion(v)
		if err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		if r {
			pr, err := ParsePrice(t)
			if err != nil {
				return "", fmt.Errorf("%s: %w", name, err)
			}
			rounded = append(rounded, fmt.Sprintf("%s %s USD per token: %s USD per million tokens, rounded to the nano-USD", name, v, pr))
		}
		return t, nil
	}
	texts := make([]string, 6)
	for i, n := range []struct {
		name string
		v    json.Number
	}{
		{"input_cost_per_token", e.Input}, {"output_cost_per_token", e.Output}, {"cache_read_input_token_cost", e.CacheRead},
		{"cache_creation_input_token_cost", e.CacheWrite}, {"cache_creation_input_token_cost_above_1hr", e.CacheWrite1h},
		{"output_cost_per_reasoning_token", e.Reasoning},
	} {
		if texts[i], err = convert(n.name, n.v); err != nil {
			return nil, nil, err
		}
	}
	if p, err = Parse(texts[0], texts[1], texts[2], texts[3], texts[4], texts[5]); err != nil {
		return nil, nil, err
	}
	image, second, character, query := e.unitPrices()
	for _, u := range []struct {
		name string
		v    json.Number
		dst  *Price
	}{{"cost_per_image", image, &p.Image}, {"cost_per_second", second, &p.Second}, {"input_cost_per_character", character, &p.Character},
		{"input_cost_per_query", query, &p.Query}} {
		t, err := convert(u.name, u.v) // USD per unit as per million units, as token prices
		if err != nil {
			return nil, nil, err
		}
		if t == "" {
			continue
		}
		if *u.dst, err = ParsePrice(t); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", u.name, err)
		}
	}
	if e.InputAbove200k != "" || e.OutputAbove200k != "" {
		tier := make([]string, 4)
		for i, n := range []struct {
			name string
			v    json.Number
		}{
			{"input_cost_per_token_above_200k_tokens", e.InputAbove200k}, {"output_cost_per_token_above_200k_tokens", e.OutputAbove200k},
			{"cache_read_input_token_cost_above_200k_tokens", e.CacheReadAbove200k}, {"cache_creation_input_token_cost_above_200k_tokens", e.CacheWriteAbove200},
		} {
			if tier[i], err = convert(n.name, n.v); err != nil {
				return nil, nil, fmt.Errorf("the prices above 200k tokens: %w", err)
			}
		}
		tp, err := parseOptional(tier[0], tier[1], tier[2], tier[3])
		if err != nil {
			return nil, nil, err
		}
		p.LongPrompt = &Tier{ThresholdTokens: 200_000, Prices: *tp}
	}
	return p, rounded, nil
}

// parseOptional parses prices that may all be unset (a tier fills the
// rest from the base prices).
func parseOptional(input, output, cacheRead, write5m string) (*Prices, error) {
	var p Prices
	for _, f := range []struct {
		dst *Price
		s   string
	}{{&p.Input, input}, {&p.Output, output}, {&p.CacheRead, cacheRead}, {&p.CacheWrite5m, write5m}} {
		if f.s == "" {
			continue
		}
		v, err := ParsePrice(f.s)
		if err != nil {
			return nil, err
		}
		*f.dst = v
	}
	return &p, nil
}

var million = big.NewRat(1_000_000, 1)

// perMillion turns a price per token, as JSON wrote it, into decimal text
// per million tokens, to the nano-USD: exactly when it can, else rounded
// to the nearest (half away from zero), which rounded reports. A price
// that would round to zero from above is refused. "" stays "".
func perMillion(n json.Number) (text string, rounded bool, err error) {
	if n == "" {
		return "", false, nil
	}
	// A price per token is a small number: an exponent far from zero
	// (1e-999999999) would only make big arithmetic slow.
	if i := strings.IndexAny(string(n), "eE"); i >= 0 {
		if e, err := strconv.Atoi(string(n[i+1:])); err != nil || e < -40 || e > 20 {
			return "", false, fmt.Errorf("%s is out of range for a price", n)
		}
	}
	if len(n) > 64 {
		return "", false, fmt.Errorf("%s has too many digits for a price", n[:64])
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok || r.Sign() < 0 {
		return "", false, fmt.Errorf("%s is not a price", n)
	}
	r.Mul(r, million)
	scaled := new(big.Rat).Mul(r, nanoPerUSD) // nano-USD per million tokens
	if scaled.IsInt() {
		return r.FloatString(maxPriceDecimals), false, nil
	}
	// floor(scaled + 1/2): the nearest whole number, half away from zero.
	num, den := scaled.Num(), scaled.Denom()
	q := new(big.Int).Quo(new(big.Int).Add(new(big.Int).Lsh(num, 1), den), new(big.Int).Lsh(den, 1))
	if q.Sign() == 0 {
		return "", false, fmt.Errorf("%s USD per token is less than half a nano-USD per million tokens", n)
	}
	return new(big.Rat).SetFrac(q, nanoPerUSD.Num()).FloatString(maxPriceDecimals), true, nil
}

var nanoPerUSD = big.NewRat(1_000_000_000, 1)

// Merge returns a catalogue of every model of cats, each priced by the
// first catalogue that has it.
func Merge(cats ...*Catalogue) *Catalogue {
	out := &Catalogue{models: map[string]*Prices{}}
	for _, c := range cats {
		if c == nil {
			continue
		}
		if out.Taken == "" {
			out.Taken = c.Taken
		}
		for id, p := range c.models {
			if _, ok := out.models[id]; !ok {
				out.models[id] = p
			}
		}
	}
	return out
}

// Models lists the ids a catalogue prices, sorted.
func (c *Catalogue) Models() []string {
	ids := make([]string, 0, len(c.models))
	for id := range c.models {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
