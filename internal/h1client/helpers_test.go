package h1client

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// rawServer is a TCP server whose handler writes exact bytes. It counts the
// connections it accepted.
type rawServer struct {
	ln    net.Listener
	conns atomic.Int32

	mu   sync.Mutex
	open []net.Conn
	wg   sync.WaitGroup
}

// srvConn is one accepted connection; idx counts from 1.
type srvConn struct {
	net.Conn
	br  *bufio.Reader
	idx int32
}

func newRawServer(t testing.TB, handle func(sc *srvConn)) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{ln: ln}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.open = append(s.open, c)
			s.mu.Unlock()
			sc := &srvConn{Conn: c, br: bufio.NewReader(c), idx: s.conns.Add(1)}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				handle(sc)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		s.mu.Lock()
		for _, c := range s.open {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

func (s *rawServer) url(path string) string { return "http://" + s.ln.Addr().String() + path }

// readReq reads one request and its body from the connection.
func (sc *srvConn) readReq() (*http.Request, []byte, error) {
	req, err := http.ReadRequest(sc.br)
	if err != nil {
		return nil, nil, err
	}
	b, err := io.ReadAll(req.Body)
	return req, b, err
}

// serveLoop answers each request on the connection with answer(req, body);
// a nil answer ends the connection.
func (sc *srvConn) serveLoop(answer func(req *http.Request, body []byte) []byte) {
	for {
		req, body, err := sc.readReq()
		if err != nil {
			return
		}
		a := answer(req, body)
		if a == nil {
			return
		}
		if _, err := sc.Write(a); err != nil {
			return
		}
	}
}

const okNext = "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nnext"

// waitCtx bounds a test step that would otherwise hang on a bug.
func waitCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func newReq(t testing.TB, ctx context.Context, method, url string, body io.Reader) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// do runs a request and reads the whole body.
func do(t testing.TB, tr http.RoundTripper, req *http.Request) (*http.Response, string, error) {
	t.Helper()
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return nil, "", err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b), err
}

// get runs a GET and requires success.
func get(t testing.TB, tr http.RoundTripper, url string) string {
	t.Helper()
	_, body, err := do(t, tr, newReq(t, waitCtx(t), "GET", url, nil))
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return body
}

// recvOrFail waits for a signal from a server goroutine.
func recvOrFail[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// plainConn hides the connection's file descriptor, so the liveness peek
// cannot see it and reuse failures reach the retry path.
type plainConn struct{ net.Conn }

// recordRT is a fake fallback recording what it was asked.
type recordRT struct {
	mu        sync.Mutex
	urls      []string
	closeIdle int
}

func (r *recordRT) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.urls = append(r.urls, req.URL.String())
	r.mu.Unlock()
	if req.Body != nil {
		req.Body.Close()
	}
	return &http.Response{StatusCode: 299, Body: io.NopCloser(strings.NewReader("fallback")), Request: req}, nil
}

func (r *recordRT) CloseIdleConnections() {
	r.mu.Lock()
	r.closeIdle++
	r.mu.Unlock()
}
