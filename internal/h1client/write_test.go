package h1client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
)

// TestWritevExactBytes: a NewBody request leaves as head + body, byte for byte.
func TestWritevExactBytes(t *testing.T) {
	got := make(chan string, 1)
	wantLen := make(chan int, 1)
	s := newRawServer(t, func(sc *srvConn) {
		buf := make([]byte, <-wantLen)
		if _, err := io.ReadFull(sc.br, buf); err != nil {
			got <- err.Error()
			return
		}
		got <- string(buf)
		sc.Write([]byte(okNext))
		io.Copy(io.Discard, sc)
	})
	addr := s.ln.Addr().String()
	want := "POST /v1/messages?beta=true HTTP/1.1\r\nHost: " + addr + "\r\nUser-Agent: Go-http-client/1.1\r\nContent-Length: 5\r\n\r\nhello"
	wantLen <- len(want)
	tr := &Transport{}
	defer tr.CloseIdleConnections()
	req := newReq(t, waitCtx(t), "POST", s.url("/v1/messages?beta=true"), nil)
	req.Body, req.ContentLength = NewBody([]byte("hello")), 5
	if _, body, err := do(t, tr, req); err != nil || body != "next" {
		t.Fatalf("body %q err %v", body, err)
	}
	if g := <-got; g != want {
		t.Errorf("server got\n%q\nwant\n%q", g, want)
	}
}

