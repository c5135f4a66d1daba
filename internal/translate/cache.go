package translate

import (
	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/api/responses"
	"github.com/tollgate/tollgate/internal/promptcache"
)

// Cache is what a translated request carries for the upstream's prompt
// cache (models[].prompt_cache, mode auto).
type Cache struct {
	// Breakpoints: mark prompt-cache breakpoints in a request for an
	// Anthropic upstream, as Options say.
	Breakpoints bool
	Options     promptcache.Options
	// Key is the prompt_cache_key an OpenAI-protocol upstream gets when
	// the client sent none; "" sends none.
	Key string
}

// cacheHints adds the cache hints to a translated request, after its
// translator made it.
func cacheHints(out any, c Cache, p *Plan) {
	switch r := out.(type) {
	case *anthropic.MessagesRequest:
		if c.Breakpoints {
			p.CacheBreakpoints = promptcache.Place(r, c.Options)
			p.PlacedBreakpoints = true
		}
	case *openai.ChatRequest:
		if r.PromptCacheKey == "" && !p.Caps.NoPromptCacheKey {
			r.PromptCacheKey = c.Key
		}
	case *responses.Request:
		if r.PromptCacheKey == "" && !p.Caps.NoPromptCacheKey {
			r.PromptCacheKey = c.Key
		}
	}
}
