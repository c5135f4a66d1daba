package config

import (
	"slices"
	"strings"
	"sync"
)

// ProviderType is what configuration knows of a provider type (the
// providers[].type setting). Each type registers one, next to its
// implementation (provider.Register).
type ProviderType struct {
	// BaseURL: the provider reaches its upstream at base_url, which must
	// then be an http(s) URL.
	BaseURL bool
	// DefaultBaseURL is base_url when the configuration leaves it out.
	DefaultBaseURL string
	// ModelOptional: targets may leave model out (the public name is sent).
	ModelOptional bool
	// NoKeys: the type authenticates otherwise (a cloud's credentials), so
	// api_key and api_keys are refused.
	NoKeys bool
	// KeepsResponses: the upstream, a Responses API, keeps the responses
	// it makes, so forward_unknown_response_ids is an option of the type.
	KeepsResponses bool
	// Options are the cloud options (Provider's region, project, …, by
	// their YAML names) the type takes; any other that is set is refused.
	Options []string
	// Endpoints are the client endpoints a provider of the type may be
	// said to serve besides its own (Provider.Endpoints); none: the
	// option is refused.
	Endpoints []string
	// Check, when set, checks the type's own rules, reporting each broken
	// one at its member ("region", "access_key_id").
	Check func(p *Provider, bad func(member, format string, args ...any))
	// PriceModel, when set, maps an upstream model id to the price
	// catalogue's (a cloud's "anthropic.claude-…-v1:0" to "claude-…").
	PriceModel func(upstream string) string
}

// PriceModel is the id the price catalogue knows an upstream model of
// the provider type typ by.
func PriceModel(typ, upstream string) string {
	if t, ok := LookupProviderType(typ); ok && t.PriceModel != nil {
		return t.PriceModel(upstream)
	}
	return upstream
}

var (
	typesMu       sync.RWMutex
	providerTypes = map[string]ProviderType{}
)

// RegisterProviderType makes name a valid providers[].type. Types are
// registered at start-up, before any configuration is read.
func RegisterProviderType(name string, t ProviderType) {
	typesMu.Lock()
	defer typesMu.Unlock()
	providerTypes[name] = t
}

// LookupProviderType returns what configuration knows of a provider type.
func LookupProviderType(name string) (ProviderType, bool) {
	typesMu.RLock()
	defer typesMu.RUnlock()
	t, ok := providerTypes[name]
	return t, ok
}

func modelOptional(typ string) bool {
	t, _ := LookupProviderType(typ)
	return t.ModelOptional
}

// providerTypeNames lists the registered types for error messages:
// "anthropic, echo or openai".
func providerTypeNames() string {
	typesMu.RLock()
	names := make([]string, 0, len(providerTypes))
	for n := range providerTypes {
		names = append(names, n)
	}
	typesMu.RUnlock()
	slices.Sort(names)
	switch len(names) {
	case 0:
		return "none registered"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