func TestRequestFraming(t *testing.T) {
	type seen struct {
		header http.Header
		te     []string
		body   string
		host   string
		ua     []string
	}
	ch := make(chan seen, 1)
	s := newRawServer(t, func(sc *srvConn) {
		sc.serveLoop(func(req *http.Request, body []byte) []byte {
			ch <- seen{header: req.Header, te: req.TransferEncoding, body: string(body), host: req.Host, ua: req.Header["User-Agent"]}
			return []byte(okNext)
		})
	})
	tests := []struct {
		name     string
		method   string
		body     func() io.ReadCloser
		cl       int64
		setup    func(*http.Request)
		wantCL   string // "" means no Content-Length header
		wantTE   bool
		wantBody string
		wantHost string
		wantUA   []string
	}{
		{name: "GET no body", method: "GET", wantUA: []string{"Go-http-client/1.1"}},
		{name: "HEAD no body", method: "HEAD"},
		{name: "POST nil body", method: "POST", wantCL: "0"},
		{name: "PUT NoBody", method: "PUT", body: func() io.ReadCloser { return http.NoBody }, wantCL: "0"},
		{name: "DELETE nil body", method: "DELETE", wantCL: "0"},
		{name: "POST NewBody without ContentLength", method: "POST", body: func() io.ReadCloser { return NewBody([]byte("abc")) }, wantCL: "3", wantBody: "abc"},
		{name: "POST Parts, two", method: "POST", body: func() io.ReadCloser { return &partsBody{parts: [][]byte{[]byte(`{"model":`), []byte(`"m"}`)}} }, wantCL: "13", wantBody: `{"model":"m"}`},
		{name: "POST Parts, more than the writev scratch", method: "POST", body: func() io.ReadCloser {
			return &partsBody{parts: [][]byte{[]byte("a"), []byte("bc"), nil, []byte("def"), []byte("g")}}
		}, cl: 7, wantCL: "7", wantBody: "abcdefg"},
		{name: "POST empty NewBody", method: "POST", body: func() io.ReadCloser { return NewBody(nil) }, wantCL: "0"},
		{name: "POST reader with length", method: "POST", body: func() io.ReadCloser { return io.NopCloser(strings.NewReader("12345")) }, cl: 5, wantCL: "5", wantBody: "12345"},
		{name: "POST reader unknown length", method: "POST", body: func() io.ReadCloser { return io.NopCloser(iotest.OneByteReader(strings.NewReader("streamed"))) }, cl: -1, wantTE: true, wantBody: "streamed"},
		{name: "POST reader length 0 probed non-empty", method: "POST", body: func() io.ReadCloser { return io.NopCloser(strings.NewReader("probe")) }, wantTE: true, wantBody: "probe"},
		{name: "POST reader length 0 probed empty", method: "POST", body: func() io.ReadCloser { return io.NopCloser(strings.NewReader("")) }, wantCL: "0"},
		{name: "GET reader length 0 probed empty", method: "GET", body: func() io.ReadCloser { return io.NopCloser(strings.NewReader("")) }},
		{name: "Host override", method: "GET", setup: func(r *http.Request) { r.Host = "api.example.com" }, wantHost: "api.example.com"},
		{name: "custom User-Agent", method: "GET", setup: func(r *http.Request) { r.Header.Set("User-Agent", "tollgate/1") }, wantUA: []string{"tollgate/1"}},
		{name: "empty User-Agent sends none", method: "GET", setup: func(r *http.Request) { r.Header["User-Agent"] = []string{""} }, wantUA: nil},
		{name: "caller framing headers ignored", method: "POST", body: func() io.ReadCloser { return NewBody([]byte("xy")) },
			setup: func(r *http.Request) {
				r.Header.Set("Content-Length", "999")
				r.Header.Set("Transfer-Encoding", "chunked")
			}, wantCL: "2", wantBody: "xy"},
	}
	tr := &Transport{}
	defer tr.CloseIdleConnections()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := newReq(t, waitCtx(t), tc.method, s.url("/x"), nil)
			if tc.body != nil {
				req.Body = tc.body()
			}
			req.ContentLength = tc.cl
			if tc.setup != nil {
				tc.setup(req)
			}
			if _, _, err := do(t, tr, req); err != nil {
				t.Fatal(err)
			}
			got := <-ch
			if cl := got.header.Get("Content-Length"); cl != tc.wantCL {
				t.Errorf("Content-Length %q, want %q", cl, tc.wantCL)
			}
			if isTE := len(got.te) == 1 && got.te[0] == "chunked"; isTE != tc.wantTE {
				t.Errorf("TransferEncoding %q, want chunked=%v", got.te, tc.wantTE)
			}
			if got.body != tc.wantBody {
				t.Errorf("body %q, want %q", got.body, tc.wantBody)
			}
			if tc.wantHost != "" && got.host != tc.wantHost {
				t.Errorf("Host %q, want %q", got.host, tc.wantHost)
			}
			if tc.wantUA != nil || tc.name == "empty User-Agent sends none" {
				if fmt.Sprint(got.ua) != fmt.Sprint(tc.wantUA) {
					t.Errorf("User-Agent %q, want %q", got.ua, tc.wantUA)
				}
			}
			if _, ok := got.header["Accept-Encoding"]; ok {
				t.Error("Accept-Encoding added")
			}
		})
	}
}

// TestChunkedRequestBody: a net/http server decodes a chunked request body,
// trailers included.
func TestChunkedRequestBody(t *testing.T) {
	type got struct {
		body    string
		te      []string
		trailer string
	}
	ch := make(chan got, 1)
	srv, _ := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		ch <- got{string(b), r.TransferEncoding, r.Trailer.Get("X-Sum")}
	})
	tr := &Transport{}
	defer tr.CloseIdleConnections()
	payload := strings.Repeat("0123456789", 3000) // several chunks
	pr, pw := io.Pipe()
	go func() {
		for i := 0; i < len(payload); i += 7000 {
			pw.Write([]byte(payload[i:min(i+7000, len(payload))]))
		}
		pw.Close()
	}()
	req := newReq(t, waitCtx(t), "POST", srv.URL+"/", pr)
	req.ContentLength = -1
	req.Trailer = http.Header{"X-Sum": nil}
	req.Trailer.Set("X-Sum", "42")
	if resp, _, err := do(t, tr, req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("err %v", err)
	}
	g := <-ch
	if g.body != payload {
		t.Errorf("server got %d bytes, want %d", len(g.body), len(payload))
	}
	if len(g.te) != 1 || g.te[0] != "chunked" {
		t.Errorf("TransferEncoding %q", g.te)
	}
	if g.trailer != "42" {
		t.Errorf("trailer %q", g.trailer)
	}
}

