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

// routingKey is the request's conversation. A Responses request that
// continues a stored response takes the key stored with it (the key of
// the conversation's first request), unless the client names one
// (prompt_cache_key); one stored without a key is read from the whole
// conversation.
func (c *call) routingKey() affinity.Key {
	d := c.x.dialect
	if d.Affinity == nil {
		return 0
	}
	st := c.state
	if st == nil || st.expanded == nil {
		k, _ := d.Affinity(&c.s)
		return k
	}
	k, named := d.Affinity(&st.expandedScan)
	if !named && st.prev.Affinity != 0 {
		return affinity.Key(st.prev.Affinity)
	}
	return k
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

// cacheKey is the prompt_cache_key sent to an OpenAI-protocol upstream
// when the client sent none: derived from the conversation, so every
// replica sends the same.
func (c *call) cacheKey() string {
	if c.key == 0 || c.m.Caps.NoPromptCacheKey {
		return ""
	}
	return "tollgate-" + c.key.Hex()
}

// translatedCache is what a translated request carries for the cache.
func (c *call) translatedCache() translate.Cache {
	if c.m.PromptCache.For(true) != promptcache.ModeAuto {
		return translate.Cache{}
	}
	return translate.Cache{Breakpoints: true, Options: c.cacheOptions(), Key: c.cacheKey()}
}

// passthroughCache adds the cache hints to a pass-through request, when
// the model's mode for it is auto (client by default: the client's bytes
// go as they are).
func (c *call) passthroughCache(d *dialect.Dialect, req *provider.Request) error {
	if d.CacheHints == nil || c.m.PromptCache.For(false) != promptcache.ModeAuto || c.op != dialect.Generate {
		return nil
	}
	out, n, err := d.CacheHints(req.Body.Bytes(), dialect.CacheHints{Options: c.cacheOptions(), Key: c.cacheKey()})
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
