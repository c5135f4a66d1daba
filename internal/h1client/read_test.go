package h1client

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/textproto"
	"slices"
	"strings"
	"testing"
)

// TestResponseFraming sends each answer to a first request, then a plain
// answer to a second one, and checks both the response and whether the
// second request came on the same connection.
func TestResponseFraming(t *testing.T) {
	tests := []struct {
		name       string
		method     string
		answer     string
		closeAfter bool // server hangs up after the answer
		wantStatus string
		wantBody   string
		wantCL     int64
		wantTE     []string
		wantClose  bool
		wantReuse  bool
		check      func(t *testing.T, resp *http.Response)
	}{
		{
			name:       "content-length",
			answer:     "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: b\r\n\r\nhello",
			wantStatus: "200 OK", wantBody: "hello", wantCL: 5, wantReuse: true,
			check: func(t *testing.T, resp *http.Response) {
				if resp.Header.Get("X-A") != "b" {
					t.Errorf("X-A = %q", resp.Header.Get("X-A"))
				}
			},
		},
		{
			name:       "chunked with extensions",
			answer:     "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n1;a=b;c\r\n \r\n6\r\nworld!\r\n0\r\n\r\n",
			wantStatus: "200 OK", wantBody: "hello world!", wantCL: -1, wantTE: []string{"chunked"}, wantReuse: true,
			check: func(t *testing.T, resp *http.Response) {
				if _, ok := resp.Header["Transfer-Encoding"]; ok {
					t.Error("Transfer-Encoding left in Header")
				}
			},
		},
		{
			name:       "chunked with trailers",
			answer:     "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-T\r\n\r\n2\r\nok\r\n0\r\nX-T: 1\r\nX-U: 2\r\n\r\n",
			wantStatus: "200 OK", wantBody: "ok", wantCL: -1, wantTE: []string{"chunked"}, wantReuse: true,
		},
		{
			name:       "read until close",
			answer:     "HTTP/1.1 200 OK\r\n\r\nstreamed until close",
			closeAfter: true,
			wantStatus: "200 OK", wantBody: "streamed until close", wantCL: -1, wantClose: true,
		},
		{
			name:       "HEAD",
			method:     "HEAD",
			answer:     "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n",
			wantStatus: "200 OK", wantCL: 10, wantReuse: true,
		},
		{
			name:       "HEAD chunked",
			method:     "HEAD",
			answer:     "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
			wantStatus: "200 OK", wantCL: -1, wantTE: []string{"chunked"}, wantReuse: true,
		},
		{
			name:       "204",
			answer:     "HTTP/1.1 204 No Content\r\n\r\n",
			wantStatus: "204 No Content", wantCL: 0, wantReuse: true,
		},
		{
			name:       "304 with Content-Length",
			answer:     "HTTP/1.1 304 Not Modified\r\nContent-Length: 100\r\n\r\n",
			wantStatus: "304 Not Modified", wantCL: 0, wantReuse: true,
		},
		{
			name:       "500 read fully",
			answer:     "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\noops",
			wantStatus: "500 Internal Server Error", wantBody: "oops", wantCL: 4, wantReuse: true,
		},
		{
			name:       "Content-Length 0",
			answer:     "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
			wantStatus: "200 OK", wantCL: 0, wantReuse: true,
			check: func(t *testing.T, resp *http.Response) {
				if resp.Body != http.NoBody {
					t.Errorf("Body = %T, want http.NoBody", resp.Body)
				}
			},
		},
		{
			name:       "Connection close",
			answer:     "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok",
			wantStatus: "200 OK", wantBody: "ok", wantCL: 2, wantClose: true,
		},
		{
			name:       "HTTP/1.0 without keep-alive",
			answer:     "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok",
			wantStatus: "200 OK", wantBody: "ok", wantCL: 2, wantClose: true,
			check: func(t *testing.T, resp *http.Response) {
				if resp.Proto != "HTTP/1.0" || resp.ProtoMajor != 1 || resp.ProtoMinor != 0 {
					t.Errorf("proto = %s %d.%d", resp.Proto, resp.ProtoMajor, resp.ProtoMinor)
				}
			},
		},
		{
			name:       "HTTP/1.0 keep-alive",
			answer:     "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok",
			wantStatus: "200 OK", wantBody: "ok", wantCL: 2, wantReuse: true,
		},
		{
			name:       "Transfer-Encoding and Content-Length",
			answer:     "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
			wantStatus: "200 OK", wantBody: "ok", wantCL: -1, wantTE: []string{"chunked"}, wantClose: true,
			check: func(t *testing.T, resp *http.Response) {
				if _, ok := resp.Header["Content-Length"]; ok {
					t.Error("Content-Length left in Header")
				}
			},
		},
		{
			name:       "Transfer-Encoding not chunked",
			answer:     "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nraw coded bytes",
			closeAfter: true,
			wantStatus: "200 OK", wantBody: "raw coded bytes", wantCL: -1, wantTE: []string{"gzip"}, wantClose: true,
		},
		{
			name:       "Transfer-Encoding gzip, chunked",
			answer:     "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
			wantStatus: "200 OK", wantBody: "abc", wantCL: -1, wantTE: []string{"gzip", "chunked"}, wantReuse: true,
		},
		{
			name:       "HTTP/1.0 with Transfer-Encoding",
			answer:     "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\nok",
			wantStatus: "200 OK", wantBody: "ok", wantCL: 2, wantClose: true,
		},
		{
			name:       "100 and 103 skipped",
			answer:     "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
			wantStatus: "200 OK", wantBody: "ok", wantCL: 2, wantReuse: true,
			check: func(t *testing.T, resp *http.Response) {
				if _, ok := resp.Header["Link"]; ok {
					t.Error("1xx header leaked into the final response")
				}
			},
		},
		{
			name:       "duplicate equal Content-Length",
			answer:     "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length:  2 \r\n\r\nok",
			wantStatus: "200 OK", wantBody: "ok", wantCL: 2, wantReuse: true,
			check: func(t *testing.T, resp *http.Response) {
				if got := resp.Header["Content-Length"]; !slices.Equal(got, []string{"2"}) {
					t.Errorf("Content-Length header = %q", got)
				}
			},
		},
		{
			name:       "no reason phrase",
			answer:     "HTTP/1.1 200\r\nContent-Length: 2\r\n\r\nok",
			wantStatus: "200", wantBody: "ok", wantCL: 2, wantReuse: true,
		},
		{
			name:       "custom reason and bare LF",
			answer:     "HTTP/1.1 299 Whatever Goes\nContent-Length: 2\n\nok",
			wantStatus: "299 Whatever Goes", wantBody: "ok", wantCL: 2, wantReuse: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newRawServer(t, func(sc *srvConn) {
				sc.serveLoop(func(req *http.Request, _ []byte) []byte {
					if req.URL.Path == "/next" {
						return []byte(okNext)
					}
					sc.Write([]byte(tc.answer))
					if tc.closeAfter {
						return nil
					}
					return []byte{}
				})
			})
			tr := &Transport{}
			defer tr.CloseIdleConnections()
			method := tc.method
			if method == "" {
				method = "GET"
			}
			resp, body, err := do(t, tr, newReq(t, waitCtx(t), method, s.url("/first"), nil))
			if err != nil {
				t.Fatal(err)
			}
			if resp.Status != tc.wantStatus {
				t.Errorf("Status = %q, want %q", resp.Status, tc.wantStatus)
			}
			if body != tc.wantBody {
				t.Errorf("body = %q, want %q", body, tc.wantBody)
			}
			if resp.ContentLength != tc.wantCL {
				t.Errorf("ContentLength = %d, want %d", resp.ContentLength, tc.wantCL)
			}
			if !slices.Equal(resp.TransferEncoding, tc.wantTE) {
				t.Errorf("TransferEncoding = %q, want %q", resp.TransferEncoding, tc.wantTE)
			}
			if resp.Close != tc.wantClose {
				t.Errorf("Close = %v, want %v", resp.Close, tc.wantClose)
			}
			if resp.Request == nil {
				t.Error("Request not set")
			}
			if tc.check != nil {
				tc.check(t, resp)
			}
			if got := get(t, tr, s.url("/next")); got != "next" {
				t.Errorf("second body = %q", got)
			}
			wantConns := int32(2)
			if tc.wantReuse {
				wantConns = 1
			}
			if got := s.conns.Load(); got != wantConns {
				t.Errorf("server saw %d connections, want %d (reuse %v)", got, wantConns, tc.wantReuse)
			}
		})
	}
}

