package route

import (
	"bytes"
	"cmp"
	"slices"
	"strings"
	"sync"

	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/jsonx"
)

// pattern is a model name or alias with "*"s (config.IsPattern).
type pattern struct {
	parts   [][]byte // the text between the "*"s: parts[0] is a prefix, the last a suffix
	literal int      // characters besides "*": the more, the more specific
	order   int      // declaration order in the file
	m       *Model
}

func newPattern(glob string, order int, m *Model) pattern {
	p := pattern{order: order, m: m, literal: len(glob) - strings.Count(glob, "*")}
	for _, s := range strings.Split(glob, "*") {
		p.parts = append(p.parts, []byte(s))
	}
	return p
}

// match reports whether name matches the pattern; "*" matches any run of
// bytes, none too.
func (p *pattern) match(name []byte) bool {
	first, last := p.parts[0], p.parts[len(p.parts)-1]
	if len(name) < p.literal || !bytes.HasPrefix(name, first) || !bytes.HasSuffix(name, last) {
		return false
	}
	rest := name[len(first) : len(name)-len(last)]
	for _, part := range p.parts[1 : len(p.parts)-1] {
		i := bytes.Index(rest, part)
		if i < 0 {
			return false
		}
		rest = rest[i+len(part):]
	}
	return true
}

// sortPatterns puts ps in match order: the most characters besides "*"
// first, then the first declared.
func sortPatterns(ps []pattern) {
	slices.SortFunc(ps, func(a, b pattern) int {
		return cmp.Or(b.literal-a.literal, a.order-b.order)
	})
}

// maxMatched bounds the models kept for names that matched a pattern: a
// client sending ever new names costs one small allocation per request
// past it, never unbounded memory.
const maxMatched = 4096

// matched keeps, per requested name, the model a pattern made for it.
type matched struct {
	mu sync.RWMutex
	m  map[string]*Model
}

// lookupPattern finds the model of the first pattern that matches name
// (the patterns are in match order), made for that name.
func (t *Table) lookupPattern(name []byte) *Model {
	t.matched.mu.RLock()
	m := t.matched.m[string(name)]
	t.matched.mu.RUnlock()
	if m != nil {
		return m
	}
	for i := range t.patterns {
		if p := &t.patterns[i]; p.match(name) {
			m = t.forName(p.m, string(name))
			break
		}
	}
	if m == nil {
		return nil
	}
	t.matched.mu.Lock()
	if len(t.matched.m) < maxMatched {
		t.matched.m[m.Aliases[len(m.Aliases)-1]] = m // the name, as forName added it
	}
	t.matched.mu.Unlock()
	return m
}

// forName is m as a request for name (which one of its patterns matched)
// sees it: name is its last alias, so that a key listing that name may
// use it, and its targets without a configured model send name upstream,
// priced as name. Everything else (breakers, limits, ledger names) is m's.
func (t *Table) forName(m *Model, name string) *Model {
	d := *m
	d.Aliases = append(slices.Clip(m.Aliases), name)
	if !m.passName {
		return &d
	}
	d.Targets = slices.Clone(m.Targets)
	for i := range d.Targets {
		tg := &d.Targets[i]
		if !tg.passName {
			continue
		}
		tg.Model = name
		tg.QuotedModel = jsonx.AppendQuote(nil, name)
		tg.Name = tg.Provider.Name() + "/" + name
		tg.NameHeader = []string{tg.Name}
		if !m.ownPrices {
			ids := []string{name, config.PriceModel(tg.providerType, name)}
			tg.Prices = catalogPrices(t.catalogue, ids, tg.providerType)
		}
	}
	d.tiers = tiers(d.Targets)
	return &d
}
