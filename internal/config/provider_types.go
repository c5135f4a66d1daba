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
