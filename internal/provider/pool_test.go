package provider

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/affinity"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/dialect"
)

// A key pool is used in turn, and a key answered with 429 rests for its
// retry-after while the others carry on.
func TestKeyPool(t *testing.T) {
	var mu sync.Mutex
	used := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Authorization")
		mu.Lock()
		used[key]++
		mu.Unlock()
		if key == "Bearer limited" {
			w.Header().Set("Retry-After", "60")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	p, err := New(config.Provider{Name: "p", Type: "openai", BaseURL: srv.URL, APIKeys: []string{"a", "b", "limited"},
		Timeouts: config.Timeouts{Connect: time.Second, FirstByte: time.Second, Idle: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	h := p.(*HTTP)
	statuses := map[int]int{}
	for i := 0; i < 30; i++ {
		resp, err := h.Do(context.Background(), &Request{Op: dialect.Generate, Body: Body{[]byte(`{}`)}})
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		statuses[resp.StatusCode]++
	}
	// "limited" is asked once, then rests; a and b share the rest.
	if used["Bearer limited"] != 1 || statuses[429] != 1 || used["Bearer a"] < 14 || used["Bearer b"] < 14 {
		t.Errorf("keys used %v, statuses %v", used, statuses)
	}
	// When every key rests, the one whose rest ends first is used.
	for _, k := range h.keys {
		k.until.Store(time.Now().Add(time.Hour).UnixNano())
	}
	h.keys[1].until.Store(time.Now().Add(time.Minute).UnixNano())
	if k := h.pick(0); k != h.keys[1] {
		t.Errorf("picked %v while all rest", k.header)
	}
}

// A conversation stays on one pool key; keys spread over conversations,
// and a resting key moves only its own conversations.
func TestKeyPoolAffinity(t *testing.T) {
	p, err := New(config.Provider{Name: "p", Type: "openai", BaseURL: "http://127.0.0.1:1", APIKeys: []string{"a", "b", "c"}})
	if err != nil {
		t.Fatal(err)
	}
	h := p.(*HTTP)
	conv := func(i int) affinity.Key { return affinity.Of("user", []byte{byte(i), byte(i >> 8)}) }
	first := map[int]*poolKey{}
	per := map[*poolKey]int{}
	for i := range 3000 {
		first[i] = h.pick(conv(i))
		if h.pick(conv(i)) != first[i] {
			t.Fatalf("conversation %d changed keys", i)
		}
		per[first[i]]++
	}
	for _, k := range h.keys {
		if n := per[k]; n < 900 || n > 1100 {
			t.Errorf("key %v holds %d of 3000 conversations", k.header, n)
		}
	}
	h.keys[0].until.Store(time.Now().Add(time.Minute).UnixNano()) // a rests after a 429
	for i := range 3000 {
		now := h.pick(conv(i))
		if first[i] == h.keys[0] && now == h.keys[0] || first[i] != h.keys[0] && now != first[i] {
			t.Fatalf("conversation %d: key %v, then %v while the first key rests", i, first[i].header, now.header)
		}
	}
}
