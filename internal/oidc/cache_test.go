package oidc

import (
	"crypto/sha256"
	"fmt"
	"testing"
	"time"
)

func key(i int) [sha256.Size]byte { return sha256.Sum256(fmt.Append(nil, i)) }

func TestTokenCacheIsBounded(t *testing.T) {
	c := newTokenCache(100)
	for i := range 1000 {
		c.put(key(i), cacheEntry{until: start.Add(time.Hour)}, start)
		if n := c.len(); n > 100 {
			t.Fatalf("after %d puts the cache holds %d entries, want at most 100", i+1, n)
		}
	}
	if _, ok := c.get(key(999), start); !ok {
		t.Error("the newest entry was evicted")
	}
}

func TestTokenCacheEvictsExpiredFirst(t *testing.T) {
	c := newTokenCache(10)
	for i := range 5 {
		c.put(key(i), cacheEntry{until: start.Add(time.Minute)}, start)
	}
	for i := 5; i < 10; i++ {
		c.put(key(i), cacheEntry{until: start.Add(time.Hour)}, start)
	}
	later := start.Add(2 * time.Minute)
	c.put(key(10), cacheEntry{until: start.Add(time.Hour)}, later)
	for i := 5; i <= 10; i++ {
		if _, ok := c.get(key(i), later); !ok {
			t.Errorf("live entry %d was evicted while expired ones were there", i)
		}
	}
	if n := c.len(); n != 6 {
		t.Errorf("cache holds %d entries, want the 6 live ones", n)
	}
}

func TestTokenCacheNeverOutlivesExpiry(t *testing.T) {
	c := newTokenCache(10)
	exp := start.Add(time.Minute)
	c.put(key(1), cacheEntry{until: exp}, start)
	if _, ok := c.get(key(1), exp.Add(-time.Nanosecond)); !ok {
		t.Error("entry gone before its expiry")
	}
	if _, ok := c.get(key(1), exp); ok {
		t.Error("entry served at its expiry")
	}
	c.put(key(2), cacheEntry{until: start}, start)
	if c.len() != 0 {
		t.Error("an already expired entry was stored")
	}
}
