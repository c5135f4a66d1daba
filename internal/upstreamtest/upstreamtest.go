// Package upstreamtest is a scriptable fake LLM upstream for tests: an
// httptest.Server that answers each request with a Reply and records what
// it received. It is real HTTP on loopback, not a mock.
package upstreamtest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"
)

// Reply is one scripted answer.
type Reply struct {
	Status int         // default 200
	Header http.Header // Content-Type defaults to text/event-stream when Events is set, else application/json
	Body   []byte      // a whole body, written at once
	Events [][]byte    // SSE events, each written and flushed on its own
	// Gap is a pause before each event.
	Gap time.Duration
	// Cut ends the connection abruptly after the events (no clean end of
	// body), like a network failure.
	Cut bool
	// Hang keeps the connection open without writing after the events,
	// until the client goes away.
	Hang bool

	// Bedrock only (NewBedrock): CorruptFrame spoils the CRC of that
	// event's frame (1-based; 0 none); Exception ends the stream with an
	// exception frame.
	CorruptFrame int
	Exception    *BedrockException
}

// Received is a request as the upstream saw it.
type Received struct {
	Method  string
	Path    string
	RawPath string // the path as sent, escaped
	Query   string // the raw query
	Header  http.Header
	Body    []byte
	Proto   string // HTTP/1.1 or HTTP/2.0
}

// Server is a fake upstream. Its zero value is not usable; call New.
type Server struct {
	*httptest.Server

	mu       sync.Mutex
	reply    func(r Received) Reply
	received []Received
	gone     chan struct{} // receives when a Hang reply sees its client leave
}

// New starts a fake upstream that answers every request with reply(r).
func New(reply func(r Received) Reply) *Server {
	s := &Server{reply: reply, gone: make(chan struct{}, 64)}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// NewTLS is New over HTTPS, serving HTTP/2 to clients that offer it (as
// the providers' APIs do); its Certificate is what a client must trust.
func NewTLS(reply func(r Received) Reply) *Server {
	s := &Server{reply: reply, gone: make(chan struct{}, 64)}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.EnableHTTP2 = true
	s.StartTLS()
	return s
}

// Static starts a fake upstream that always answers rep.
func Static(rep Reply) *Server { return New(func(Received) Reply { return rep }) }

// Requests returns what the upstream received so far.
func (s *Server) Requests() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.received...)
}

// Last returns the last request received; it fails if there was none.
func (s *Server) Last() Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.received) == 0 {
		panic("upstreamtest: no request received")
	}
	return s.received[len(s.received)-1]
}

// ClientGone is signalled each time a hanging reply sees its client leave.
func (s *Server) ClientGone() <-chan struct{} { return s.gone }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec := Received{Method: r.Method, Path: r.URL.Path, RawPath: r.URL.EscapedPath(), Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body, Proto: r.Proto}
	s.mu.Lock()
	s.received = append(s.received, rec)
	s.mu.Unlock()

	rep := s.reply(rec)
	for k, v := range rep.Header {
		w.Header()[k] = v
	}
	if w.Header().Get("Content-Type") == "" {
		if rep.Events != nil {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
	}
	status := rep.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	w.Write(rep.Body)
	rc := http.NewResponseController(w)
	rc.Flush()
	for _, ev := range rep.Events {
		if !s.wait(r, rep) {
			return
		}
		if _, err := w.Write(ev); err != nil {
			return
		}
		rc.Flush()
	}
	s.end(r, rep)
}

// wait pauses for the reply's gap before an event; false when the client
// left meanwhile.
func (s *Server) wait(r *http.Request, rep Reply) bool {
	if rep.Gap <= 0 {
		return true
	}
	select {
	case <-time.After(rep.Gap):
		return true
	case <-r.Context().Done():
		s.gone <- struct{}{}
		return false
	}
}

// end ends a reply after its events: hanging until the client leaves, or
// cutting the connection.
func (s *Server) end(r *http.Request, rep Reply) {
	switch {
	case rep.Hang:
		<-r.Context().Done()
		s.gone <- struct{}{}
	case rep.Cut:
		panic(http.ErrAbortHandler)
	}
}
