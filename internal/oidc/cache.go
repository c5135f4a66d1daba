package oidc

import (
	"crypto/sha256"
	"sync"
	"time"
)

const (
	// maxCachedTokens bounds the per-token cache.
	maxCachedTokens = 10_000
	// failureTTL is how long a token that failed verification is
	// remembered, so that a client retrying it costs nothing.
	failureTTL = 10 * time.Second
	// sweepEvery spaces full sweeps for expired entries when the cache is
	// full; between sweeps an arbitrary entry makes room.
	sweepEvery = time.Second
)

// tokenCache remembers verification results by the token's SHA-256, so a
// token used again costs a hash, no signature check and no fetch. An entry
// lives until the token's exp, never beyond.
type tokenCache struct {
	max int

	mu        sync.Mutex
	m         map[[sha256.Size]byte]cacheEntry
	lastSweep time.Time
}

type cacheEntry struct {
	id    Identity
	err   error
	until time.Time
}

func newTokenCache(max int) *tokenCache {
	return &tokenCache{max: max, m: make(map[[sha256.Size]byte]cacheEntry)}
}

func (c *tokenCache) get(k [sha256.Size]byte, now time.Time) (cacheEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	if !ok {
		return cacheEntry{}, false
	}
	if !now.Before(e.until) {
		delete(c.m, k)
		return cacheEntry{}, false
	}
	return e, true
}

func (c *tokenCache) put(k [sha256.Size]byte, e cacheEntry, now time.Time) {
	if !now.Before(e.until) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[k]; !ok && len(c.m) >= c.max {
		if now.Sub(c.lastSweep) >= sweepEvery {
			c.lastSweep = now
			for k, e := range c.m {
				if !now.Before(e.until) {
					delete(c.m, k)
				}
			}
		}
		// Map iteration starts at a random entry: evicting the first
		// one met is a random eviction.
		for k := range c.m {
			if len(c.m) < c.max {
				break
			}
			delete(c.m, k)
		}
	}
	c.m[k] = e
}

func (c *tokenCache) clear() {
	c.mu.Lock()
	clear(c.m)
	c.mu.Unlock()
}

func (c *tokenCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
