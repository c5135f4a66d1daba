package h1client

import (
	"errors"
	"fmt"
	"io"
	"net/http"
)

// Bytes is a request body whose bytes RoundTrip can write in the same writev
// as the request head. Bytes returns the bytes not yet read.
type Bytes interface {
	io.ReadCloser
	Bytes() []byte
}

// Parts is a request body made of several slices back to back (a body
// spliced from pieces), written with the head in one writev, none copied.
// Parts returns the slices not yet read.
type Parts interface {
	io.ReadCloser
	Parts() [][]byte
}

// NewBody returns a request body over b that implements Bytes (and Len). It
// can be used as http.Request.Body and as what GetBody returns. Set
// ContentLength to len(b) too, so that other RoundTrippers (Fallback) frame it
// with Content-Length rather than chunked. Close does not release b: a
// request whose Body came from NewBody can be replayed on retry without
// GetBody.
func NewBody(b []byte) io.ReadCloser { return &bytesBody{b: b} }

type bytesBody struct {
	b   []byte
	off int
}

func (r *bytesBody) Read(p []byte) (int, error) {
	if r.off >= len(r.b) {
		return 0, io.EOF
	}
	n := copy(p, r.b[r.off:])
	r.off += n
	return n, nil
}

// Close lets go of the bytes: a response keeps its request, and with it
// this body, for as long as it is read.
func (r *bytesBody) Close() error  { r.b, r.off = nil, 0; return nil }
func (r *bytesBody) Bytes() []byte { return r.b[r.off:] }
func (r *bytesBody) Len() int      { return len(r.b) - r.off }

// outBody is the request body of one RoundTrip, across a possible retry.
type outBody struct {
	rc      io.ReadCloser // nil: no body
	parts   [][]byte      // rc's bytes when it implements Bytes or Parts and is framed by length
	isBytes bool
	ours    bool // rc came from NewBody: its bytes outlive Close

	chunked bool  // Transfer-Encoding: chunked
	length  int64 // with !chunked
	sendCL  bool  // write a Content-Length header

	probe    [1]byte // first byte read to tell an empty body from an unknown one
	hasProbe bool
	consumed bool // rc has been read from (beyond the probe)
	closed   bool
}

// prepareBody decides the framing of the request body, as net/http does:
// ContentLength > 0 is exact, -1 is chunked, and 0 with a non-nil Body means
// unknown (one byte is read to tell whether there is any body at all).
func prepareBody(req *http.Request, method string) (outBody, error) {
	var ob outBody
	rc := req.Body
	if rc == http.NoBody {
		rc = nil
	}
	noBodyCL := method != http.MethodGet && method != http.MethodHead // servers expect "Content-Length: 0" on these
	if rc == nil {
		if req.ContentLength != 0 {
			return ob, fmt.Errorf("h1client: Request.ContentLength=%d with nil Body", req.ContentLength)
		}
		ob.sendCL = noBodyCL
		return ob, nil
	}
	ob.rc = rc
	if parts, ok := bodyParts(rc); ok {
		n := partsLen(parts)
		if req.ContentLength > 0 && req.ContentLength != n {
			return ob, fmt.Errorf("h1client: Request.ContentLength=%d with Body length %d", req.ContentLength, n)
		}
		_, ob.ours = rc.(*bytesBody)
		ob.parts, ob.isBytes, ob.length = parts, true, n
		ob.sendCL = n > 0 || noBodyCL
		return ob, nil
	}
	switch {
	case req.ContentLength > 0:
		ob.length, ob.sendCL = req.ContentLength, true
	case req.ContentLength < 0:
		ob.chunked = true
	default:
		var n int
		var err error
		// A local, not ob.probe: passing ob's array to Read would move ob
		// to the heap on every request.
		var probe [1]byte
		for i := 0; i < 10 && n == 0 && err == nil; i++ { // an io.Reader may return 0, nil

			n, err = rc.Read(probe[:])
		}
		ob.probe = probe
		switch {
		case n == 1:
			ob.hasProbe, ob.chunked = true, true
		case err == nil:
			ob.chunked = true
		case err == io.EOF: // empty after all: frame as no body
			rc.Close()
			ob.rc = nil
			ob.sendCL = noBodyCL
		default:
			return ob, fmt.Errorf("h1client: reading request body: %w", err)
		}
	}
	return ob, nil
}

// close closes the body once.
func (ob *outBody) close() {
	if ob.rc != nil && !ob.closed {
		ob.closed = true
		ob.rc.Close()
	}
}

// rewindable reports whether the body can be sent again.
func (ob *outBody) rewindable(req *http.Request) bool {
	return ob.rc == nil || ob.ours || (!ob.consumed && !ob.closed) || req.GetBody != nil
}

var errNoGetBody = errors.New("h1client: request body cannot be sent again (no GetBody)")

// rewind makes the body ready to be sent again, from GetBody when the one in
// hand has been read from or closed.
func (ob *outBody) rewind(req *http.Request) error {
	if ob.rc == nil || ob.ours || (!ob.consumed && !ob.closed) {
		return nil
	}
	if req.GetBody == nil {
		return errNoGetBody
	}
	nb, err := req.GetBody()
	if err != nil {
		return fmt.Errorf("h1client: GetBody: %w", err)
	}
	ob.close()
	*ob = outBody{rc: nb, chunked: ob.chunked, length: ob.length, sendCL: ob.sendCL}
	if nb == nil || nb == http.NoBody {
		ob.rc = nil
		if ob.chunked || ob.length > 0 {
			return errors.New("h1client: GetBody returned no body")
		}
		return nil
	}
	if parts, ok := bodyParts(nb); ok && !ob.chunked && partsLen(parts) == ob.length {
		_, ob.ours = nb.(*bytesBody)
		ob.parts, ob.isBytes = parts, true
	}
	return nil
}

// bodyParts returns the unread bytes of a Bytes or Parts body.
func bodyParts(rc io.ReadCloser) ([][]byte, bool) {
	switch b := rc.(type) {
	case Parts:
		return b.Parts(), true
	case Bytes:
		return [][]byte{b.Bytes()}, true
	}
	return nil, false
}

func partsLen(parts [][]byte) int64 {
	var n int64
	for _, p := range parts {
		n += int64(len(p))
	}
	return n
}