// TestBadAnswers checks that malformed or cut answers fail clearly and that
// the connection is not pooled: the next request works on a new one.
func TestBadAnswers(t *testing.T) {
	tests := []struct {
		name       string
		answer     string
		closeAfter bool
		rtErr      string // substring of the RoundTrip error; "" means RoundTrip succeeds and the body read fails
		bodyErr    error  // errors.Is target for the body read error
		bodyErrStr string
	}{
		{name: "short status code", answer: "HTTP/1.1 20 OK\r\n\r\n", rtErr: "malformed status line"},
		{name: "four digit status", answer: "HTTP/1.1 2000 OK\r\n\r\n", rtErr: "malformed status line"},
		{name: "no space after code", answer: "HTTP/1.1 200OK\r\n\r\n", rtErr: "malformed status line"},
		{name: "status below 100", answer: "HTTP/1.1 099 Low\r\n\r\n", rtErr: "malformed status line"},
		{name: "not HTTP", answer: "SSH-2.0-OpenSSH\r\n\r\n", rtErr: "malformed status line"},
		{name: "HTTP/2.0", answer: "HTTP/2.0 200 OK\r\n\r\n", rtErr: "unsupported protocol version"},
		{name: "control in reason", answer: "HTTP/1.1 200 O\x01K\r\n\r\n", rtErr: "malformed status line"},
		{name: "101", answer: "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n", rtErr: "101"},
		{name: "too many 1xx", answer: strings.Repeat("HTTP/1.1 100 Continue\r\n\r\n", 6) + "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", rtErr: "too many 1xx"},
		{name: "bad Content-Length", answer: "HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n", rtErr: "invalid Content-Length"},
		{name: "negative Content-Length", answer: "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", rtErr: "invalid Content-Length"},
		{name: "differing Content-Length", answer: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok", rtErr: "differing Content-Length"},
		{name: "bad header line", answer: "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", rtErr: "reading response header"},
		{name: "head just too large", answer: "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("a", maxHeadBytes-27) + "\r\n\r\n", rtErr: "larger than 1 MiB"},
		{name: "head too large", answer: "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("a", maxHeadBytes+10) + "\r\n\r\n", rtErr: "larger than 1 MiB"},
		{name: "head cut", answer: "HTTP/1.1 200 OK\r\nContent-Le", closeAfter: true, rtErr: "reading response header"},
		{name: "bad chunk size", answer: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n", bodyErrStr: "chunk"},
		{name: "bad chunk end", answer: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokXX0\r\n\r\n", bodyErrStr: "malformed chunked"},
		{name: "cut mid Content-Length body", answer: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", closeAfter: true, bodyErr: io.ErrUnexpectedEOF},
		{name: "cut mid chunk", answer: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", closeAfter: true, bodyErr: io.ErrUnexpectedEOF},
		{name: "cut before trailers end", answer: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n", closeAfter: true, bodyErr: io.ErrUnexpectedEOF},
		{name: "cut in trailers", answer: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-T: 1\r\n", closeAfter: true, bodyErr: io.ErrUnexpectedEOF},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newRawServer(t, func(sc *srvConn) {
				sc.serveLoop(func(req *http.Request, _ []byte) []byte {
					if req.URL.Path == "/next" {
						return []byte(okNext)
					}
					sc.Write([]byte(tc.answer))
					if tc.closeAfter {
						return nil
					}
					return []byte{} // keep the connection open: pooling it would show
				})
			})
			tr := &Transport{}
			defer tr.CloseIdleConnections()
			resp, err := tr.RoundTrip(newReq(t, waitCtx(t), "GET", s.url("/bad"), nil))
			if tc.rtErr != "" {
				if err == nil {
					resp.Body.Close()
					t.Fatalf("RoundTrip succeeded, want error containing %q", tc.rtErr)
				}
				if !strings.Contains(err.Error(), tc.rtErr) || !strings.HasPrefix(err.Error(), "h1client: ") {
					t.Fatalf("error %q, want h1client error containing %q", err, tc.rtErr)
				}
			} else {
				if err != nil {
					t.Fatalf("RoundTrip: %v", err)
				}
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
				if err == nil {
					t.Fatal("body read succeeded, want error")
				}
				if tc.bodyErr != nil && !errors.Is(err, tc.bodyErr) {
					t.Fatalf("body error %v, want %v", err, tc.bodyErr)
				}
				if tc.bodyErrStr != "" && !strings.Contains(err.Error(), tc.bodyErrStr) {
					t.Fatalf("body error %q, want it to contain %q", err, tc.bodyErrStr)
				}
			}
			if got := get(t, tr, s.url("/next")); got != "next" {
				t.Errorf("next body = %q", got)
			}
			if got := s.conns.Load(); got != 2 {
				t.Errorf("server saw %d connections, want 2: the broken one must not be reused", got)
			}
		})
	}
}

func TestParseStatusLine(t *testing.T) {
	tests := []struct {
		line       string
		wantCode   int
		wantStatus string
		wantMinor  int
		bad        bool
	}{
		{line: "HTTP/1.1 200 OK\r\n", wantCode: 200, wantStatus: "200 OK", wantMinor: 1},
		{line: "HTTP/1.0 404 Not Found\n", wantCode: 404, wantStatus: "404 Not Found"},
		{line: "HTTP/1.1 200\r\n", wantCode: 200, wantStatus: "200", wantMinor: 1},
		{line: "HTTP/1.1 200 \r\n", wantCode: 200, wantStatus: "200 ", wantMinor: 1},
		{line: "HTTP/1.1 999 Odd\tTab\r\n", wantCode: 999, wantStatus: "999 Odd\tTab", wantMinor: 1},
		{line: "HTTP/1.1 200 \xffobs\r\n", wantCode: 200, wantStatus: "200 \xffobs", wantMinor: 1},
		{line: "HTTP/1.1 20\r\n", bad: true},
		{line: "HTTP/1.1  200 OK\r\n", bad: true},
		{line: "HTTP/1.1 2x0 OK\r\n", bad: true},
		{line: "HTTP/1.2 200 OK\r\n", bad: true},
		{line: "HTTP/1.1 200 O\rK\r\n", bad: true},
		{line: "http/1.1 200 OK\r\n", bad: true},
		{line: "", bad: true},
	}
	for _, tc := range tests {
		var resp http.Response
		err := parseStatusLine([]byte(tc.line), &resp)
		if tc.bad {
			if err == nil {
				t.Errorf("%q: no error", tc.line)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.line, err)
			continue
		}
		if resp.StatusCode != tc.wantCode || resp.Status != tc.wantStatus || resp.ProtoMinor != tc.wantMinor {
			t.Errorf("%q: got %d %q 1.%d", tc.line, resp.StatusCode, resp.Status, resp.ProtoMinor)
		}
	}
}

// parseAll runs the response parser over data as if a server sent it, and
// reads the body to its end.
func parseAll(data []byte, method string, bufSize int) (*http.Response, []byte, error, error) {
	s := &src{r: bytes.NewReader(data), left: -1}
	br := bufio.NewReaderSize(s, bufSize)
	tp := &textproto.Reader{R: br}
	b, err := readResponse(s, br, tp, method)
	if err != nil {
		return nil, nil, err, nil
	}
	var rd io.Reader = b
	body, berr := io.ReadAll(rd)
	return &b.resp, body, nil, berr
}

func FuzzReadResponse(f *testing.F) {
	seeds := []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-T\r\n\r\n2\r\nok\r\n0\r\nX-T: 1\r\n\r\n",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
		"HTTP/1.1 101 Switching Protocols\r\n\r\n",
		"HTTP/1.0 200 OK\r\n\r\nuntil eof",
		"HTTP/1.1 204 No Content\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok",
		"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\nContent-Length: 3\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
		"HTTP/1.1 20 OK\r\n\r\n",
		"HTTP/1.1 200 OK\r\n bad fold\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n",
		"garbage",
		"",
	}
	for _, s := range seeds {
		f.Add([]byte(s), false, uint16(4096))
	}
	f.Add([]byte(seeds[0]), true, uint16(16))
	f.Add([]byte(seeds[2]), false, uint16(16))
	f.Fuzz(func(t *testing.T, data []byte, head bool, size uint16) {
		method := "GET"
		if head {
			method = "HEAD"
		}
		resp, body, err, berr := parseAll(data, method, 16+int(size)%8192)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "h1client: ") {
				t.Fatalf("error without context: %v", err)
			}
			return
		}
		if resp.StatusCode < 200 || resp.StatusCode > 999 {
			t.Fatalf("final status %d", resp.StatusCode)
		}
		if resp.ProtoMajor != 1 || resp.ContentLength < -1 {
			t.Fatalf("proto %d, ContentLength %d", resp.ProtoMajor, resp.ContentLength)
		}
		if berr == nil && resp.ContentLength > 0 && !head && int64(len(body)) != resp.ContentLength {
			t.Fatalf("read %d bytes of a %d-byte body", len(body), resp.ContentLength)
		}
		if int64(len(body)) > int64(len(data)) {
			t.Fatalf("body longer than input")
		}
	})
}

// TestHeadLimit checks the 1 MiB bound on the head is exact, whatever the
// read buffer size.
func TestHeadLimit(t *testing.T) {
	const fixed = len("HTTP/1.1 200 OK\r\nX-Big: \r\n\r\n")
	for _, size := range []int{16, 4096, 65536} {
		for _, extra := range []int{0, 1} {
			data := "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("a", maxHeadBytes-fixed+extra) + "\r\n\r\n" + strings.Repeat("b", 100000)
			_, _, err, _ := parseAll([]byte(data), "GET", size)
			if extra == 0 && err != nil {
				t.Errorf("size %d: head of exactly 1 MiB: %v", size, err)
			}
			if extra == 1 && !errors.Is(err, errHeadTooLarge) {
				t.Errorf("size %d: head of 1 MiB + 1: err %v", size, err)
			}
		}
	}
}