// TestRequestRejectedBeforeDial: requests that cannot be written fail
// without a connection, and their body is closed.
func TestRequestRejectedBeforeDial(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(*http.Request)
		wantErr string
	}{
		{name: "CR LF in value", setup: func(r *http.Request) { r.Header.Set("X-Bad", "a\r\nX-Injected: 1") }, wantErr: "invalid header field value"},
		{name: "NUL in value", setup: func(r *http.Request) { r.Header["X-Bad"] = []string{"a\x00b"} }, wantErr: "invalid header field value"},
		{name: "space in name", setup: func(r *http.Request) { r.Header["Bad Name"] = []string{"v"} }, wantErr: "invalid header field name"},
		{name: "bad User-Agent", setup: func(r *http.Request) { r.Header["User-Agent"] = []string{"a\nb"} }, wantErr: "invalid User-Agent"},
		{name: "bad method", setup: func(r *http.Request) { r.Method = "GE T" }, wantErr: "invalid method"},
		{name: "bad Host", setup: func(r *http.Request) { r.Host = "a\r\nb" }, wantErr: "invalid Host"},
		{name: "ContentLength mismatch", setup: func(r *http.Request) {
			r.Body, r.ContentLength = NewBody([]byte("abc")), 10
		}, wantErr: "ContentLength=10 with Body length 3"},
		{name: "ContentLength without body", setup: func(r *http.Request) { r.Body, r.ContentLength = nil, 4 }, wantErr: "with nil Body"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var dials atomic.Int32
			tr := &Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				dials.Add(1)
				return nil, errors.New("must not dial")
			}}
			var closed atomic.Bool
			req := newReq(t, waitCtx(t), "POST", "http://127.0.0.1:1/", nil)
			req.Body = closeRecorder{Reader: strings.NewReader("x"), closed: &closed}
			req.ContentLength = 1
			tc.setup(req)
			_, err := tr.RoundTrip(req)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err %v, want %q", err, tc.wantErr)
			}
			if dials.Load() != 0 {
				t.Error("dialed")
			}
			if _, ok := req.Body.(closeRecorder); ok && !closed.Load() {
				t.Error("body not closed")
			}
		})
	}
}

