package auth

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tollgate/tollgate/internal/clock"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/limit"
	"github.com/tollgate/tollgate/internal/store"
)

// KeyStore is where virtual keys live (the database).
type KeyStore interface {
	KeyByHash(ctx context.Context, hash []byte) (store.Key, error)
	TouchKeys(ctx context.Context, used map[string]time.Time) error
}

// Key is a virtual key as a request sees it.
type Key struct {
	ID   string
	Name string
	// UserID owns the key ("" none); TeamID is the team it acts in ("":
	// the owner's primary team).
	UserID, TeamID string
	// models holds the allowed names and aliases; nil allows every model.
	models    map[string]struct{}
	expiresAt time.Time // zero: never
	revoked   bool
	use       *keyUse

	// Limits are the key's own limits (before configured defaults), and
	// ModelLimits its limits per model name or alias.
	Limits      limit.Limits
	ModelLimits map[string]limit.Limits
}

// Tenant names whose traffic the key's requests are: what the gateway
// scopes the state requests share by (derived prompt-cache keys, sticky
// routing), so that one tenant can neither pin nor observe another's
// traffic through it. Each key is its own tenant, named by its id
// ("key_…"; the keys of a team would share the team's id); nil, the
// master key, is the operator's "".
func (k *Key) Tenant() string {
	if k == nil {
		return ""
	}
	return k.ID
}

// LimitsFor returns the key's limits for the model with this name and
// aliases, if it has any.
func (k *Key) LimitsFor(name string, aliases []string) (limit.Limits, bool) {
	if l, ok := k.ModelLimits[name]; ok {
		return l, true
	}
	for _, a := range aliases {
		if l, ok := k.ModelLimits[a]; ok {
			return l, true
		}
	}
	return limit.Limits{}, false
}

// AllowsModel reports whether the key may call the model with this name
// and aliases: the key's list may name it by any of them.
func (k *Key) AllowsModel(name string, aliases []string) bool {
	if k.models == nil {
		return true
	}
	if _, ok := k.models[name]; ok {
		return true
	}
	for _, a := range aliases {
		if _, ok := k.models[a]; ok {
			return true
		}
	}
	return false
}

// keyUse tracks when a key was last used; it outlives cache refreshes.
type keyUse struct {
	last    atomic.Int64 // unix milliseconds
	flushed int64        // what was last written; the flusher's alone
}

// Cache timings. A cached key is served as it is for SoftTTL; the first
// request after that refreshes it in the background, and after HardTTL a
// request waits for the database. So a key revoked on another replica
// stops working there within HardTTL (5 s) — within SoftTTL plus a
// query's time on a replica that is serving it.
const (
	SoftTTL = 2 * time.Second
	HardTTL = 5 * time.Second
	// maxNegative bounds the cached "no such key" answers, so a flood of
	// random keys cannot grow memory without limit.
	maxNegative = 10_000
	// touchInterval is how often last-used times are written.
	touchInterval = 10 * time.Second
	// digestsInterval is how often the digests of the keys that exist
	// are read again (see Cache.exists): a key made on another replica is
	// told from a guess within it.
	digestsInterval = 30 * time.Second
)

// keyDigests is a KeyStore that lists the digests of its keys that are
// not revoked (store.Store does).
type keyDigests interface {
	KeyHashes(ctx context.Context) ([][]byte, error)
}

type entry struct {
	key        *Key // nil: no such key
	fetched    time.Time
	refreshing atomic.Bool
}

// Cache looks virtual keys up by digest. It is safe for concurrent use.
type Cache struct {
	store KeyStore
	log   *slog.Logger
	now   func() time.Time

	entries   sync.Map // [sha256.Size]byte → *entry
	negatives atomic.Int64

	useMu sync.Mutex
	uses  map[string]*keyUse // by key id, so refreshes keep the last-used time

	// digests are the keys that existed, not revoked, when last read
	// (nil until then, or when the store cannot list them): a key among
	// them is no guess, even before it is first looked up.
	digestMu sync.Mutex
	digests  atomic.Pointer[map[[sha256.Size]byte]struct{}]

	stop chan struct{}
	done chan struct{}
}

