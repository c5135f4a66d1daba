package route

import (
	"fmt"
	"slices"
	"testing"

	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/pricing"
	"github.com/tollgate/tollgate/internal/provider"
)

const patternYAML = `
providers:
  - { name: ant, type: anthropic, api_key: k }
  - { name: oai, type: openai, api_key: k }
  - { name: demo, type: echo }
models:
  - { name: claude-opus-4-8, targets: [ { provider: ant, model: claude-opus-4-8-20260101 } ] }
  - { name: "claude-*", aliases: [claude-latest], targets: [ { provider: ant } ] }
  - { name: "claude-opus-*", targets: [ { provider: ant, model: claude-opus-4-8-20260101 } ] }
  - { name: "gpt-*-mini", targets: [ { provider: oai, model: gpt-small } ] }
  - { name: "gpt-*", targets: [ { provider: oai } ], pricing: { input: "1", output: "2" } }
  - { name: "*-mini", targets: [ { provider: oai, model: any-mini } ] }
  - { name: echo, aliases: ["o*", "gemini-*"], targets: [ { provider: demo } ] }
`

// patternTable builds patternYAML's table; the catalogue prices
// claude-haiku-4-5 only.
func patternTable(t testing.TB) *Table {
	t.Helper()
	cfg, err := config.Parse([]byte(patternYAML), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	cat, _, err := pricing.ParseLiteLLM([]byte(`{"claude-haiku-4-5": {"input_cost_per_token": 1e-06, "output_cost_per_token": 5e-06}}`))
	if err != nil {
		t.Fatal(err)
	}
	providers := map[string]provider.Provider{}
	for _, p := range cfg.Providers {
		providers[p.Name] = provider.NewEcho(p.Name)
	}
	tab, err := New(cfg, providers, cat)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func TestPatternLookup(t *testing.T) {
	tab := patternTable(t)
	for _, tc := range []struct {
		name, model, upstream string // model "": unknown
		priced                bool
	}{
		{name: "claude-opus-4-8", model: "claude-opus-4-8", upstream: "claude-opus-4-8-20260101"}, // exact before any pattern
		{name: "claude-opus-4-9", model: "claude-opus-*", upstream: "claude-opus-4-8-20260101"},   // the longer pattern
		{name: "claude-haiku-4-5", model: "claude-*", upstream: "claude-haiku-4-5", priced: true}, // the asked name, priced as itself
		{name: "claude-sonnet-4-5", model: "claude-*", upstream: "claude-sonnet-4-5"},
		{name: "claude-latest", model: "claude-*", upstream: "claude-latest"}, // an exact alias of a pattern is sent as it is
		{name: "claude-", model: "claude-*", upstream: "claude-"},             // "*" matches nothing too
		{name: "gpt-5-mini", model: "gpt-*-mini", upstream: "gpt-small"},      // 9 characters beat gpt-*'s 4 and *-mini's 5
		{name: "gpt-5-codex", model: "gpt-*", upstream: "gpt-5-codex", priced: true},
		{name: "o4-mini", model: "*-mini", upstream: "any-mini"}, // 5 characters beat o*'s 1
		{name: "o3", model: "echo", upstream: "o3", priced: true},
		{name: "gemini-2.5-pro", model: "echo", upstream: "gemini-2.5-pro", priced: true},
		{name: "echo", model: "echo", upstream: "echo", priced: true},
		{name: "claude", model: ""},
		{name: "mistral-large", model: ""},
		{name: "", model: ""},
	} {
		m := tab.Lookup([]byte(tc.name))
		switch {
		case tc.model == "":
			if m != nil {
				t.Errorf("%q: found %q, want none", tc.name, m.Name)
			}
			continue
		case m == nil:
			t.Errorf("%q: not found, want %q", tc.name, tc.model)
			continue
		}
		tg := m.Targets[0]
		if m.Name != tc.model || tg.Model != tc.upstream || string(tg.QuotedModel) != `"`+tc.upstream+`"` ||
			tg.Name != tg.Provider.Name()+"/"+tc.upstream || m.Priced() != tc.priced {
			t.Errorf("%q: model %q, upstream %q (%s, %s), priced %v; want %q, %q, priced %v",
				tc.name, m.Name, tg.Model, tg.QuotedModel, tg.Name, m.Priced(), tc.model, tc.upstream, tc.priced)
		}
		// A key that lists the asked name may use what it matched.
		if !slices.Contains(m.Aliases, tc.name) && m.Name != tc.name {
			t.Errorf("%q: aliases %q lack the name", tc.name, m.Aliases)
		}
		// The model's ledger names are its configuration's.
		if m.Names()[0] != m.Name || slices.Contains(m.Names(), tc.name) && tc.name != m.Name && tc.name != "claude-latest" {
			t.Errorf("%q: names %q", tc.name, m.Names())
		}
	}
	// The configured models are left as they were.
	for _, m := range tab.Models() {
		if m.Name == "claude-*" && (m.Targets[0].Model != "claude-*" || len(m.Aliases) != 1) {
			t.Errorf("claude-* changed: %q %q", m.Targets[0].Model, m.Aliases)
		}
	}
}

// Names that matched are kept, up to a bound; past it they are still
// found.
func TestPatternMatchesAreBounded(t *testing.T) {
	tab := patternTable(t)
	for i := range maxMatched + 10 {
		name := fmt.Sprintf("claude-x-%d", i)
		if m := tab.Lookup([]byte(name)); m == nil || m.Targets[0].Model != name {
			t.Fatalf("%s: %v", name, m)
		}
	}
	if n := len(tab.matched.m); n != maxMatched {
		t.Errorf("%d names kept, want %d", n, maxMatched)
	}
	if a := testing.AllocsPerRun(100, func() { tab.Lookup([]byte("claude-x-1")) }); a != 0 {
		t.Errorf("a kept name: %v allocations", a)
	}
	if a := testing.AllocsPerRun(100, func() { tab.Lookup([]byte("claude-opus-4-8")) }); a != 0 {
		t.Errorf("an exact name: %v allocations", a)
	}
}

// BenchmarkLookup: an exact name, a name a pattern matched before, and an
// unknown name that every pattern is tried against.
func BenchmarkLookup(b *testing.B) {
	tab := patternTable(b)
	for _, name := range []string{"claude-opus-4-8", "claude-sonnet-4-5", "mistral-large-2411"} {
		b.Run(name, func(b *testing.B) {
			n := []byte(name)
			b.ReportAllocs()
			for b.Loop() {
				tab.Lookup(n)
			}
		})
	}
}
