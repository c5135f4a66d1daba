package provider

import (
	"fmt"
	"sync"

	"github.com/tollgate/tollgate/internal/config"
)

// Type is one provider type: the providers[].type setting.
type Type struct {
	Name string
	// Config is what configuration checks and defaults for the type.
	Config config.ProviderType
	// New builds a provider from its validated configuration.
	New func(p config.Provider) (Provider, error)
}

// builtin are the provider types, one line each.
var builtin = []*Type{anthropicType, openAIType, responsesType, bedrockType, vertexType, vertexGeminiType, geminiType, azureType, azureResponsesType, echoType}

var (
	typesMu sync.RWMutex
	types   = map[string]*Type{}
)

func init() {
	for _, t := range builtin {
		Register(t)
	}
}

// Register adds a provider type, and tells configuration about it.
// Register at start-up, before configuration is read.
func Register(t *Type) {
	typesMu.Lock()
	types[t.Name] = t
	typesMu.Unlock()
	config.RegisterProviderType(t.Name, t.Config)
}

// New builds the provider p configures.
func New(p config.Provider) (Provider, error) {
	typesMu.RLock()
	t, ok := types[p.Type]
	typesMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("provider %q: unknown type %q", p.Name, p.Type)
	}
	return t.New(p)
}
