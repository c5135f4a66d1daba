package pricing

import (
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/meter"
)

const testCatalogue = `
taken: "2026-11-22"
models:
  - model: claude-sonnet-4-5
    aliases: [claude-sonnet-4-5-20250929]
    provider: anthropic
    input: "3"
    output: "15"
    cache_read: "0.30"
    cache_write_5m: "3.75"
    cache_write_1h: "6"
    source: "https://example.invalid/pricing"
  - model: gemini-x
    provider: google
    input: "1.25"
    output: "10"
    long_prompt: { threshold_tokens: 200000, input: "2.50", output: "15" }
`

func TestParseCatalogue(t *testing.T) {
	c, err := ParseCatalogue([]byte(testCatalogue))
	if err != nil {
		t.Fatal(err)
	}
	if c.Taken != "2026-11-22" || c.Len() != 3 {
		t.Errorf("taken %q, %d ids", c.Taken, c.Len())
	}
	if c.Lookup("claude-sonnet-4-5-20250929") != c.Lookup("claude-sonnet-4-5") || c.Lookup("nope") != nil {
		t.Errorf("aliases or unknown models wrong")
	}
	cost, err := c.Lookup("gemini-x").Cost(meter.Usage{Input: 200001, Output: 1000})
	if want := int64(200001*2500 + 1000*15000); err != nil || cost != want {
		t.Errorf("long prompt cost = %d, %v; want %d", cost, err, want)
	}
	for _, bad := range []string{
		strings.Replace(testCatalogue, `input: "3"`, `input: "three"`, 1),
		strings.Replace(testCatalogue, `provider: google`, `provider: google
    colour: red`, 1),
		strings.Replace(testCatalogue, "gemini-x", "claude-sonnet-4-5", 1),
	} {
		if _, err := ParseCatalogue([]byte(bad)); err == nil {
			t.Errorf("bad catalogue accepted:\n%s", bad)
		}
	}
}
