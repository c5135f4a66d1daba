package gateway_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// TestUnauthenticatedSlowBodyIsCut: a request without a valid key that
// announces a body and sends it a byte at a time gets its 401 at once and
// its connection closed, instead of being read to the end first.
func TestUnauthenticatedSlowBodyIsCut(t *testing.T) {
	e := newEnv(t, nil, nil, "")
	for _, path := range []string{"/v1/messages", "/v1/chat/completions", "/v1/messages/count_tokens"} {
		t.Run(path, func(t *testing.T) {
			c, err := net.Dial("tcp", strings.TrimPrefix(e.gw.URL, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nx-api-key: wrong\r\nContent-Type: application/json\r\nContent-Length: 200000\r\n\r\n{", path)
			c.SetDeadline(time.Now().Add(5 * time.Second))
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("no answer while the body is still coming: %v", err)
			}
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusUnauthorized || !resp.Close {
				t.Fatalf("status %d, close %v: %s", resp.StatusCode, resp.Close, body)
			}
			// The gateway closes its end: the next read sees EOF, not a
			// server waiting for 199,999 more bytes.
			if _, err := br.ReadByte(); err != io.EOF {
				t.Fatalf("connection still open after the 401: %v", err)
			}
		})
	}
}

// TestClientStringsAreClipped: what a client sends is echoed, logged and
// recorded at most a few hundred bytes long.
func TestClientStringsAreClipped(t *testing.T) {
	e := newEnv(t, nil, nil, "")
	long := strings.Repeat("é", 2000) // 4,000 bytes, cut on a character boundary
	resp := e.do("POST", "/v1/chat/completions", `{"model":"`+long+`","messages":[{"role":"user","content":"x"}]}`,
		append(openAIAuth, "User-Agent: "+strings.Repeat("u", 3000))...)
	body := readAll(t, resp.Body)
	msg := gjson.GetBytes(body, "error.message").String()
	if resp.StatusCode != 404 || len(msg) > 400 || !strings.Contains(msg, "é…") {
		t.Fatalf("status %d, message of %d bytes: %.200s", resp.StatusCode, len(msg), msg)
	}
	line := e.logLine(resp.Header.Get("Tollgate-Request-Id"))
	if m := line.Get("model").String(); len(m) > 256 || !strings.HasSuffix(m, "…") {
		t.Errorf("logged model of %d bytes", len(m))
	}
	resp = e.do("GET", "/"+strings.Repeat("p", 3000), "", openAIAuth...)
	body = readAll(t, resp.Body)
	if resp.StatusCode != 404 || len(body) > 600 {
		t.Errorf("status %d, %d bytes for an unknown path", resp.StatusCode, len(body))
	}
	line = e.logLine(resp.Header.Get("Tollgate-Request-Id"))
	if p := line.Get("path").String(); len(p) > 256 {
		t.Errorf("logged path of %d bytes", len(p))
	}
}

// TestSlowReaderIsLetGoAtTheTotalTimeout: a client that stops reading a
// stream is not held past its provider's total timeout (plus a second to
// write the stream's end): the handler ends, cut off by the total, and
// its line is logged.
func TestSlowReaderIsLetGoAtTheTotalTimeout(t *testing.T) {
	big := strings.Repeat("x", 1000)
	var evs [][]byte
	for range 8000 { // 8 MB: more than the client's and the kernel's buffers
		evs = append(evs, []byte(`data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"`+big+`"}}]}`+"\n\n"))
	}
	up := upstreamtest.Static(upstreamtest.Reply{Events: evs, Hang: true})
	e := newEnv(t, nil, up, `, timeouts: { total: 2s }`)
	c, err := net.Dial("tcp", strings.TrimPrefix(e.gw.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.(*net.TCPConn).SetReadBuffer(4096)
	body := `{"model":"gpt-x","stream":true,"messages":[{"role":"user","content":"x"}]}`
	start := time.Now()
	fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n%s", masterKey, len(body), body)
	resp, err := http.ReadResponse(bufio.NewReaderSize(c, 4096), nil) // the head, and at most a few events
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%v %v", resp, err)
	}
	// Read nothing more; the handler must end by itself. A handler held by
	// the client ends never, or at a later timeout: far past this bound,
	// which is loose so that a busy machine does not fail the test.
	for !strings.Contains(e.logs.String(), `"path":"/v1/chat/completions"`) {
		if time.Since(start) > 15*time.Second {
			t.Fatal("the handler is still writing to a client that stopped reading, 15 s after a 2 s total")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// What ended it is the total: the upstream read it cancels, or the
	// write deadline it sets (the only other one is 30 s per write).
	line := e.logLine(resp.Header.Get("Tollgate-Request-Id"))
	why := line.Get("error").String()
	if !line.Get("client_gone").Bool() || !strings.Contains(why, "total timeout") && !strings.Contains(why, "i/o timeout") {
		t.Errorf("the handler ended after %s, but not at the total: %s", time.Since(start), line.Raw)
	}
}
