package pricing

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/meter"
)

func TestParseLiteLLM(t *testing.T) {
	data, err := os.ReadFile("testdata/litellm_prices.json")
	if err != nil {
		t.Fatal(err)
	}
	c, skipped, err := ParseLiteLLM(data)
	if err != nil {
		t.Fatal(err)
	}
	// Per million tokens, exactly.
	for id, want := range map[string][6]string{
		"claude-sonnet-4-5-20250929":                          {"3", "15", "0.3", "3.75", "6", "unpriced"},
		"bedrock/us.anthropic.claude-haiku-4-5-20251001-v1:0": {"1.1", "5.5", "unpriced", "unpriced", "unpriced", "unpriced"},
		"us.anthropic.claude-haiku-4-5-20251001-v1:0":         {"1.1", "5.5", "unpriced", "unpriced", "unpriced", "unpriced"},
		"prod-gpt-4o":    {"2.5", "10", "1.25", "unpriced", "unpriced", "10"},
		"my-local-model": {"0", "0", "unpriced", "unpriced", "unpriced", "unpriced"},
		"too-precise":    {"1", "2", "unpriced", "unpriced", "unpriced", "unpriced"}, // a float artefact, rounded
	} {
		p := c.Lookup(id)
		if p == nil {
			t.Errorf("%s: not priced", id)
			continue
		}
		got := [6]string{p.Input.String(), p.Output.String(), p.CacheRead.String(), p.CacheWrite5m.String(), p.CacheWrite1h.String(), p.Reasoning.String()}
		if got != want {
			t.Errorf("%s: %v, want %v", id, got, want)
		}
	}
	// The long-prompt tier: a request over 200k prompt tokens at its prices.
	p := c.Lookup("claude-sonnet-4-5-20250929")
	if p.LongPrompt == nil || p.LongPrompt.ThresholdTokens != 200_000 {
		t.Fatalf("tier %+v", p.LongPrompt)
	}
	cost, err := p.Cost(meter.Usage{Input: 250_000, Output: 1000})
	if want := int64(250_000*6_000 + 1000*22_500); err != nil || cost != want {
		t.Errorf("long prompt cost %d (%v), want %d nano-USD", cost, err, want)
	}
	reasons := map[string]string{}
	for _, s := range skipped {
		reasons[s.Model] = s.Reason
	}
	for id, want := range map[string]string{
		"dall-e-3":      "no input_cost_per_token",
		"negative":      "not a price",
		"not-an-object": "not an object",
	} {
		if !strings.Contains(reasons[id], want) {
			t.Errorf("%s: skipped for %q, want %q", id, reasons[id], want)
		}
	}
	if _, ok := reasons["too-precise"]; ok {
		t.Error("too-precise: skipped, want rounded")
	}
	if want := []Rounded{{"too-precise", "input_cost_per_token 1.0000000000000002e-06 USD per token: 1 USD per million tokens, rounded to the nano-USD"}}; !slices.Equal(c.Rounded, want) {
		t.Errorf("rounded: %q, want %q", c.Rounded, want)
	}
	if _, ok := reasons["sample_spec"]; ok || c.Lookup("sample_spec") != nil {
		t.Error("sample_spec is LiteLLM's documentation, not a model")
	}
	for _, bad := range []string{`[]`, `{"a": {"mode": "chat"}}`, `not json`} {
		if _, _, err := ParseLiteLLM([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

// TestMergePrecedence: the first catalogue that prices a model wins.
func TestMergePrecedence(t *testing.T) {
	file, _, err := ParseLiteLLM([]byte(`{"claude-sonnet-4-5": {"input_cost_per_token": 1e-06, "output_cost_per_token": 2e-06}}`))
	if err != nil {
		t.Fatal(err)
	}
	builtin, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	m := Merge(file, builtin)
	if got := m.Lookup("claude-sonnet-4-5").Input.String(); got != "1" {
		t.Errorf("the file's price: %s", got)
	}
	if m.Lookup("claude-sonnet-4-5-20250929") != builtin.Lookup("claude-sonnet-4-5-20250929") || m.Len() < builtin.Len() {
		t.Error("the built-in catalogue's other models are kept")
	}
}

// FuzzParseLiteLLM: any file is either refused or yields prices that
// each parse back from their own text.
func FuzzParseLiteLLM(f *testing.F) {
	data, _ := os.ReadFile("testdata/litellm_prices.json")
	f.Add(data)
	f.Add([]byte(`{"m": {"input_cost_per_token": 1e-300, "output_cost_per_token": 1e300}}`))
	f.Add([]byte(`{"a/b": {"litellm_provider": "a", "input_cost_per_token": 0.1}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		c, _, err := ParseLiteLLM(in)
		if err != nil {
			return
		}
		for _, id := range c.Models() {
			p := c.Lookup(id)
			for _, pr := range []Price{p.Input, p.Output, p.CacheRead, p.CacheWrite5m, p.CacheWrite1h, p.Reasoning} {
				if !pr.IsSet() {
					continue
				}
				back, err := ParsePrice(pr.String())
				if err != nil || back != pr {
					t.Fatalf("%s: %s does not parse back (%v)", id, pr, err)
				}
			}
		}
	})
}

// Prices are kept to the nano-USD per million tokens: exact ones as they
// are, others rounded to the nearest, half away from zero; one that would
// round to nothing is refused.
func TestPerMillionRounding(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		rounded  bool
		err      string
	}{
		{in: "3e-06", want: "3.000000000"},
		{in: "0", want: "0.000000000"},
		{in: "1e-15", want: "0.000000001"},
		{in: "1.0000000000000002e-06", want: "1.000000000", rounded: true},
		{in: "2.9999999999999997e-06", want: "3.000000000", rounded: true},
		{in: "1.5e-15", want: "0.000000002", rounded: true}, // half away from zero
		{in: "1.4999e-15", want: "0.000000001", rounded: true},
		{in: "4.9e-16", err: "less than half a nano-USD"},
		{in: "-1e-6", err: "not a price"},
	} {
		got, rounded, err := perMillion(json.Number(tc.in))
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %q, %v; want error %q", tc.in, got, err, tc.err)
			}
		case err != nil || got != tc.want || rounded != tc.rounded:
			t.Errorf("%s: %q rounded=%v (%v); want %q rounded=%v", tc.in, got, rounded, err, tc.want, tc.rounded)
		}
	}
}

// Models priced per unit, not per token (images, audio, rerank), are read
// with their unit prices.
func TestLiteLLMUnitPrices(t *testing.T) {
	c, skipped, err := ParseLiteLLM([]byte(`{
  "dall-e-3": {"litellm_provider": "openai", "mode": "image_generation", "output_cost_per_image": 0.04},
  "whisper-1": {"litellm_provider": "openai", "mode": "audio_transcription", "input_cost_per_second": 0.0001},
  "tts-1": {"litellm_provider": "openai", "mode": "audio_speech", "input_cost_per_character": 1.5e-05},
  "rerank-v3.5": {"litellm_provider": "cohere", "mode": "rerank", "input_cost_per_query": 0.002},
  "nothing": {"litellm_provider": "openai", "mode": "chat"}
}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(skipped) != 1 || skipped[0].Model != "nothing" {
		t.Errorf("skipped: %v", skipped)
	}
	for model, want := range map[string]struct {
		u    meter.Usage
		cost int64
	}{
		"dall-e-3":    {meter.Usage{Units: 2, Unit: meter.UnitImage}, 80_000_000},
		"whisper-1":   {meter.Usage{Units: 600, Unit: meter.UnitSecond}, 60_000_000},
		"tts-1":       {meter.Usage{Units: 4000, Unit: meter.UnitCharacter}, 60_000_000},
		"rerank-v3.5": {meter.Usage{Units: 40, Unit: meter.UnitQuery}, 80_000_000},
	} {
		if got, err := c.Lookup(model).Cost(want.u); err != nil || got != want.cost {
			t.Errorf("%s: %d %v, want %d", model, got, err, want.cost)
		}
	}
}