// NewCache returns a cache over st, with the digests of the keys that
// exist read, and starts its background writer of last-used times and
// reader of those digests; Close stops them.
func NewCache(st KeyStore, logger *slog.Logger) *Cache {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c := &Cache{store: st, log: logger, now: clock.Now, uses: map[string]*keyUse{}, stop: make(chan struct{}), done: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), HardTTL)
	c.readDigests(ctx)
	cancel()
	go c.run()
	return c
}

// Lookup returns the key with this digest, checking revocation and expiry.
// When ctx ends before the key is read, it returns ctx's cause.
func (c *Cache) Lookup(ctx context.Context, hash [sha256.Size]byte) (*Key, error) {
	now := c.now()
	v, ok := c.entries.Load(hash)
	var e *entry
	if ok {
		e = v.(*entry)
		age := now.Sub(e.fetched)
		switch {
		case age >= HardTTL:
			e = nil
		case age >= SoftTTL && e.refreshing.CompareAndSwap(false, true):
			go c.refresh(hash)
		}
	}
	if e == nil {
		var err error
		if e, err = c.fetch(ctx, hash); err != nil {
			if ok {
				// The database is unreachable: a key known a moment ago
				// keeps working (nobody can revoke it meanwhile).
				e = v.(*entry)
				c.log.Warn("auth: key database unreachable; serving a cached key", "error", err)
			} else if ctx.Err() != nil {
				// The caller left (a client reset its stream) while the key
				// was read: the database is not at fault.
				return nil, context.Cause(ctx)
			} else {
				c.log.Warn("auth: key database unreachable", "error", err)
				return nil, ErrUnavailable
			}
		}
	}
	k := e.key
	switch {
	case k == nil:
		return nil, ErrInvalidKey
	case k.revoked:
		return nil, ErrRevokedKey
	case !k.expiresAt.IsZero() && !now.Before(k.expiresAt):
		return nil, ErrExpiredKey
	}
	k.use.last.Store(now.UnixMilli())
	return k, nil
}

// holds reports whether a valid key has this digest as far as memory
// tells, however old: a key the cache holds, or one among the digests of
// the keys that exist, which Lookup then checks. The failed-auth throttle
// lets such a key through from an address it slows, so that a guesser
// sharing the address (a NAT, a proxy) cannot keep a real key out.
func (c *Cache) holds(hash [sha256.Size]byte) bool {
	if v, ok := c.entries.Load(hash); ok {
		k := v.(*entry).key
		return k != nil && !k.revoked
	}
	if d := c.digests.Load(); d != nil {
		_, ok := (*d)[hash]
		return ok
	}
	return false
}

// Known adds a key just made on this replica to the digests of the keys
// that exist, before they are next read.
func (c *Cache) Known(hash []byte) {
	if len(hash) != sha256.Size {
		return
	}
	c.digestMu.Lock()
	defer c.digestMu.Unlock()
	old := c.digests.Load()
	if old == nil {
		return // the store lists none: nothing to add to
	}
	next := make(map[[sha256.Size]byte]struct{}, len(*old)+1)
	for h := range *old {
		next[h] = struct{}{}
	}
	next[[sha256.Size]byte(hash)] = struct{}{}
	c.digests.Store(&next)
}

// readDigests reads the digests of the keys that exist again.
func (c *Cache) readDigests(ctx context.Context) {
	ks, ok := c.store.(keyDigests)
	if !ok {
		return
	}
	hashes, err := ks.KeyHashes(ctx)
	if err != nil {
		c.log.Warn("auth: reading the keys' digests failed; keys not used yet may be slowed with guesses from their address", "error", err)
		return
	}
	next := make(map[[sha256.Size]byte]struct{}, len(hashes))
	for _, h := range hashes {
		if len(h) == sha256.Size {
			next[[sha256.Size]byte(h)] = struct{}{}
		}
	}
	c.digestMu.Lock()
	c.digests.Store(&next)
	c.digestMu.Unlock()
}

func (c *Cache) refresh(hash [sha256.Size]byte) {
	ctx, cancel := context.WithTimeout(context.Background(), HardTTL)
	defer cancel()
	if _, err := c.fetch(ctx, hash); err != nil {
		c.log.Warn("auth: refreshing a cached key failed", "error", err)
		if v, ok := c.entries.Load(hash); ok {
			v.(*entry).refreshing.Store(false) // let a later request try again
		}
	}
}

