package h1client

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// TestPooledAtEOF: the connection goes back to the pool when the body's end
// is read, before (and without) Close, holding no read buffer; Close after
// that changes nothing.
func TestPooledAtEOF(t *testing.T) {
	s := newRawServer(t, func(sc *srvConn) {
		sc.serveLoop(func(*http.Request, []byte) []byte { return []byte(okNext) })
	})
	tr := &Transport{}
	defer tr.CloseIdleConnections()
	resp, err := tr.RoundTrip(newReq(t, waitCtx(t), "GET", s.url("/"), nil))
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(resp.Body); err != nil || string(b) != "next" {
		t.Fatalf("body %q err %v", b, err)
	}
	p := tr.pool(s.ln.Addr().String())
	p.mu.Lock()
	idle := len(p.idle)
	var size int
	if idle == 1 {
		size = p.idle[0].br.Size()
	}
	p.mu.Unlock()
	if idle != 1 {
		t.Fatalf("%d idle connections after EOF, want 1", idle)
	}
	if size != 0 {
		t.Errorf("idle connection holds a %d-byte read buffer, want none", size)
	}
	if got := get(t, tr, s.url("/")); got != "next" { // while the first body is still not closed
		t.Fatalf("body %q", got)
	}
	resp.Body.Close()
	if got := get(t, tr, s.url("/")); got != "next" {
		t.Fatalf("body %q", got)
	}
	if n := s.conns.Load(); n != 1 {
		t.Errorf("server saw %d connections, want 1", n)
	}
}

// TestCheckoutDropsExpired: an idle connection past IdleConnTimeout is not
// handed out even if its timer has not fired yet.
func TestCheckoutDropsExpired(t *testing.T) {
	var dials atomic.Int32
	tr := &Transport{
		IdleConnTimeout: time.Hour,
		DialContext: func(context.Context, string, string) (net.Conn, error) {
			dials.Add(1)
			c, _ := net.Pipe()
			return c, nil
		},
	}
	defer tr.CloseIdleConnections()
	p := tr.pool("upstream.test:80")
	c, err := p.get(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	p.put(c)
	p.mu.Lock()
	c.idleAt = time.Now().Add(-2 * time.Hour)
	p.mu.Unlock()
	c2, err := p.get(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	if c2 == c || dials.Load() != 2 {
		t.Errorf("expired connection reused (dials %d)", dials.Load())
	}
	c2.close()
}
