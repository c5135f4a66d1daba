package h1client

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestRequestCloseNotReused(t *testing.T) {
	gotClose := make(chan string, 2)
	s := newRawServer(t, func(sc *srvConn) {
		sc.serveLoop(func(req *http.Request, _ []byte) []byte {
			gotClose <- req.Header.Get("Connection")
			return []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		})
	})
	tr := &Transport{}
	defer tr.CloseIdleConnections()
	req := newReq(t, waitCtx(t), "GET", s.url("/"), nil)
	req.Close = true
	if _, body, err := do(t, tr, req); err != nil || body != "ok" {
		t.Fatalf("body %q, err %v", body, err)
	}
	if h := <-gotClose; h != "close" {
		t.Errorf("server saw Connection %q, want close", h)
	}
	get(t, tr, s.url("/"))
	if h := <-gotClose; h != "" {
		t.Errorf("second request sent Connection %q", h)
	}
	if n := s.conns.Load(); n != 2 {
		t.Errorf("server saw %d connections, want 2", n)
	}
}

func TestEarlyBodyCloseDiscardsConn(t *testing.T) {
	closed := make(chan struct{})
	s := newRawServer(t, func(sc *srvConn) {
		sc.serveLoop(func(req *http.Request, _ []byte) []byte {
			if req.URL.Path == "/next" {
				return []byte(okNext)
			}
			sc.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n0123456789"))
			io.Copy(io.Discard, sc.br) // until the client hangs up
			close(closed)
			return nil
		})
	})
	tr := &Transport{}
	defer tr.CloseIdleConnections()
	resp, err := tr.RoundTrip(newReq(t, waitCtx(t), "GET", s.url("/big"), nil))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	recvOrFail(t, closed, "the client to close the connection")
	if _, err := resp.Body.Read(buf); err == nil {
		t.Error("Read after Close succeeded")
	}
	if got := get(t, tr, s.url("/next")); got != "next" {
		t.Errorf("next = %q", got)
	}
	if n := s.conns.Load(); n != 2 {
		t.Errorf("server saw %d connections, want 2", n)
	}
}

