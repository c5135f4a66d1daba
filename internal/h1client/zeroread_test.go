package h1client

import (
	"net/http"
	"testing"
	"time"
)

// A zero-length Read of a streamed body returns at once (io.Reader:
// "except when len(p) == 0"), rather than waiting for the server's next
// bytes.
func TestZeroLengthReadDoesNotWait(t *testing.T) {
	release := make(chan struct{})
	s := newRawServer(t, func(sc *srvConn) {
		if _, _, err := sc.readReq(); err != nil {
			return
		}
		sc.Write([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"))
		<-release
		sc.Write([]byte("5\r\nhello\r\n0\r\n\r\n"))
	})
	defer close(release)
	tr := &Transport{}
	req, _ := http.NewRequest("GET", s.url("/"), nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	done := make(chan struct{})
	go func() { resp.Body.Read(nil); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Errorf("Read(nil) on a chunked body waited for the next bytes")
	}
}
