package provider

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

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
	if k := h.pick(); k != h.keys[1] {
		t.Errorf("picked %v while all rest", k.header)
	}
}