// TestNoPipelining holds every answer until n requests are in at once: that
// only completes if each request has a connection of its own. The server
// also checks that no second request is queued behind one in progress.
func TestNoPipelining(t *testing.T) {
	const n = 10
	var (
		mu       sync.Mutex
		arrived  int
		gate     = make(chan struct{})
		violated atomic.Bool
	)
	arrive := func() <-chan struct{} {
		mu.Lock()
		defer mu.Unlock()
		g := gate
		arrived++
		if arrived%n == 0 {
			close(gate)
			gate = make(chan struct{})
		}
		return g
	}
	s := newRawServer(t, func(sc *srvConn) {
		sc.serveLoop(func(req *http.Request, _ []byte) []byte {
			if sc.br.Buffered() > 0 {
				violated.Store(true)
			}
			<-arrive()
			if sc.br.Buffered() > 0 {
				violated.Store(true)
			}
			return []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		})
	})
	tr := &Transport{}
	defer tr.CloseIdleConnections()
	for round := 0; round < 3; round++ {
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, body, err := do(t, tr, newReq(t, waitCtx(t), "GET", s.url("/"), nil))
				if err == nil && body != "ok" {
					err = fmt.Errorf("body %q", body)
				}
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
	if violated.Load() {
		t.Error("a request arrived on a connection while another was in progress")
	}
	if c := s.conns.Load(); c != n {
		t.Errorf("server saw %d connections, want %d (one per concurrent request, reused across rounds)", c, n)
	}
}

func TestExtraBytesAfterAnswerNotReused(t *testing.T) {
	t.Run("same write", func(t *testing.T) {
		s := newRawServer(t, func(sc *srvConn) {
			sc.serveLoop(func(req *http.Request, _ []byte) []byte {
				if req.URL.Path == "/next" {
					return []byte(okNext)
				}
				return []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nextra")
			})
		})
		tr := &Transport{}
		defer tr.CloseIdleConnections()
		if got := get(t, tr, s.url("/first")); got != "ok" {
			t.Fatalf("body %q", got)
		}
		if got := get(t, tr, s.url("/next")); got != "next" {
			t.Fatalf("next body %q", got)
		}
		if n := s.conns.Load(); n != 2 {
			t.Errorf("server saw %d connections, want 2", n)
		}
	})
	t.Run("while idle", func(t *testing.T) {
		if !peekSupported() {
			t.Skip("no liveness peek on this platform")
		}
		sendExtra := make(chan struct{})
		sent := make(chan struct{})
		s := newRawServer(t, func(sc *srvConn) {
			sc.serveLoop(func(req *http.Request, _ []byte) []byte {
				if req.URL.Path == "/next" {
					return []byte(okNext)
				}
				sc.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
				<-sendExtra
				sc.Write([]byte("unsolicited"))
				close(sent)
				return []byte{}
			})
		})
		tr := &Transport{}
		defer tr.CloseIdleConnections()
		get(t, tr, s.url("/first"))
		close(sendExtra)
		recvOrFail(t, sent, "the unsolicited bytes")
		if got := get(t, tr, s.url("/next")); got != "next" {
			t.Fatalf("next body %q", got)
		}
		if n := s.conns.Load(); n != 2 {
			t.Errorf("server saw %d connections, want 2", n)
		}
	})
}

func peekSupported() bool { return runtime.GOOS == "linux" }

// TestServerClosesIdleConn: the server hangs up on a kept-alive connection
// while it is idle. The next request must still succeed, found dead by the
// liveness peek or, where that cannot see the socket, by the retry.
func TestServerClosesIdleConn(t *testing.T) {
	for _, hideFD := range []bool{false, true} {
		t.Run(fmt.Sprintf("hideFD=%v", hideFD), func(t *testing.T) {
			hungUp := make(chan struct{}, 1)
			var bodies sync.Map
			s := newRawServer(t, func(sc *srvConn) {
				req, body, err := sc.readReq()
				if err != nil {
					return
				}
				bodies.Store(sc.idx, string(body))
				fmt.Fprintf(sc, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(req.URL.Path), req.URL.Path)
				sc.Close()
				hungUp <- struct{}{}
			})
			var dials atomic.Int32
			tr := &Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				dials.Add(1)
				c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
				if hideFD && err == nil {
					return plainConn{c}, nil
				}
				return c, err
			}}
			defer tr.CloseIdleConnections()

			if got := get(t, tr, s.url("/one")); got != "/one" {
				t.Fatalf("body %q", got)
			}
			recvOrFail(t, hungUp, "the server to hang up")
			if got := get(t, tr, s.url("/two")); got != "/two" {
				t.Fatalf("body %q", got)
			}
			if n := s.conns.Load(); n != 2 {
				t.Errorf("server saw %d connections, want 2", n)
			}

			// A POST with an idempotency key and a rewindable body is sent
			// again; GetBody gives the body back.
			recvOrFail(t, hungUp, "the server to hang up")
			req := newReq(t, waitCtx(t), "POST", s.url("/three"), strings.NewReader("payload"))
			req.Header.Set("Idempotency-Key", "k1")
			getBody := req.GetBody
			var gets atomic.Int32
			req.GetBody = func() (io.ReadCloser, error) { gets.Add(1); return getBody() }
			req.Body = io.NopCloser(req.Body) // not a Bytes body: consumed by the first attempt
			if _, body, err := do(t, tr, req); err != nil || body != "/three" {
				t.Fatalf("POST: body %q, err %v", body, err)
			}
			last := s.conns.Load()
			if b, _ := bodies.Load(last); b != "payload" {
				t.Errorf("server got body %q", b)
			}
			wantGets := int32(0) // the liveness peek found the dead conn: no retry
			if hideFD || !peekSupported() {
				wantGets = 1
			}
			if gets.Load() != wantGets {
				t.Errorf("GetBody called %d times, want %d", gets.Load(), wantGets)
			}

			// A POST without an idempotency key is not sent twice.
			recvOrFail(t, hungUp, "the server to hang up")
			req = newReq(t, waitCtx(t), "POST", s.url("/four"), strings.NewReader("x"))
			_, _, err := do(t, tr, req)
			if hideFD {
				if err == nil {
					t.Error("non-idempotent POST on a dead reused connection succeeded; it must not be retried")
				}
			} else if err != nil && peekSupported() {
				t.Errorf("POST after liveness check: %v", err)
			}
		})
	}
}

func TestRetryNeverOnFreshConn(t *testing.T) {
	s := newRawServer(t, func(sc *srvConn) {
		sc.readReq()
		// hang up without an answer
	})
	tr := &Transport{}
	_, _, err := do(t, tr, newReq(t, waitCtx(t), "GET", s.url("/"), nil))
	if err == nil || !strings.Contains(err.Error(), "closed the connection") {
		t.Fatalf("err %v", err)
	}
	if n := s.conns.Load(); n != 1 {
		t.Errorf("server saw %d connections, want 1", n)
	}
}

