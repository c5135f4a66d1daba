// Package route resolves a public model name or alias to its targets.
package route

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/tollgate/tollgate/internal/affinity"
	"github.com/tollgate/tollgate/internal/breaker"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/limit"
	"github.com/tollgate/tollgate/internal/pricing"
	"github.com/tollgate/tollgate/internal/promptcache"
	"github.com/tollgate/tollgate/internal/provider"
	"github.com/tollgate/tollgate/internal/translate"
)

// Model is a public model and the targets that can serve it, in order.
type Model struct {
	Name    string
	Aliases []string
	Targets []Target
	// Caps and Policy drive translation when a client calls the model
	// through the protocol its target does not speak.
	Caps   translate.Caps
	Policy translate.Policy
	// Limits apply to the model across all keys.
	Limits limit.Limits
	// MaxAttempts bounds the upstream attempts per request, across
	// targets; RetryDeadline bounds when a new attempt may start.
	MaxAttempts   int
	RetryDeadline time.Duration
	// Sticky: a conversation's requests go to the same target while it
	// is healthy (PlanFor); else each request draws its own order.
	Sticky bool
	// PromptCache is how the gateway helps the upstream's prompt cache.
	PromptCache promptcache.Settings

	names []string
	tiers [][]Target // Targets by priority, lowest first
	// passName: some target has no configured model (it sends the name a
	// pattern matched); ownPrices: the configuration prices the model.
	passName, ownPrices bool
}

// Default routing bounds.
const (
	DefaultMaxAttempts   = 3
	DefaultRetryDeadline = 30 * time.Second
)

// fallbackPriority puts fallback targets after every other priority.
const fallbackPriority = 1 << 20

// Plan returns the order in which to try the targets for one request:
// priority by priority, lowest first, each priority's targets in a
// weighted random order. With one target it returns Targets itself.
func (m *Model) Plan() []Target { return m.PlanFor(0) }

// PlanFor is Plan for a request of conversation k: each priority's
// targets ranked by weighted rendezvous hashing of k, so that the
// conversation's requests go to the same target, on every replica, and a
// target that fails or whose breaker is open (the picker skips it) moves
// only its own conversations, to their next-ranked target. Without a key,
// or on a model that is not sticky, the order is drawn at random.
func (m *Model) PlanFor(k affinity.Key) []Target {
	if len(m.Targets) == 1 {
		return m.Targets
	}
	out := make([]Target, 0, len(m.Targets))
	for _, tier := range m.tiers {
		out = append(out, tier...)
		if k == 0 || !m.Sticky {
			weightedShuffle(out[len(out)-len(tier):])
		} else {
			rank(out[len(out)-len(tier):], k)
		}
	}
	return out
}

// rank orders ts by their rendezvous score for k, highest first.
func rank(ts []Target, k affinity.Key) {
	if len(ts) < 2 {
		return
	}
	var buf [8]float64
	scores := buf[:0]
	for i := range ts {
		scores = append(scores, affinity.Score(k, ts[i].id, ts[i].Weight))
	}
	for i := 1; i < len(ts); i++ { // insertion sort: a tier holds a few targets
		for j := i; j > 0 && scores[j] > scores[j-1]; j-- {
			scores[j], scores[j-1] = scores[j-1], scores[j]
			ts[j], ts[j-1] = ts[j-1], ts[j]
		}
	}
}

// weightedShuffle orders ts so that each place is drawn with probability
// proportional to weight among the targets not yet placed.
func weightedShuffle(ts []Target) {
	for i := 0; i < len(ts)-1; i++ {
		sum := 0
		for _, t := range ts[i:] {
			sum += t.Weight
		}
		n := rand.IntN(sum)
		for j := i; j < len(ts); j++ {
			if n -= ts[j].Weight; n < 0 {
				ts[i], ts[j] = ts[j], ts[i]
				break
			}
		}
	}
}

// Names is the model's name and its aliases: every name a ledger record
// of it may carry. The slice is shared; callers must not change it.
func (m *Model) Names() []string { return m.names }

// Target is one (provider, upstream model) pair.
type Target struct {
	Provider provider.Provider
	// Model is the id sent upstream in place of the client's model name.
	Model string
	// QuotedModel is Model as a JSON string, ready to splice into a body.
	QuotedModel []byte
	// Prices of what this target runs; nil when unpriced (cost unknown).
	Prices *pricing.Prices
	// Weight shares requests within a priority; Priority orders targets,
	// lowest first (fallback targets come after all others).
	Weight, Priority int
	// Breaker is the target's circuit breaker, shared by every model that
	// sends to the same provider and upstream model.
	Breaker *breaker.Breaker
	// Name is "provider/model"; NameHeader holds it as a header value,
	// built once (it must not be modified).
	Name       string
	NameHeader []string
	// AllowBetas are the model's and the provider's anthropic_betas
	// allowlists (config.FilterBetas); empty when neither sets one, and
	// every beta a client sends is forwarded.
	AllowBetas []func(name string) bool
	// ForwardUnknownResponseIDs: a previous_response_id the gateway never
	// stored is sent on to this target (its provider's
	// forward_unknown_response_ids).
	ForwardUnknownResponseIDs bool

	id uint64 // the target's identity in rendezvous rankings
	// passName: no model is configured; a request that matched a pattern
	// sends the name it asked for.
	passName     bool
	providerType string
}

