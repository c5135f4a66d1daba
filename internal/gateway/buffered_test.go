package gateway

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/tollgate/tollgate/internal/auth"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/provider"
	"github.com/tollgate/tollgate/internal/route"
)

// heldProvider says on arrived that a request reached it, and answers
// once release is closed, so that request bodies stay held meanwhile.
type heldProvider struct {
	cannedProvider
	arrived chan struct{}
	release chan struct{}
}

func (p *heldProvider) Do(ctx context.Context, r *provider.Request) (*http.Response, error) {
	p.arrived <- struct{}{}
	<-p.release
	return p.cannedProvider.Do(ctx, r)
}

// TestBufferedBytesAreBounded: request bodies held at once, chunked or
// not, never take more than the gateway's budget; the rest are refused
// with 503 and retry-after before they are read, and all is given back.
func TestBufferedBytesAreBounded(t *testing.T) {
	p := &heldProvider{cannedProvider{"application/json", anthropicMessage, dialect.OpenAI}, make(chan struct{}, 20), make(chan struct{})}
	cfg := &config.Config{Models: []config.Model{{Name: "m", Targets: []config.Target{{Provider: "held", Model: "u"}}}}}
	routes, err := route.New(cfg, map[string]provider.Provider{"held": p}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const maxBody = 1 << 20
	g := New(Options{Routes: routes, Auth: auth.New("sk-test", nil), MaxBodyBytes: maxBody, MaxBufferedBytes: 4 * maxBody})
	srv := httptest.NewServer(g.Handler())
	defer srv.Close()
	released := false
	release := func() {
		if !released {
			released = true
			close(p.release)
		}
	}
	defer release() // before srv.Close, which waits for the held requests

	body := append([]byte(`{"model":"m","messages":[{"role":"user","content":"`), bytes.Repeat([]byte("a "), (maxBody-100)/2)...)
	body = append(body, `"}]}`...)
	var wg sync.WaitGroup
	codes := make(chan int, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var rd io.Reader = bytes.NewReader(body)
			if i%2 == 0 {
				rd = io.MultiReader(rd) // no length: sent chunked
			}
			req, _ := http.NewRequest("POST", srv.URL+"/v1/chat/completions", rd)
			req.Header.Set("Authorization", "Bearer sk-test")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				codes <- 0
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 503 && resp.Header.Get("Retry-After") == "" {
				t.Error("503 without retry-after")
			}
			codes <- resp.StatusCode
		}()
	}
	// Every request is either refused or held at the provider with its
	// body: the budget is never passed meanwhile.
	refused, held := 0, 0
	for refused+held < 20 {
		if g.buffered.used.Load() > 4*maxBody {
			t.Fatalf("%d bytes held, over the budget", g.buffered.used.Load())
		}
		select {
		case c := <-codes:
			if c != 503 {
				t.Fatalf("status %d before any was let through", c)
			}
			refused++
		case <-p.arrived:
			held++
		}
	}
	if held < 1 || held > 4 {
		t.Errorf("%d requests held at once; between 1 and 4 fit", held)
	}
	if u := g.buffered.used.Load(); u > 4*maxBody {
		t.Fatalf("%d bytes held, over the budget", u)
	}
	release()
	wg.Wait()
	close(codes)
	for c := range codes {
		if c != 200 {
			t.Errorf("status %d after the release", c)
		}
	}
	if u := g.buffered.used.Load(); u != 0 {
		t.Errorf("%d bytes still counted after every request ended", u)
	}
}