func TestContextCancel(t *testing.T) {
	t.Run("blocked body read", func(t *testing.T) {
		s := newRawServer(t, func(sc *srvConn) {
			sc.readReq()
			sc.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npart"))
			io.Copy(io.Discard, sc)
		})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		tr := &Transport{}
		resp, err := tr.RoundTrip(newReq(t, ctx, "GET", s.url("/"), nil))
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 4)
		if _, err := io.ReadFull(resp.Body, buf); err != nil {
			t.Fatal(err)
		}
		go cancel()
		_, err = resp.Body.Read(buf)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Read error %v, want context.Canceled", err)
		}
		if _, err2 := resp.Body.Read(buf); !errors.Is(err2, context.Canceled) {
			t.Errorf("second Read error %v", err2)
		}
		resp.Body.Close()
	})
	t.Run("awaiting head", func(t *testing.T) {
		got := make(chan struct{})
		s := newRawServer(t, func(sc *srvConn) {
			sc.readReq()
			close(got)
			io.Copy(io.Discard, sc)
		})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			<-got
			cancel()
		}()
		tr := &Transport{}
		_, err := tr.RoundTrip(newReq(t, ctx, "GET", s.url("/"), nil))
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v, want context.Canceled", err)
		}
	})
	t.Run("deadline awaiting head", func(t *testing.T) {
		s := newRawServer(t, func(sc *srvConn) {
			sc.readReq()
			io.Copy(io.Discard, sc)
		})
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		tr := &Transport{}
		_, err := tr.RoundTrip(newReq(t, ctx, "GET", s.url("/"), nil))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err %v, want context.DeadlineExceeded", err)
		}
	})
	t.Run("already cancelled", func(t *testing.T) {
		s := newRawServer(t, func(sc *srvConn) { sc.serveLoop(func(*http.Request, []byte) []byte { return []byte(okNext) }) })
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		tr := &Transport{}
		_, err := tr.RoundTrip(newReq(t, ctx, "GET", s.url("/"), nil))
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v, want context.Canceled", err)
		}
	})
	t.Run("cancel after body end keeps pool clean", func(t *testing.T) {
		s := newRawServer(t, func(sc *srvConn) { sc.serveLoop(func(*http.Request, []byte) []byte { return []byte(okNext) }) })
		tr := &Transport{}
		defer tr.CloseIdleConnections()
		ctx, cancel := context.WithCancel(context.Background())
		if _, body, err := do(t, tr, newReq(t, ctx, "GET", s.url("/"), nil)); err != nil || body != "next" {
			t.Fatalf("body %q err %v", body, err)
		}
		cancel() // the exchange is over: this must not touch the pooled conn
		if got := get(t, tr, s.url("/")); got != "next" {
			t.Fatalf("body %q", got)
		}
		if n := s.conns.Load(); n != 1 {
			t.Errorf("server saw %d connections, want 1", n)
		}
	})
}

func TestResponseHeaderTimeout(t *testing.T) {
	s := newRawServer(t, func(sc *srvConn) {
		sc.readReq()
		io.Copy(io.Discard, sc)
	})
	tr := &Transport{ResponseHeaderTimeout: 20 * time.Millisecond}
	_, err := tr.RoundTrip(newReq(t, waitCtx(t), "GET", s.url("/"), nil))
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || !strings.Contains(err.Error(), "timeout awaiting response headers") {
		t.Fatalf("err %v, want a timeout net.Error awaiting response headers", err)
	}
}

// TestResponseHeaderTimeoutClearedForBody: the head deadline must not cut a
// body that streams for longer.
func TestResponseHeaderTimeoutClearedForBody(t *testing.T) {
	release := make(chan struct{})
	s := newRawServer(t, func(sc *srvConn) {
		sc.readReq()
		sc.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nab"))
		<-release
		sc.Write([]byte("cd"))
		io.Copy(io.Discard, sc)
	})
	tr := &Transport{ResponseHeaderTimeout: 20 * time.Millisecond}
	defer tr.CloseIdleConnections()
	resp, err := tr.RoundTrip(newReq(t, waitCtx(t), "GET", s.url("/"), nil))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 2)
	io.ReadFull(resp.Body, buf)
	// Wait past the head timeout on a timer the server does not depend on.
	time.AfterFunc(60*time.Millisecond, func() { close(release) })
	rest, err := io.ReadAll(resp.Body)
	if err != nil || string(rest) != "cd" {
		t.Fatalf("rest %q, err %v", rest, err)
	}
}

