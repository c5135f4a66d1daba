package translate

import (
	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/api/responses"
	"github.com/tollgate/tollgate/internal/promptcache"
)

// Cache is what a translated request carries for the upstream's prompt
// cache.
type Cache struct {
	// Breakpoints: mark prompt-cache breakpoints in a request for an
	// Anthropic upstream, as Options say (models[].prompt_cache, mode
	// auto).
	Breakpoints bool
	Options     promptcache.Options
	// Key is the request's prompt_cache_key for an OpenAI-protocol
	// upstream, derived within its tenant from what identifies its
	// conversation: it replaces any key the translated request carries
	// (the client's own, or one its translator derived from a user id),
	// so that two tenants naming the same key are routed apart upstream;
	// "" leaves the request's as it is.
	Key string
	// AddKey: send Key also when the request carries none (mode auto).
	AddKey bool
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
		r.PromptCacheKey = c.key(r.PromptCacheKey, p)
	case *responses.Request:
		r.PromptCacheKey = c.key(r.PromptCacheKey, p)
	}
}

// key is the prompt_cache_key sent in place of k.
func (c Cache) key(k string, p *Plan) string {
	if c.Key != "" && (k != "" || c.AddKey && !p.Caps.NoPromptCacheKey) {
		return c.Key
	}
	return k
}