// tiers groups targets by priority, lowest first, keeping their order.
func tiers(ts []Target) [][]Target {
	sorted := slices.Clone(ts)
	slices.SortStableFunc(sorted, func(a, b Target) int { return a.Priority - b.Priority })
	var out [][]Target
	for i := 0; i < len(sorted); {
		j := i
		for j < len(sorted) && sorted[j].Priority == sorted[i].Priority {
			j++
		}
		out = append(out, sorted[i:j:j])
		i = j
	}
	return out
}

// Priced reports whether every target has input and output prices, so
// that a budget can count the model's cost whichever target answers.
func (m *Model) Priced() bool {
	for _, t := range m.Targets {
		if _, err := t.Prices.WorstCase(1, 1); err != nil {
			return false
		}
	}
	return true
}

// Table maps model names and aliases to models. It is immutable after New
// (but for the models it keeps for names that matched a pattern) and safe
// for concurrent use.
type Table struct {
	byName    map[string]*Model
	patterns  []pattern // in match order
	matched   matched
	models    []*Model
	catalogue *pricing.Catalogue
}

// New builds the table from configuration and the constructed providers.
// Prices come from a model's pricing in configuration, else from catalogue
// (which may be nil) by upstream model id, else by the public name.
func New(cfg *config.Config, providers map[string]provider.Provider, catalogue *pricing.Catalogue) (*Table, error) {
	t := &Table{byName: make(map[string]*Model), matched: matched{m: map[string]*Model{}}, catalogue: catalogue}
	breakers := map[[2]string]*breaker.Breaker{}
	for _, mc := range cfg.Models {
		lim, err := mc.Limits.Limit()
		if err != nil {
			return nil, fmt.Errorf("model %q: limits: %w", mc.Name, err)
		}
		m := &Model{Name: mc.Name, Aliases: mc.Aliases, Caps: mc.Capabilities, Policy: policy(mc.Translation), Limits: lim,
			names: append([]string{mc.Name}, mc.Aliases...), Sticky: mc.Routing.Sticky == nil || *mc.Routing.Sticky,
			PromptCache: mc.PromptCache, ownPrices: mc.Pricing != nil}
		seen := map[string]int{}
		for _, tc := range mc.Targets {
			p, ok := providers[tc.Provider]
			if !ok {
				return nil, fmt.Errorf("model %q: unknown provider %q", mc.Name, tc.Provider)
			}
			upstream := tc.Model
			if upstream == "" {
				upstream = mc.Name // echo targets answer under the public name
			}
			ids := []string{upstream}
			if pc := cfg.ProviderByName(tc.Provider); pc != nil {
				// A cloud's model id as it is (price files list many), then
				// as the catalogue knows the model.
				ids = append(ids, config.PriceModel(pc.Type, upstream))
			}
			prices, err := targetPrices(mc, ids, catalogue)
			if err != nil {
				return nil, err
			}
			pc := cfg.ProviderByName(tc.Provider)
			var ptype string
			if pc != nil {
				ptype = pc.Type
			}
			if prices == nil {
				prices = catalogPrices(nil, nil, ptype)
			}
			weight, priority := tc.Weight, tc.Priority
			if weight == 0 {
				weight = 1
			}
			if tc.Fallback {
				priority += fallbackPriority
			}
			var allowBetas []func(string) bool
			if mc.AnthropicBetas != nil {
				allowBetas = append(allowBetas, mc.AnthropicBetas.Allows)
			}
			if pc != nil && pc.AnthropicBetas != nil {
				allowBetas = append(allowBetas, pc.AnthropicBetas.Allows)
			}
			b := breakers[[2]string{tc.Provider, upstream}]
			if b == nil {
				var bc config.Breaker
				if pc != nil {
					bc = pc.Breaker
				}
				b = breaker.New(breaker.Settings{Failures: bc.Failures, ErrorRate: bc.ErrorRate, Window: bc.Window, Cooldown: bc.Cooldown})
				breakers[[2]string{tc.Provider, upstream}] = b
			}
			name := tc.Provider + "/" + upstream
			// The same target listed twice still ranks as two.
			id := affinity.ID(name + "#" + strconv.Itoa(seen[name]))
			seen[name]++
			m.Targets = append(m.Targets, Target{Provider: p, Model: upstream, QuotedModel: jsonx.AppendQuote(nil, upstream), Prices: prices,
				Weight: weight, Priority: priority, Breaker: b,
				Name: name, NameHeader: []string{name}, AllowBetas: allowBetas, id: id,
				passName: tc.Model == "", providerType: ptype,
				ForwardUnknownResponseIDs: pc != nil && pc.ForwardUnknownResponseIDs})
			m.passName = m.passName || tc.Model == ""
		}
		m.tiers = tiers(m.Targets)
		m.MaxAttempts = mc.Routing.MaxAttempts
		if m.MaxAttempts == 0 {
			m.MaxAttempts = min(len(m.Targets), DefaultMaxAttempts)
		}
		m.RetryDeadline = mc.Routing.RetryDeadline
		if m.RetryDeadline == 0 {
			m.RetryDeadline = DefaultRetryDeadline
		}
		t.models = append(t.models, m)
		for _, n := range m.names {
			switch {
			case config.IsPattern(n):
				t.patterns = append(t.patterns, newPattern(n, len(t.patterns), m))
			case n != m.Name && m.passName && config.IsPattern(m.Name):
				// The exact alias of a pattern is sent upstream as it is.
				t.byName[n] = t.forName(m, n)
			default:
				t.byName[n] = m
			}
		}
	}
	sortPatterns(t.patterns)
	return t, nil
}