func TestCloseDuringBlockedRead(t *testing.T) {
	s := newRawServer(t, func(sc *srvConn) {
		sc.readReq()
		sc.Write([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n"))
		io.Copy(io.Discard, sc)
	})
	tr := &Transport{}
	resp, err := tr.RoundTrip(newReq(t, waitCtx(t), "GET", s.url("/"), nil))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(resp.Body)
		done <- err
	}()
	resp.Body.Close()
	if err := recvOrFail(t, done, "the blocked Read to return"); err == nil {
		t.Error("Read after concurrent Close returned no error")
	}
	resp.Body.Close() // idempotent
}

func TestFallback(t *testing.T) {
	s := newRawServer(t, func(sc *srvConn) { sc.serveLoop(func(*http.Request, []byte) []byte { return []byte(okNext) }) })
	proxyURL, _ := url.Parse("http://proxy.invalid:3128")
	tests := []struct {
		name   string
		url    string
		proxy  bool
		header http.Header
		method string
		toFB   bool
	}{
		{name: "https", url: "https://example.invalid/x", toFB: true},
		{name: "proxy", url: s.url("/p"), proxy: true, toFB: true},
		{name: "upgrade", url: s.url("/ws"), header: http.Header{"Upgrade": {"websocket"}, "Connection": {"Upgrade"}}, toFB: true},
		{name: "CONNECT", url: s.url("/"), method: "CONNECT", toFB: true},
		{name: "plain http", url: s.url("/plain")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fb := &recordRT{}
			tr := &Transport{Fallback: fb}
			defer tr.CloseIdleConnections()
			if tc.proxy {
				tr.Proxy = func(*http.Request) (*url.URL, error) { return proxyURL, nil }
			} else {
				tr.Proxy = func(*http.Request) (*url.URL, error) { return nil, nil }
			}
			req := newReq(t, waitCtx(t), valueOr(tc.method, "GET"), tc.url, nil)
			for k, v := range tc.header {
				req.Header[k] = v
			}
			resp, body, err := do(t, tr, req)
			if err != nil {
				t.Fatal(err)
			}
			if tc.toFB != (len(fb.urls) == 1) || tc.toFB != (resp.StatusCode == 299) {
				t.Fatalf("fallback calls %v, status %d, body %q", fb.urls, resp.StatusCode, body)
			}
		})
	}
	t.Run("nil Fallback", func(t *testing.T) {
		tr := &Transport{}
		var closed atomic.Bool
		req := newReq(t, waitCtx(t), "POST", "https://example.invalid/", nil)
		req.Body = closeRecorder{Reader: strings.NewReader("x"), closed: &closed}
		if _, err := tr.RoundTrip(req); err == nil || !strings.Contains(err.Error(), "no Fallback") {
			t.Fatalf("err %v", err)
		}
		if !closed.Load() {
			t.Error("request body not closed")
		}
	})
	t.Run("proxy error", func(t *testing.T) {
		tr := &Transport{Proxy: func(*http.Request) (*url.URL, error) { return nil, errors.New("boom") }}
		if _, err := tr.RoundTrip(newReq(t, waitCtx(t), "GET", s.url("/"), nil)); err == nil || !strings.Contains(err.Error(), "boom") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("CloseIdleConnections", func(t *testing.T) {
		fb := &recordRT{}
		tr := &Transport{Fallback: fb}
		tr.CloseIdleConnections()
		if fb.closeIdle != 1 {
			t.Errorf("Fallback.CloseIdleConnections called %d times", fb.closeIdle)
		}
	})
}

type closeRecorder struct {
	io.Reader
	closed *atomic.Bool
}

func (c closeRecorder) Close() error { c.closed.Store(true); return nil }

// TestHTTP2ViaFallback: an HTTP/2 upstream over TLS still works, served by
// the Fallback http.Transport.
func TestHTTP2ViaFallback(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "proto %d", r.ProtoMajor)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	fb := &http.Transport{
		ForceAttemptHTTP2: true,
		TLSClientConfig:   srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone(),
	}
	fb.TLSClientConfig.MinVersion = tls.VersionTLS12
	tr := &Transport{Fallback: fb}
	defer tr.CloseIdleConnections()
	resp, body, err := do(t, tr, newReq(t, waitCtx(t), "GET", srv.URL+"/", nil))
	if err != nil {
		t.Fatal(err)
	}
	if resp.ProtoMajor != 2 || body != "proto 2" {
		t.Fatalf("ProtoMajor %d, body %q", resp.ProtoMajor, body)
	}
}

// newCountingServer is an httptest server counting the connections it saw.
func newCountingServer(t testing.TB, h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			n.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &n
}

func echoHandler(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	if r.URL.Query().Get("chunked") != "" {
		w.Write([]byte(r.URL.Path))
		w.(http.Flusher).Flush()
		w.Write(b)
		return
	}
	w.Header().Set("Content-Length", fmt.Sprint(len(r.URL.Path)+len(b)))
	w.Write([]byte(r.URL.Path))
	w.Write(b)
}

func TestNetHTTPServerSequentialReuse(t *testing.T) {
	for _, bufSize := range []int{0, 16} {
		t.Run(fmt.Sprintf("ReadBufferSize=%d", bufSize), func(t *testing.T) {
			srv, conns := newCountingServer(t, echoHandler)
			tr := &Transport{ReadBufferSize: bufSize}
			defer tr.CloseIdleConnections()
			for i := 0; i < 200; i++ {
				path := fmt.Sprintf("/r%d", i)
				q := ""
				if i%2 == 1 {
					q = "?chunked=1"
				}
				method := []string{"GET", "POST", "HEAD", "DELETE"}[i%4]
				var body io.Reader
				if method == "POST" {
					body = strings.NewReader("body")
				}
				resp, got, err := do(t, tr, newReq(t, waitCtx(t), method, srv.URL+path+q, body))
				if err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				want := path
				if method == "POST" {
					want += "body"
				}
				if method == "HEAD" {
					want = ""
				}
				if got != want || resp.StatusCode != 200 {
					t.Fatalf("request %d: status %d body %q, want %q", i, resp.StatusCode, got, want)
				}
			}
			if n := conns.Load(); n != 1 {
				t.Errorf("server saw %d connections for 200 sequential requests, want 1", n)
			}
		})
	}
}

func TestNetHTTPServerConcurrent(t *testing.T) {
	srv, conns := newCountingServer(t, echoHandler)
	tr := &Transport{}
	defer tr.CloseIdleConnections()
	const goroutines, each = 50, 20
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*each)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				path := fmt.Sprintf("/g%d/r%d", g, i)
				payload := strings.Repeat(fmt.Sprint(g), i*50)
				u := srv.URL + path
				if i%2 == 0 {
					u += "?chunked=1"
				}
				req := newReq(t, waitCtx(t), "POST", u, nil)
				req.Body, req.ContentLength = NewBody([]byte(payload)), int64(len(payload))
				_, got, err := do(t, tr, req)
				if err == nil && got != path+payload {
					err = fmt.Errorf("%s: body %q", path, got)
				}
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := conns.Load(); n > goroutines {
		t.Errorf("server saw %d connections for %d concurrent clients", n, goroutines)
	}
}

