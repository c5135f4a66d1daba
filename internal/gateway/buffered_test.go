package gateway

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
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

// TestBufferedBytesAreBounded: request bodies held at once, sent with a
// length, chunked or gzip-compressed, never take more than the gateway's
// budget (gzip bodies are counted decompressed); the rest are refused with
// 503 and retry-after, and all is given back.
func TestBufferedBytesAreBounded(t *testing.T) {
	const maxBody = 1 << 20
	body := append([]byte(`{"model":"m","messages":[{"role":"user","content":"`), bytes.Repeat([]byte("a "), (maxBody-100)/2)...)
	body = append(body, `"}]}`...)
	for _, tt := range []struct {
		name    string
		request func() (io.Reader, string) // the body and its content-encoding
	}{
		{"length", func() (io.Reader, string) { return bytes.NewReader(body), "" }},
		{"chunked", func() (io.Reader, string) { return io.MultiReader(bytes.NewReader(body)), "" }},
		{"gzip", func() (io.Reader, string) { return bytes.NewReader(gzipBytes(body)), "gzip" }},
		{"gzip chunked", func() (io.Reader, string) { return io.MultiReader(bytes.NewReader(gzipBytes(body))), "gzip" }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := &heldProvider{cannedProvider{"application/json", anthropicMessage, dialect.Chat}, make(chan struct{}, 20), make(chan struct{})}
			cfg := &config.Config{Models: []config.Model{{Name: "m", Targets: []config.Target{{Provider: "held", Model: "u"}}}}}
			routes, err := route.New(cfg, map[string]provider.Provider{"held": p}, nil)
			if err != nil {
				t.Fatal(err)
			}
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

			var wg sync.WaitGroup
			codes := make(chan int, 20)
			for range 20 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rd, enc := tt.request()
					req, _ := http.NewRequest("POST", srv.URL+"/v1/chat/completions", rd)
					req.Header.Set("Authorization", "Bearer sk-test")
					if enc != "" {
						req.Header.Set("Content-Encoding", enc)
					}
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
			// Every request is either refused or held at the provider with
			// its body.
			refused, held := 0, 0
			for refused+held < 20 {
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
			release()
			wg.Wait()
			close(codes)
			for c := range codes {
				if c != 200 {
					t.Errorf("status %d after the release", c)
				}
			}
			if pk := g.buffered.peak.Load(); pk > 4*maxBody {
				t.Errorf("%d bytes held at once, over the budget of %d", pk, 4*maxBody)
			}
			if u := g.buffered.used.Load(); u != 0 {
				t.Errorf("%d bytes still counted after every request ended", u)
			}
		})
	}
}

func gzipBytes(b []byte) []byte {
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(b)
	zw.Close()
	return z.Bytes()
}

// TestBodyBytesAreCounted: what reading request bodies allocates is what
// the buffer budget counts. Twenty gzip bombs, plain bodies of the same
// size, and bombs that unpack past max_body_bytes are read one after the
// other while those admitted are held: the bodies that fit the budget are
// read, the others refused, and the heap allocated meanwhile stays within
// the most the budget counted at once (and the gzip readers' own few
// kilobytes each). A bomb past the limit is refused with 413 before any
// of it is held.
func TestBodyBytesAreCounted(t *testing.T) {
	const maxBody = 4 << 20 // the largest pooled size class: nothing is pooled in advance by size
	const budget = 4 * maxBody
	const slack = 20 * (128 << 10) // a gzip reader's state, per request
	fits := append([]byte(`{"model":"m","messages":[{"role":"user","content":"`), bytes.Repeat([]byte("a"), maxBody-100)...)
	fits = append(fits, `"}]}`...)
	over := append(fits[:len(fits):len(fits)], bytes.Repeat([]byte(" "), 200)...)
	for _, tt := range []struct {
		name     string
		body     []byte
		encoding string
		read     int // how many fit
		status   int // the status of the others, 503 or 413
	}{
		{"plain", fits, "", 4, 503},
		// The fourth does not fit beside its compressed bytes.
		{"gzip", gzipBytes(fits), "gzip", 3, 503},
		{"gzip past the limit", gzipBytes(over), "gzip", 0, 413},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := New(Options{Auth: auth.New("sk-test", nil), MaxBodyBytes: maxBody, MaxBufferedBytes: budget})
			var held []*exchange
			defer func() {
				for _, x := range held {
					x.body.release()
					g.buffered.release(x)
				}
			}()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			read, refused := 0, 0
			for range 20 {
				r := httptest.NewRequest("POST", "/v1/chat/completions", bytes.NewReader(tt.body))
				if tt.encoding != "" {
					r.Header.Set("Content-Encoding", tt.encoding)
				}
				x := &exchange{}
				body, err := g.readBody(httptest.NewRecorder(), r, x)
				if err == nil {
					if !bytes.Equal(body, fits) {
						t.Fatalf("read %d bytes, not the body sent", len(body))
					}
					held = append(held, x)
					read++
					continue
				}
				var e *Error
				if !errors.As(err, &e) || e.Status != tt.status {
					t.Fatalf("%v; want status %d", err, tt.status)
				}
				refused++
				if x.body != nil {
					x.body.release()
				}
				g.buffered.release(x)
			}
			runtime.ReadMemStats(&after)
			if read != tt.read {
				t.Errorf("%d bodies read, %d refused; want %d read", read, refused, tt.read)
			}
			peak := g.buffered.peak.Load()
			if peak > budget {
				t.Errorf("the budget counted %d bytes at once, over its limit of %d", peak, budget)
			}
			if alloc := int64(after.TotalAlloc - before.TotalAlloc); alloc > peak+slack {
				t.Errorf("reading the bodies allocated %d bytes; the budget counted at most %d at once", alloc, peak)
			}
		})
	}
}