// fetch reads a key from the store and caches the answer.
func (c *Cache) fetch(ctx context.Context, hash [sha256.Size]byte) (*entry, error) {
	sk, err := c.store.KeyByHash(ctx, hash[:])
	e := &entry{fetched: c.now()}
	switch {
	case store.IsNotFound(err):
		if c.negatives.Load() >= maxNegative {
			return e, nil // answer without caching
		}
		c.negatives.Add(1)
	case err != nil:
		return nil, err
	default:
		e.key = c.newKey(sk)
	}
	if old, loaded := c.entries.Swap(hash, e); loaded && old.(*entry).key == nil {
		c.negatives.Add(-1)
	}
	return e, nil
}

func (c *Cache) newKey(sk store.Key) *Key {
	k := &Key{ID: sk.ID, Name: sk.Name, UserID: sk.UserID, TeamID: sk.TeamID, revoked: sk.Revoked}
	if len(sk.Models) > 0 {
		k.models = make(map[string]struct{}, len(sk.Models))
		for _, m := range sk.Models {
			k.models[m] = struct{}{}
		}
	}
	if sk.ExpiresAt != nil {
		k.expiresAt = *sk.ExpiresAt
	}
	// The admin API validated both before storing them.
	if len(sk.Limits) > 2 {
		if err := jsonx.Unmarshal(sk.Limits, &k.Limits); err != nil {
			c.log.Error("auth: a key's stored limits do not parse", "key_id", sk.ID, "error", err)
		}
	}
	if len(sk.ModelLimits) > 2 {
		if err := jsonx.Unmarshal(sk.ModelLimits, &k.ModelLimits); err != nil {
			c.log.Error("auth: a key's stored model limits do not parse", "key_id", sk.ID, "error", err)
		}
	}
	c.useMu.Lock()
	u := c.uses[sk.ID]
	if u == nil {
		u = &keyUse{}
		c.uses[sk.ID] = u
	}
	c.useMu.Unlock()
	k.use = u
	return k
}

// Invalidate drops a key from the cache, so a change made through this
// replica (revocation, new model list, expiry) applies to the next request.
func (c *Cache) Invalidate(id string) {
	c.entries.Range(func(h, v any) bool {
		if k := v.(*entry).key; k != nil && k.ID == id {
			c.entries.Delete(h)
		}
		return true
	})
}

// Close writes the last-used times out and stops the background writer.
func (c *Cache) Close(ctx context.Context) error {
	close(c.stop)
	<-c.done
	return c.flushUse(ctx)
}

func (c *Cache) run() {
	defer close(c.done)
	t := time.NewTicker(touchInterval)
	defer t.Stop()
	d := time.NewTicker(digestsInterval)
	defer d.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-d.C:
			ctx, cancel := context.WithTimeout(context.Background(), digestsInterval)
			c.readDigests(ctx)
			cancel()
			continue
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), touchInterval)
		if err := c.flushUse(ctx); err != nil {
			c.log.Warn("auth: writing key last-used times failed; retrying", "error", err)
		}
		cancel()
		c.sweep()
	}
}

// flushUse writes the last-used times that changed since the last write.
func (c *Cache) flushUse(ctx context.Context) error {
	type pending struct {
		u    *keyUse
		last int64
	}
	used := map[string]time.Time{}
	var todo []pending
	c.useMu.Lock()
	for id, u := range c.uses {
		if last := u.last.Load(); last > u.flushed {
			used[id] = time.UnixMilli(last)
			todo = append(todo, pending{u, last})
		}
	}
	c.useMu.Unlock()
	if len(used) == 0 {
		return nil
	}
	if err := c.store.TouchKeys(ctx, used); err != nil {
		return err
	}
	c.useMu.Lock()
	for _, p := range todo {
		p.u.flushed = max(p.u.flushed, p.last)
	}
	c.useMu.Unlock()
	return nil
}

// sweep drops entries too old to be served, so keys seen once do not stay
// in memory.
func (c *Cache) sweep() {
	now := c.now()
	c.entries.Range(func(h, v any) bool {
		e := v.(*entry)
		if now.Sub(e.fetched) >= HardTTL && c.entries.CompareAndDelete(h, v) && e.key == nil {
			c.negatives.Add(-1)
		}
		return true
	})
}
