package pricing

import (
	"bytes"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Catalogue maps upstream model ids to their list prices.
type Catalogue struct {
	// Taken is the date the prices were read from the providers' pages.
	Taken string
	// Rounded lists the prices of a price file (ParseLiteLLM) that were
	// rounded to the nano-USD per million tokens.
	Rounded []Rounded
	models  map[string]*Prices
}

type catalogueFile struct {
	Taken  string          `yaml:"taken"`
	Models []catalogueItem `yaml:"models"`
}

type catalogueItem struct {
	Model      string   `yaml:"model"`
	Aliases    []string `yaml:"aliases"`
	Provider   string   `yaml:"provider"`
	Source     string   `yaml:"source"`
	Taken      string   `yaml:"taken"`
	priceTexts `yaml:",inline"`
	LongPrompt *catalogueTier `yaml:"long_prompt"`
}

type catalogueTier struct {
	ThresholdTokens int64 `yaml:"threshold_tokens"`
	priceTexts      `yaml:",inline"`
}

// priceTexts are prices as written, per bucket.
type priceTexts struct {
	Input     string `yaml:"input"`
	Output    string `yaml:"output"`
	CacheRead string `yaml:"cache_read"`
	Write5m   string `yaml:"cache_write_5m"`
	Write1h   string `yaml:"cache_write_1h"`
	Reasoning string `yaml:"reasoning"`
}

func (t priceTexts) parse() (*Prices, error) {
	return Parse(t.Input, t.Output, t.CacheRead, t.Write5m, t.Write1h, t.Reasoning)
}

// ParseCatalogue reads a catalogue (the format of catalogue.yaml).
func ParseCatalogue(data []byte) (*Catalogue, error) {
	var f catalogueFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("price catalogue: %w", err)
	}
	c := &Catalogue{Taken: f.Taken, models: make(map[string]*Prices)}
	for i, it := range f.Models {
		p, err := it.priceTexts.parse()
		if err != nil {
			return nil, fmt.Errorf("price catalogue: models[%d] (%s): %w", i, it.Model, err)
		}
		if t := it.LongPrompt; t != nil {
			tp, err := t.priceTexts.parse()
			if err != nil || t.ThresholdTokens <= 0 {
				return nil, fmt.Errorf("price catalogue: models[%d] (%s).long_prompt: bad tier (%v)", i, it.Model, err)
			}
			p.LongPrompt = &Tier{ThresholdTokens: t.ThresholdTokens, Prices: *tp}
		}
		for _, id := range append([]string{it.Model}, it.Aliases...) {
			if id == "" {
				return nil, fmt.Errorf("price catalogue: models[%d]: empty model id", i)
			}
			if _, dup := c.models[id]; dup {
				return nil, fmt.Errorf("price catalogue: model %q listed twice", id)
			}
			c.models[id] = p
		}
	}
	return c, nil
}

// Lookup returns the prices of a model id, or nil.
func (c *Catalogue) Lookup(model string) *Prices {
	if c == nil {
		return nil
	}
	return c.models[model]
}

// Len is the number of model ids priced.
func (c *Catalogue) Len() int { return len(c.models) }

// Parse builds Prices from decimal texts; empty means unpriced.
func Parse(input, output, cacheRead, write5m, write1h, reasoning string) (*Prices, error) {
	p := &Prices{}
	for _, f := range []struct {
		name string
		s    string
		dst  *Price
	}{
		{"input", input, &p.Input}, {"output", output, &p.Output}, {"cache_read", cacheRead, &p.CacheRead},
		{"cache_write_5m", write5m, &p.CacheWrite5m}, {"cache_write_1h", write1h, &p.CacheWrite1h}, {"reasoning", reasoning, &p.Reasoning},
	} {
		if f.s == "" {
			continue
		}
		v, err := ParsePrice(f.s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
		*f.dst = v
	}
	return p, nil
}