func TestIdleConnTimeout(t *testing.T) {
	gone := make(chan struct{})
	s := newRawServer(t, func(sc *srvConn) {
		sc.serveLoop(func(*http.Request, []byte) []byte { return []byte(okNext) })
		if sc.idx == 1 {
			close(gone) // the client closed the idle connection
		}
	})
	tr := &Transport{IdleConnTimeout: 10 * time.Millisecond}
	get(t, tr, s.url("/"))
	recvOrFail(t, gone, "the idle connection to be closed by its timer")
	get(t, tr, s.url("/"))
	if n := s.conns.Load(); n != 2 {
		t.Errorf("server saw %d connections, want 2", n)
	}
	tr.CloseIdleConnections()
}

func TestMaxIdleConnsPerHost(t *testing.T) {
	var (
		mu      sync.Mutex
		arrived int
		both    = make(chan struct{})
	)
	gone := make(chan int32, 2)
	s := newRawServer(t, func(sc *srvConn) {
		sc.serveLoop(func(*http.Request, []byte) []byte {
			mu.Lock()
			arrived++
			if arrived == 2 {
				close(both)
			}
			mu.Unlock()
			<-both
			return []byte(okNext)
		})
		gone <- sc.idx
	})
	tr := &Transport{MaxIdleConnsPerHost: 1}
	defer tr.CloseIdleConnections()
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			get(t, tr, s.url("/"))
		}()
	}
	wg.Wait()
	recvOrFail(t, gone, "the connection over the idle bound to be closed")
	get(t, tr, s.url("/"))
	if n := s.conns.Load(); n != 2 {
		t.Errorf("server saw %d connections, want 2", n)
	}
}