func TestRequestBodyErrors(t *testing.T) {
	s := newRawServer(t, func(sc *srvConn) {
		sc.serveLoop(func(*http.Request, []byte) []byte { return []byte(okNext) })
	})
	tr := &Transport{}
	defer tr.CloseIdleConnections()
	t.Run("short body", func(t *testing.T) {
		var closed atomic.Bool
		req := newReq(t, waitCtx(t), "POST", s.url("/"), nil)
		req.Body, req.ContentLength = closeRecorder{Reader: strings.NewReader("abc"), closed: &closed}, 10
		_, err := tr.RoundTrip(req)
		if err == nil || !strings.Contains(err.Error(), "ContentLength=10 with Body length 3") {
			t.Fatalf("err %v", err)
		}
		if !closed.Load() {
			t.Error("body not closed")
		}
	})
	t.Run("body read error", func(t *testing.T) {
		req := newReq(t, waitCtx(t), "POST", s.url("/"), nil)
		req.Body, req.ContentLength = io.NopCloser(iotest.ErrReader(errors.New("disk on fire"))), -1
		_, err := tr.RoundTrip(req)
		if err == nil || !strings.Contains(err.Error(), "disk on fire") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("body closed after success", func(t *testing.T) {
		var closed atomic.Bool
		req := newReq(t, waitCtx(t), "POST", s.url("/"), nil)
		req.Body, req.ContentLength = closeRecorder{Reader: strings.NewReader("abc"), closed: &closed}, 3
		if _, _, err := do(t, tr, req); err != nil {
			t.Fatal(err)
		}
		if !closed.Load() {
			t.Error("body not closed")
		}
	})
	if got := get(t, tr, s.url("/")); got != "next" {
		t.Errorf("after errors: %q", got)
	}
}

func TestNewBody(t *testing.T) {
	b := NewBody([]byte("hello"))
	bb, ok := b.(Bytes)
	if !ok {
		t.Fatal("NewBody does not implement Bytes")
	}
	if l, ok := b.(interface{ Len() int }); !ok || l.Len() != 5 {
		t.Fatal("Len")
	}
	p := make([]byte, 2)
	if n, _ := b.Read(p); n != 2 || string(bb.Bytes()) != "llo" {
		t.Fatalf("after Read: Bytes %q", bb.Bytes())
	}
	rest, err := io.ReadAll(b)
	if err != nil || string(rest) != "llo" || b.Close() != nil {
		t.Fatalf("rest %q err %v", rest, err)
	}
}

// TestEarlyAnswerWhileWriting: the server answers 413 and hangs up without
// reading a large body. The write fails; the answer is returned when the
// kernel still has it, else the write error. Either way nothing hangs and
// the body is closed.
func TestEarlyAnswerWhileWriting(t *testing.T) {
	s := newRawServer(t, func(sc *srvConn) {
		if _, err := http.ReadRequest(sc.br); err != nil {
			return
		}
		sc.Write([]byte("HTTP/1.1 413 Request Entity Too Large\r\nConnection: close\r\nContent-Length: 3\r\n\r\nbig"))
	})
	tr := &Transport{}
	var closed atomic.Bool
	payload := strings.Repeat("x", 32<<20)
	for _, bytesBody := range []bool{true, false} {
		closed.Store(false)
		req := newReq(t, waitCtx(t), "POST", s.url("/"), nil)
		if bytesBody {
			req.Body = NewBody([]byte(payload))
		} else {
			req.Body = closeRecorder{Reader: strings.NewReader(payload), closed: &closed}
		}
		req.ContentLength = int64(len(payload))
		resp, body, err := do(t, tr, req)
		switch {
		case err == nil:
			if resp.StatusCode != 413 || body != "big" {
				t.Errorf("status %d body %q", resp.StatusCode, body)
			}
			t.Logf("Bytes body %v: got the early answer", bytesBody)
		default:
			t.Logf("Bytes body %v: write error: %v", bytesBody, err)
		}
		if !bytesBody && !closed.Load() {
			t.Error("body not closed")
		}
	}
}

func TestInformationalCap(t *testing.T) {
	for n := 0; n <= max1xx+1; n++ {
		data := strings.Repeat("HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n", n) + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
		resp, body, err, berr := parseAll([]byte(data), "GET", 4096)
		if n <= max1xx {
			if err != nil || berr != nil || resp.StatusCode != 200 || string(body) != "ok" {
				t.Errorf("%d 1xx heads: err %v %v", n, err, berr)
			}
		} else if !errors.Is(err, errTooMany1xx) {
			t.Errorf("%d 1xx heads: err %v, want errTooMany1xx", n, err)
		}
	}
}

// partsBody is a Parts body, as a spliced request body is.
type partsBody struct{ parts [][]byte }

func (p *partsBody) Parts() [][]byte { return p.parts }
func (p *partsBody) Close() error    { return nil }
func (p *partsBody) Read(b []byte) (int, error) {
	for len(p.parts) > 0 && len(p.parts[0]) == 0 {
		p.parts = p.parts[1:]
	}
	if len(p.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(b, p.parts[0])
	p.parts[0] = p.parts[0][n:]
	return n, nil
}
