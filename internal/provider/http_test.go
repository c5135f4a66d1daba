package provider

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/dialect"
)

// slowStream writes a byte every gap, count times, then hangs.
func slowStream(gap time.Duration, count int) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for i := 0; i < count; i++ {
			w.Write([]byte("x"))
			rc.Flush()
			select {
			case <-time.After(gap):
			case <-r.Context().Done():
				return
			}
		}
		<-r.Context().Done()
	}))
}

func newTestHTTP(t *testing.T, url string, idle time.Duration) *HTTP {
	t.Helper()
	p, err := New(config.Provider{Name: "p", Type: "openai", BaseURL: url, APIKey: "k",
		Timeouts: config.Timeouts{Connect: time.Second, FirstByte: time.Second, Idle: idle}})
	if err != nil {
		t.Fatal(err)
	}
	return p.(*HTTP)
}

func TestIdleTimeout(t *testing.T) {
	// Reads every 20ms keep a 100ms idle timeout from firing for 300ms;
	// then the upstream goes silent and the read fails within ~100ms.
	srv := slowStream(20*time.Millisecond, 15)
	defer srv.Close()
	h := newTestHTTP(t, srv.URL, 100*time.Millisecond)
	resp, err := h.Do(context.Background(), &Request{Op: dialect.Generate, Dialect: dialect.Chat, Body: Body{[]byte(`{}`)}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	start := time.Now()
	n, err := io.Copy(io.Discard, resp.Body)
	var te *TimeoutError
	if !errors.As(err, &te) || te.Phase != "idle" || !IsTimeout(err) {
		t.Fatalf("read error = %v, want an idle TimeoutError", err)
	}
	if n != 15 {
		t.Errorf("read %d bytes before the timeout, want all 15", n)
	}
	if d := time.Since(start); d < 300*time.Millisecond || d > 3*time.Second {
		t.Errorf("timed out after %v, want about 400ms", d)
	}
}

func TestRequestHeadersAndHold(t *testing.T) {
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		io.Copy(io.Discard, r.Body)
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	h := newTestHTTP(t, srv.URL, time.Second)
	var held, released atomic.Int32
	resp, err := h.Do(context.Background(), &Request{
		Op: dialect.Generate, Dialect: dialect.Chat, Body: Body{[]byte(`{"a":`), []byte(`1}`)},
		Header: http.Header{"User-Agent": {"ua"}},
		Hold:   func() func() { held.Add(1); return func() { released.Add(1) } },
	})
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if got.Get("Authorization") != "Bearer k" || got.Get("Content-Type") != "application/json" || got.Get("User-Agent") != "ua" {
		t.Errorf("upstream headers %v", got)
	}
	h.CloseIdleConnections()
	deadline := time.Now().Add(2 * time.Second)
	for released.Load() != held.Load() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if held.Load() == 0 || released.Load() != held.Load() {
		t.Errorf("held %d, released %d: every reader of the body must be released", held.Load(), released.Load())
	}
}

func TestBodyReader(t *testing.T) {
	b := Body{[]byte("ab"), []byte(""), []byte("cde")}
	for i := 0; i < 2; i++ { // a Body can be read again (GetBody)
		got, _ := io.ReadAll(b.Reader())
		if string(got) != "abcde" {
			t.Fatalf("read %q", got)
		}
	}
	if b.Len() != 5 || string(b.Bytes()) != "abcde" {
		t.Errorf("Len %d Bytes %q", b.Len(), b.Bytes())
	}
}