// FuzzTransport feeds arbitrary bytes as a server's answer through a real
// exchange over net.Pipe: RoundTrip and the body read must end, whatever
// the bytes.
func FuzzTransport(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nX-T: 1\r\n\r\n",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA",
		"HTTP/1.0 200 OK\r\n\r\nuntil close",
		"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nshort",
		"HTTP/1.1 2x0 OK\r\n\r\n",
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, answer []byte, head bool) {
		done := make(chan struct{})
		tr := &Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, s := net.Pipe()
			go func() {
				defer close(done)
				defer s.Close()
				if _, err := http.ReadRequest(bufio.NewReader(s)); err != nil {
					return
				}
				s.Write(answer)
			}()
			return c, nil
		}}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		method := "GET"
		if head {
			method = "HEAD"
		}
		req, _ := http.NewRequestWithContext(ctx, method, "http://upstream.test/", nil)
		resp, err := tr.RoundTrip(req)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("exchange hung: %v", err)
		}
		tr.CloseIdleConnections()
		<-done
	})
}

// TestRetryBodies: on a dead reused connection (its descriptor hidden from
// the liveness peek) a replayable request is sent again with its body.
func TestRetryBodies(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(r *http.Request) *atomic.Int32 // returns a GetBody counter, if any
		wantErr bool
	}{
		{name: "NewBody without GetBody", setup: func(r *http.Request) *atomic.Int32 {
			r.Body, r.ContentLength = NewBody([]byte("payload")), 7
			return nil
		}},
		{name: "reader with GetBody returning NewBody", setup: func(r *http.Request) *atomic.Int32 {
			var n atomic.Int32
			r.Body, r.ContentLength = io.NopCloser(strings.NewReader("payload")), 7
			r.GetBody = func() (io.ReadCloser, error) { n.Add(1); return NewBody([]byte("payload")), nil }
			return &n
		}},
		{name: "chunked reader with GetBody", setup: func(r *http.Request) *atomic.Int32 {
			var n atomic.Int32
			r.Body, r.ContentLength = io.NopCloser(strings.NewReader("payload")), -1
			r.GetBody = func() (io.ReadCloser, error) { n.Add(1); return io.NopCloser(strings.NewReader("payload")), nil }
			return &n
		}},
		{name: "reader without GetBody", wantErr: true, setup: func(r *http.Request) *atomic.Int32 {
			r.Body, r.ContentLength = io.NopCloser(strings.NewReader("payload")), 7
			return nil
		}},
		{name: "GetBody fails", wantErr: true, setup: func(r *http.Request) *atomic.Int32 {
			r.Body, r.ContentLength = io.NopCloser(strings.NewReader("payload")), 7
			r.GetBody = func() (io.ReadCloser, error) { return nil, errors.New("gone") }
			return nil
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hungUp := make(chan struct{}, 4)
			s := newRawServer(t, func(sc *srvConn) {
				_, body, err := sc.readReq()
				if err != nil {
					return
				}
				fmt.Fprintf(sc, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
				sc.Close()
				hungUp <- struct{}{}
			})
			tr := &Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				return plainConn{c}, nil
			}}
			defer tr.CloseIdleConnections()
			get(t, tr, s.url("/"))
			recvOrFail(t, hungUp, "the server to hang up")
			req := newReq(t, waitCtx(t), "PUT", s.url("/"), nil)
			req.Header.Set("X-Idempotency-Key", "k") // net/http's rule: PUT alone is not replayed
			gets := tc.setup(req)
			_, body, err := do(t, tr, req)
			if tc.wantErr {
				if err == nil {
					t.Fatal("succeeded without a way to resend the body")
				}
				return
			}
			if err != nil || body != "payload" {
				t.Fatalf("body %q err %v", body, err)
			}
			if gets != nil && gets.Load() != 1 {
				t.Errorf("GetBody called %d times", gets.Load())
			}
			if n := s.conns.Load(); n != 2 {
				t.Errorf("server saw %d connections, want 2", n)
			}
		})
	}
}
