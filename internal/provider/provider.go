// Package provider sends requests to upstream LLM APIs. A Provider is small:
// it names the dialect it speaks and performs one exchange; translation,
// routing and metering belong elsewhere. Each provider type (the
// providers[].type setting) is registered in registry.go.
//
// A transport may differ from its dialect: a provider hands the gateway the
// dialect's bytes (an SSE stream in the dialect's events, its JSON and
// error bodies), whatever its upstream's URL scheme, signature or framing.
package provider

import (
	"context"
	"io"
	"log/slog"
	"net/http"

	"github.com/tollgate/tollgate/internal/affinity"
	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/embeddings"
)

// Provider is one configured upstream.
type Provider interface {
	// Name is the provider's configured name.
	Name() string
	// Dialect is the wire protocol the provider speaks: requests in it take
	// the pass-through lane, others are translated into it.
	Dialect() *dialect.Dialect
	// Do performs one exchange. The response body must be closed. Reading it
	// may fail with ErrIdleTimeout when the upstream goes silent. Cancelling
	// ctx aborts the exchange.
	Do(ctx context.Context, req *Request) (*http.Response, error)
}

// Polyglot is a Provider that speaks other dialects natively too (the
// built-in echo).
type Polyglot interface {
	Speaks(d *dialect.Dialect) bool
}

// Speaks reports whether p takes requests in d as they are, so that the
// pass-through lane can be used.
func Speaks(p Provider, d *dialect.Dialect) bool {
	if pg, ok := p.(Polyglot); ok {
		return pg.Speaks(d)
	}
	return p.Dialect() == d
}

// Server is a Provider that serves only some operations (an HTTP API
// without an embeddings endpoint).
type Server interface {
	Serves(op dialect.Op) bool
}

// Serves reports whether p serves operation op. A provider that does not
// say serves every operation.
func Serves(p Provider, op dialect.Op) bool {
	if s, ok := p.(Server); ok {
		return s.Serves(op)
	}
	return true
}

// Embedder is a Provider whose upstream takes embeddings requests in a
// shape of its own (Gemini's batchEmbedContents, Vertex AI's predict,
// Bedrock's Titan and Cohere bodies), which the gateway makes.
type Embedder interface {
	// EmbedWire is the shape for model; nil when the model makes none.
	EmbedWire(model string) *embeddings.Wire
}

// EmbedWire is p's shape of embeddings requests for model: nil for a
// provider that takes OpenAI's own (or none).
func EmbedWire(p Provider, model string) *embeddings.Wire {
	if e, ok := p.(Embedder); ok {
		return e.EmbedWire(model)
	}
	return nil
}

// Request is one upstream request, already in the provider's dialect.
type Request struct {
	Op      dialect.Op
	Dialect *dialect.Dialect
	// Model is the upstream model id (already spliced into Body).
	Model string
	// Body is sent as it is.
	Body Body
	// Upload, when set, is sent instead of Body: a stream that can be read
	// once (a multipart form passed through as the client sends it), of
	// UploadLength bytes (-1: unknown, sent chunked) and content type
	// UploadType. A request with an Upload cannot be sent again.
	Upload       io.Reader
	UploadLength int64
	UploadType   string
	// Header holds the client headers allowed through; the provider adds
	// its own credential and content type.
	Header http.Header
	// Stream is whether the client asked for a stream.
	Stream bool
	// Affinity is the request's conversation, which a provider with a
	// pool of keys keeps on one key (that key's prompt cache holds it);
	// 0 takes the keys in turn.
	Affinity affinity.Key
	// Hold, if set, is called for every reader of Body the provider makes;
	// the func it returns is called once that reader is closed, which may
	// be after Do returns. It lets the caller recycle the memory of Body.
	Hold func() (release func())
	// Log, if set, receives what the client is not told: an upstream's
	// error text before it was scrubbed, a refused credential's details,
	// the AWS SDK's warnings; each line with ID, the gateway's request id.
	Log *slog.Logger
	ID  string
}

// newReader returns a reader over r.Body that honours Hold.
func (r *Request) newReader() io.ReadCloser {
	rd := r.Body.Reader()
	if r.Hold == nil {
		return rd
	}
	return &heldReader{bodyReader: rd.(*bodyReader), release: r.Hold()}
}

// heldReader releases its hold on the body when closed.
type heldReader struct {
	*bodyReader
	release func()
}

func (h *heldReader) Close() error { h.bodyReader.Close(); h.release(); return nil }

// Body is a request body sent as its parts back to back, so the gateway can
// splice a rewritten model name into the client's bytes without copying the
// rest of them.
type Body [][]byte

// Len is the total length in bytes.
func (b Body) Len() int64 {
	var n int64
	for _, p := range b {
		n += int64(len(p))
	}
	return n
}

// Bytes returns the body as one slice (copying only when it has several parts).
func (b Body) Bytes() []byte {
	if len(b) == 1 {
		return b[0]
	}
	out := make([]byte, 0, b.Len())
	for _, p := range b {
		out = append(out, p...)
	}
	return out
}

// Reader returns a new reader over the body.
func (b Body) Reader() io.ReadCloser { return &bodyReader{parts: b} }

// bodyReader reads a Body without modifying it, so GetBody can start over.
type bodyReader struct {
	parts [][]byte
	i     int // current part
	off   int // offset in the current part
}

func (r *bodyReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && r.i < len(r.parts) {
		c := copy(p[n:], r.parts[r.i][r.off:])
		n += c
		if r.off += c; r.off == len(r.parts[r.i]) {
			r.i, r.off = r.i+1, 0
		}
	}
	if n == 0 && r.i >= len(r.parts) {
		return 0, io.EOF
	}
	return n, nil
}

// WriteTo writes the remaining parts straight to w, skipping an
// intermediate copy.
func (r *bodyReader) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for ; r.i < len(r.parts); r.i, r.off = r.i+1, 0 {
		n, err := w.Write(r.parts[r.i][r.off:])
		total += int64(n)
		if err != nil {
			r.off += n
			return total, err
		}
	}
	return total, nil
}

// Parts returns the unread bytes as they lie, for a client that writes
// them with the request's head in one writev.
func (r *bodyReader) Parts() [][]byte {
	if r.i >= len(r.parts) {
		return nil
	}
	if r.off == 0 {
		return r.parts[r.i:]
	}
	return append([][]byte{r.parts[r.i][r.off:]}, r.parts[r.i+1:]...)
}

// Close makes the reader read nothing and keep nothing: a response keeps
// its request (resp.Request), and with it this reader, for as long as the
// answer streams.
func (r *bodyReader) Close() error {
	r.parts, r.i, r.off = nil, 0, 0
	return nil
}