// Lookup finds a model by name or alias; nil when unknown. Exact names
// and aliases come first; failing them, the patterns that match name in
// their order (config.Model): the model is then made for name, and kept.
// An exact name is found without allocating, and so is a name that
// matched before.
func (t *Table) Lookup(name []byte) *Model {
	if m := t.byName[string(name)]; m != nil {
		return m
	}
	if len(t.patterns) == 0 {
		return nil
	}
	return t.lookupPattern(name)
}

// Breakers returns every target's circuit breaker, by target name
// (provider/model).
func (t *Table) Breakers() map[string]*breaker.Breaker {
	out := map[string]*breaker.Breaker{}
	for _, m := range t.models {
		for _, tg := range m.Targets {
			out[tg.Name] = tg.Breaker
		}
	}
	return out
}

// Models lists the models in configuration order.
func (t *Table) Models() []*Model { return t.models }

func policy(s string) translate.Policy {
	switch s {
	case "strict":
		return translate.PolicyStrict
	case "lenient":
		return translate.PolicyLenient
	}
	return translate.PolicyDefault
}

// targetPrices resolves what a target costs.
func targetPrices(mc config.Model, upstreamIDs []string, catalogue *pricing.Catalogue) (*pricing.Prices, error) {
	if pc := mc.Pricing; pc != nil {
		p, err := parsePrices(pc.Prices)
		if err != nil {
			return nil, fmt.Errorf("model %q: pricing: %w", mc.Name, err)
		}
		if lp := pc.LongPrompt; lp != nil {
			tp, err := parsePrices(lp.Prices)
			if err != nil {
				return nil, fmt.Errorf("model %q: pricing.long_prompt: %w", mc.Name, err)
			}
			p.LongPrompt = &pricing.Tier{ThresholdTokens: lp.ThresholdTokens, Prices: *tp}
		}
		return p, nil
	}
	if p := catalogPrices(catalogue, upstreamIDs, ""); p != nil {
		return p, nil
	}
	return catalogue.Lookup(mc.Name), nil
}

// catalogPrices is the catalogue's prices of the first of ids it knows;
// else, for an echo target, nothing (echo costs nothing, so a USD budget
// never refuses it); else nil.
func catalogPrices(catalogue *pricing.Catalogue, ids []string, providerType string) *pricing.Prices {
	for _, id := range ids {
		if p := catalogue.Lookup(id); p != nil {
			return p
		}
	}
	if providerType == config.TypeEcho {
		return freePrices
	}
	return nil
}

var freePrices = func() *pricing.Prices {
	p, err := pricing.Parse("0", "0", "0", "0", "0", "")
	if err != nil {
		panic(err)
	}
	return p
}()

func parsePrices(c config.Prices) (*pricing.Prices, error) {
	p, err := pricing.Parse(string(c.Input), string(c.Output), string(c.CacheRead),
		string(c.CacheWrite5m), string(c.CacheWrite1h), string(c.Reasoning))
	if err != nil {
		return nil, err
	}
	if err := p.SetUnits(string(c.PerImage), string(c.PerSecond), string(c.PerCharacter), string(c.PerQuery)); err != nil {
		return nil, err
	}
	return p, nil
}
