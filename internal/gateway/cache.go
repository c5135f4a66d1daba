package gateway

import (
	"net/http"
	"strconv"

	"github.com/tollgate/tollgate/internal/affinity"
	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/promptcache"
	"github.com/tollgate/tollgate/internal/provider"
	"github.com/tollgate/tollgate/internal/translate"
)

// Prompt caching: a conversation's requests go to the same target and
// pool key (sticky routing, keyed by the dialect's Affinity), and carry
// the hints the upstream's cache needs (breakpoints, a prompt_cache_key),
// as the model's prompt_cache says.

// routingKey is the request's conversation, within its tenant (the key's
// Tenant): two tenants sending the same prompt, or naming the same
// prompt_cache_key or user, are ranked apart and get different derived
// keys. A request that continues a stored conversation takes the key its
// dialect's hook stored with it (the key of the conversation's first
// request, which its owner's tenant scoped), unless the client names one
// (prompt_cache_key); one stored without a key is read from the whole
// conversation, as the hook expanded it.
func (c *call) routingKey() affinity.Key {
	d := c.x.dialect
	if d.Affinity == nil {
		return 0
	}
	k, named := d.Affinity(&c.s)
	c.namedKey = named
	if c.turn != nil && !named {
		if stored := c.turn.Affinity(); stored != 0 {
			return stored
		}
	}
	return k.Within(c.x.owner())
}

// stickyKey is the key a provider's pool ranks its keys by: none when the
// model spreads requests at random.
func (c *call) stickyKey() affinity.Key {
	if !c.m.Sticky {
		return 0
	}
	return c.key
}

// cacheOptions are the model's breakpoint settings.
func (c *call) cacheOptions() promptcache.Options {
	return promptcache.Options{TTL: c.m.PromptCache.TTL, MinTokens: c.m.Caps.CacheMinTokens}
}

// cacheKey is the prompt_cache_key sent to an OpenAI-protocol upstream:
// derived from the conversation within its tenant, so that every replica
// sends the same, and two tenants never the same. It takes the place of
// the client's own, from which it is then derived, in every mode; it is
// added where the client sent none in mode auto.
func (c *call) cacheKey() string {
	if c.key == 0 {
		return ""
	}
	return "tollgate-" + c.key.Hex()
}

// translatedCache is what a translated request carries for the cache.
func (c *call) translatedCache() translate.Cache {
	if c.m.PromptCache.For(true) != promptcache.ModeAuto {
		return translate.Cache{Key: c.cacheKey()}
	}
	return translate.Cache{Breakpoints: true, Options: c.cacheOptions(), Key: c.cacheKey(), AddKey: true}
}

// passthroughCache scopes the client's own cache key to its tenant, and
// adds the cache hints to a pass-through request when the model's mode
// for it is auto (client by default: the client's bytes go as they are,
// but for the key).
func (c *call) passthroughCache(d *dialect.Dialect, req *provider.Request) error {
	auto := c.m.PromptCache.For(false) == promptcache.ModeAuto && c.op == dialect.Generate
	if d.CacheHints == nil || !auto && !c.namedKey {
		return nil
	}
	out, n, err := d.CacheHints(req.Body.Bytes(), dialect.CacheHints{Breakpoints: auto, Options: c.cacheOptions(),
		Key: c.cacheKey(), AddKey: auto && !c.m.Caps.NoPromptCacheKey})
	if err != nil {
		return &Error{Status: http.StatusInternalServerError, Kind: dialect.Internal, Message: "internal error preparing the upstream request", Err: err}
	}
	if out != nil {
		req.Body, req.Hold = provider.Body{out}, nil
	}
	if n >= 0 {
		c.w.Header()["Tollgate-Cache-Breakpoints"] = []string{strconv.Itoa(n)}
	}
	return nil
}

// placedHeader reports the breakpoints a translation added.
func placedHeader(h http.Header, p *translate.Plan) {
	if p.PlacedBreakpoints {
		h["Tollgate-Cache-Breakpoints"] = []string{strconv.Itoa(p.CacheBreakpoints)}
	}
}
