package h1client

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

var benchPayload = []byte(`{"model":"m","max_tokens":64,"messages":[{"role":"user","content":"Say hello."}]}`)

const benchAnswer = `{"id":"msg_1","type":"message","content":[{"type":"text","text":"Hello."}]}`

func benchHandler(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	if r.URL.Path == "/chunked" {
		w.Write([]byte(benchAnswer[:20]))
		w.(http.Flusher).Flush()
		w.Write([]byte(benchAnswer[20:]))
		return
	}
	w.Header()["Content-Length"] = []string{strconv.Itoa(len(benchAnswer))}
	w.Write([]byte(benchAnswer))
}

// rawBenchServer answers every request with fixed bytes and allocates
// nothing per request, so that B/op and allocs/op are the client's own.
func rawBenchServer(b *testing.B) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	cl := []byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(benchAnswer)) + "\r\n\r\n" + benchAnswer)
	ch := []byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n14\r\n" + benchAnswer[:20] + "\r\n" +
		strconv.FormatInt(int64(len(benchAnswer)-20), 16) + "\r\n" + benchAnswer[20:] + "\r\n0\r\n\r\n")
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					chunked, n := false, 0
					for first := true; ; first = false {
						line, err := br.ReadSlice('\n')
						if err != nil {
							return
						}
						if first {
							chunked = bytes.Contains(line, []byte("/chunked"))
						}
						if len(line) <= 2 {
							break
						}
						if v, ok := bytes.CutPrefix(line, []byte("Content-Length: ")); ok {
							n, _ = strconv.Atoi(string(bytes.TrimSpace(v)))
						}
					}
					br.Discard(n)
					a := cl
					if chunked {
						a = ch
					}
					if _, err := c.Write(a); err != nil {
						return
					}
				}
			}()
		}
	}()
	b.Cleanup(func() { ln.Close() })
	return "http://" + ln.Addr().String()
}

// BenchmarkRoundTrip: a small POST, answer read to the end, against
// http.Transport, with a Content-Length and with a chunked answer.
func BenchmarkRoundTrip(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(benchHandler))
	defer srv.Close()
	servers := []struct{ name, url string }{
		{"httptest", srv.URL},
		{"raw", rawBenchServer(b)},
	}
	for _, server := range servers {
		for _, answer := range []string{"cl", "chunked"} {
			for _, impl := range []string{"h1client", "nethttp"} {
				b.Run(server.name+"/"+answer+"/"+impl, func(b *testing.B) {
					var rt http.RoundTripper
					if impl == "h1client" {
						t := &Transport{}
						defer t.CloseIdleConnections()
						rt = t
					} else {
						t := &http.Transport{}
						defer t.CloseIdleConnections()
						rt = t
					}
					url := server.url + "/" + answer
					b.ReportAllocs()
					for b.Loop() {
						req, err := http.NewRequest("POST", url, nil)
						if err != nil {
							b.Fatal(err)
						}
						req.Body, req.ContentLength = NewBody(benchPayload), int64(len(benchPayload))
						req.Header["Content-Type"] = []string{"application/json"}
						resp, err := rt.RoundTrip(req)
						if err != nil {
							b.Fatal(err)
						}
						n, err := io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if err != nil || n != int64(len(benchAnswer)) {
							b.Fatalf("read %d bytes: %v", n, err)
						}
					}
				})
			}
		}
	}
}
