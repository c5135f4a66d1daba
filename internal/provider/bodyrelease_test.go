package provider

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/dialect"
)

// An answer keeps its request (resp.Request) for as long as it is read,
// and a stream is read for minutes: the request's body must not come with
// it. Once Do returns, the body's bytes are collectable while the answer
// is still open, through either client, and GetBody opens it no more.
func TestOpenAnswerLetsGoOfRequestBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte("data: {}\n\n"))
		w.(http.Flusher).Flush()
		<-r.Context().Done() // held open until the test closes the answer
	}))
	defer srv.Close()
	for _, client := range []string{config.HTTPClientLean, config.HTTPClientStd} {
		t.Run(client, func(t *testing.T) {
			p, err := New(config.Provider{Name: "p", Type: "openai", BaseURL: srv.URL, APIKey: "k", HTTPClient: client,
				Timeouts: config.Timeouts{Connect: time.Second, FirstByte: 5 * time.Second, Idle: 5 * time.Second}})
			if err != nil {
				t.Fatal(err)
			}
			body := make([]byte, 100<<10)
			copy(body, `{"model":"m","stream":true,"x":"`)
			for i := 32; i < len(body)-2; i++ {
				body[i] = 'a'
			}
			copy(body[len(body)-2:], `"}`)
			bodyGone := weak.Make(&body[0])
			resp, err := p.Do(context.Background(), &Request{Op: dialect.Generate, Dialect: dialect.Chat, Stream: true,
				Body: Body{body[:10], body[10:]}})
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			buf := make([]byte, 64)
			if _, err := resp.Body.Read(buf); err != nil {
				t.Fatal(err)
			}
			body = nil
			for range 3 {
				runtime.GC()
			}
			if bodyGone.Value() != nil {
				t.Error("the request body is still reachable while its answer is open")
			}
			if gb := resp.Request.GetBody; gb != nil {
				if _, err := gb(); err == nil {
					t.Error("GetBody still opens the body after the exchange")
				}
			}
			runtime.KeepAlive(resp)
		})
	}
}
