package auth

import (
	"context"
	"crypto/sha256"
	"errors"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/store"
)

// flakyStore wraps the real SQLite store, counting lookups and failing
// them on demand, as an unreachable database would.
type flakyStore struct {
	*store.Store
	lookups atomic.Int64
	down    atomic.Bool
}

func (f *flakyStore) KeyByHash(ctx context.Context, h []byte) (store.Key, error) {
	f.lookups.Add(1)
	if f.down.Load() {
		return store.Key{}, errors.New("connection refused")
	}
	return f.Store.KeyByHash(ctx, h)
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func newTestCache(t *testing.T) (*Cache, *flakyStore, *fakeClock) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "k.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	fs := &flakyStore{Store: st}
	clk := &fakeClock{t: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	c := NewCache(fs, nil)
	c.now = clk.now
	t.Cleanup(func() { c.Close(context.Background()) })
	return c, fs, clk
}

func createKey(t *testing.T, st *store.Store, k store.Key) string {
	t.Helper()
	secret, hash, prefix := NewSecret()
	k.ID, k.Hash, k.Prefix = NewKeyID(), hash, prefix
	if k.CreatedAt.IsZero() {
		k.CreatedAt = time.Now()
	}
	if err := st.CreateKey(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	return secret
}

func lookup(c *Cache, secret string) (*Key, error) {
	return c.Lookup(context.Background(), sha256.Sum256([]byte(secret)))
}

func TestCacheServesHitsWithoutTheDatabase(t *testing.T) {
	c, fs, _ := newTestCache(t)
	secret := createKey(t, fs.Store, store.Key{Name: "a"})
	for i := 0; i < 100; i++ {
		k, err := lookup(c, secret)
		if err != nil || k.Name != "a" {
			t.Fatalf("lookup: %v %v", k, err)
		}
	}
	if n := fs.lookups.Load(); n != 1 {
		t.Errorf("%d database lookups for 100 requests, want 1", n)
	}
}

func TestRevocationReachesOtherReplicasWithinHardTTL(t *testing.T) {
	c, fs, clk := newTestCache(t)
	secret := createKey(t, fs.Store, store.Key{Name: "a"})
	k, err := lookup(c, secret)
	if err != nil {
		t.Fatal(err)
	}
	// Another replica revokes it: this cache has not heard.
	yes := true
	if _, err := fs.UpdateKey(context.Background(), k.ID, store.KeyUpdate{Revoked: &yes}); err != nil {
		t.Fatal(err)
	}
	clk.add(SoftTTL - time.Millisecond)
	if _, err := lookup(c, secret); err != nil {
		t.Fatalf("within the soft TTL the cached key is served: %v", err)
	}
	// An idle replica: nothing refreshed it, so at HardTTL it must ask.
	clk.add(HardTTL - SoftTTL + time.Millisecond)
	if _, err := lookup(c, secret); !errors.Is(err, ErrRevokedKey) {
		t.Fatalf("after HardTTL: %v, want ErrRevokedKey", err)
	}
}

func TestSoftTTLRefreshesInTheBackground(t *testing.T) {
	c, fs, clk := newTestCache(t)
	secret := createKey(t, fs.Store, store.Key{Name: "a"})
	k, _ := lookup(c, secret)
	yes := true
	fs.UpdateKey(context.Background(), k.ID, store.KeyUpdate{Revoked: &yes})
	clk.add(SoftTTL)
	// This request is served from the cache and starts a refresh.
	if _, err := lookup(c, secret); err != nil {
		t.Fatalf("past the soft TTL the request is not held up: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := lookup(c, secret); errors.Is(err, ErrRevokedKey) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the background refresh never saw the revocation")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestInvalidateAppliesAtOnce(t *testing.T) {
	c, fs, _ := newTestCache(t)
	secret := createKey(t, fs.Store, store.Key{Name: "a", Models: []string{"sonnet"}})
	k, _ := lookup(c, secret)
	if !k.AllowsModel("claude-sonnet", []string{"sonnet"}) || k.AllowsModel("gpt", nil) {
		t.Fatal("model list not applied by alias")
	}
	yes := true
	fs.UpdateKey(context.Background(), k.ID, store.KeyUpdate{Revoked: &yes})
	c.Invalidate(k.ID)
	if _, err := lookup(c, secret); !errors.Is(err, ErrRevokedKey) {
		t.Fatalf("after Invalidate: %v", err)
	}
}

func TestExpiryAndUnknownKeys(t *testing.T) {
	c, fs, clk := newTestCache(t)
	exp := clk.now().Add(time.Minute)
	secret := createKey(t, fs.Store, store.Key{Name: "a", ExpiresAt: &exp})
	if _, err := lookup(c, secret); err != nil {
		t.Fatal(err)
	}
	clk.add(time.Minute)
	if _, err := lookup(c, secret); !errors.Is(err, ErrExpiredKey) {
		t.Fatalf("at expiry: %v", err)
	}
	before := fs.lookups.Load()
	for i := 0; i < 3; i++ {
		if _, err := lookup(c, "sk-tg-unknown"); !errors.Is(err, ErrInvalidKey) {
			t.Fatalf("unknown key: %v", err)
		}
	}
	if n := fs.lookups.Load() - before; n != 1 {
		t.Errorf("an unknown key was looked up %d times, want 1 (cached)", n)
	}
}

func TestNegativeCacheIsBounded(t *testing.T) {
	c, _, _ := newTestCache(t)
	c.negatives.Store(maxNegative)
	lookup(c, "sk-tg-flood")
	if _, ok := c.entries.Load(sha256.Sum256([]byte("sk-tg-flood"))); ok {
		t.Error("a negative answer was cached beyond the bound")
	}
}

func TestDatabaseOutage(t *testing.T) {
	c, fs, clk := newTestCache(t)
	secret := createKey(t, fs.Store, store.Key{Name: "a"})
	lookup(c, secret)
	fs.down.Store(true)
	clk.add(HardTTL)
	if _, err := lookup(c, secret); err != nil {
		t.Errorf("a cached key must keep working while the database is down: %v", err)
	}
	if _, err := lookup(c, "sk-tg-never-seen"); !errors.Is(err, ErrUnavailable) {
		t.Errorf("an uncached key while the database is down: %v, want ErrUnavailable", err)
	}
	fs.down.Store(false)
	if _, err := lookup(c, "sk-tg-never-seen"); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("after recovery: %v", err)
	}
}

func TestLastUsedIsWritten(t *testing.T) {
	c, fs, clk := newTestCache(t)
	secret := createKey(t, fs.Store, store.Key{Name: "a"})
	k, _ := lookup(c, secret)
	clk.add(time.Second)
	lookup(c, secret)
	if err := c.flushUse(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, err := fs.KeyByID(context.Background(), k.ID)
	if err != nil || got.LastUsedAt == nil || !got.LastUsedAt.Equal(clk.now()) {
		t.Fatalf("last_used_at = %v, want %v (%v)", got.LastUsedAt, clk.now(), err)
	}
}

func TestCheckWithVirtualKeys(t *testing.T) {
	c, fs, _ := newTestCache(t)
	secret := createKey(t, fs.Store, store.Key{Name: "a"})
	a := New("master-without-prefix", c)
	r, _ := http.NewRequest("GET", "/", nil)
	r.Header.Set("Authorization", "Bearer "+secret)
	p, err := a.Check(r)
	if err != nil || p.Master || p.Key == nil || p.KeyID() == "" {
		t.Fatalf("virtual key: %+v %v", p, err)
	}
	before := fs.lookups.Load()
	r.Header.Set("Authorization", "Bearer not-a-tollgate-key")
	if _, err := a.Check(r); !errors.Is(err, ErrInvalidKey) {
		t.Fatal(err)
	}
	if fs.lookups.Load() != before {
		t.Error("a key without the prefix reached the database")
	}
	r.Header.Set("Authorization", "Bearer master-without-prefix")
	if p, err := a.Check(r); err != nil || !p.Master {
		t.Fatalf("master: %+v %v", p, err)
	}
}

func BenchmarkCheckVirtualKeyHit(b *testing.B) {
	ctx := context.Background()
	st, _ := store.Open(ctx, "sqlite://"+filepath.Join(b.TempDir(), "k.db"))
	st.Migrate(ctx)
	defer st.Close()
	c := NewCache(st, nil)
	defer c.Close(ctx)
	secret, hash, prefix := NewSecret()
	st.CreateKey(ctx, store.Key{ID: "key_b", Name: "b", Hash: hash, Prefix: prefix, CreatedAt: time.Now()})
	a := New("master", c)
	r, _ := http.NewRequest("POST", "/", nil)
	r.Header.Set("X-Api-Key", secret)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := a.Check(r); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// The cache knows the digests of the keys that exist, so that a key is
// told from a guess before it is first used: read at start and again
// later, a key made on this replica added at once, a revoked one gone at
// the next read.
func TestCacheKnowsTheKeysThatExist(t *testing.T) {
	ctx := context.Background()
	c, fs, _ := newTestCache(t)
	secret := createKey(t, fs.Store, store.Key{Name: "a"})
	sum := sha256.Sum256([]byte(secret))
	if c.holds(sum) {
		t.Fatal("a key made after the digests were read, and never used, is known")
	}
	c.Known(sum[:])
	if !c.holds(sum) {
		t.Fatal("a key made here is not known at once")
	}
	c.readDigests(ctx)
	if !c.holds(sum) {
		t.Fatal("a key that exists is not among the digests read")
	}
	k, err := fs.Store.KeyByHash(ctx, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	if _, err := fs.Store.UpdateKey(ctx, k.ID, store.KeyUpdate{Revoked: &yes}); err != nil {
		t.Fatal(err)
	}
	c.readDigests(ctx)
	if c.holds(sum) {
		t.Error("a revoked key is still known after the digests were read again")
	}
}
