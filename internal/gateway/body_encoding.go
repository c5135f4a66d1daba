package gateway

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"

	"github.com/tollgate/tollgate/internal/dialect"
)

// gzipCoded reports whether r's body is gzip data (some HTTP clients
// compress what they send). Other content codings are refused with 415.
func gzipCoded(r *http.Request) (bool, error) {
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
		return false, nil
	case "gzip", "x-gzip":
		return true, nil
	default:
		return false, &Error{Status: http.StatusUnsupportedMediaType, Kind: dialect.InvalidRequest,
			Message: "content-encoding " + dialect.Clip(enc) + " is not supported; send the body uncompressed or as gzip"}
	}
}

// gunzip decompresses x's body, z (held in x.body), into a buffer of
// its own, which replaces it. A few kilobytes of gzip can unpack to
// gigabytes, so the data is first decompressed without being kept, to
// learn its size: past maxBody it is refused with 413 before a byte of it
// is held, and otherwise the buffer budget is taken for exactly that size
// (or the request refused as a plain body would be) before it is unpacked
// again into a buffer of that size. The decompressed bytes are never held
// without being counted, and no buffer is grown (and left to the garbage
// collector) on the way.
func (g *Gateway) gunzip(x *exchange, z []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil, &Error{Status: http.StatusBadRequest, Kind: dialect.InvalidRequest,
			Message: "request body: content-encoding is gzip but the body is not gzip data", Err: err}
	}
	corrupt := func(err error) error {
		return &Error{Status: http.StatusBadRequest, Kind: dialect.InvalidRequest, Message: "request body: the gzip data is corrupt or cut short", Err: err}
	}
	n, err := io.Copy(io.Discard, io.LimitReader(zr, g.maxBody+1))
	switch {
	case err != nil:
		return nil, corrupt(err)
	case n > g.maxBody:
		return nil, g.tooLarge()
	case n == 0:
		return nil, errEmptyBody
	}
	if !g.buffered.take(x, int64(bodyBufCap(int(n)))) {
		return nil, errBuffersFull
	}
	bb := newBodyBuf(int(n))
	if err := zr.Reset(bytes.NewReader(z)); err != nil {
		bb.release()
		return nil, corrupt(err)
	}
	if _, err := io.ReadFull(zr, bb.b); err != nil {
		bb.release()
		return nil, corrupt(err)
	}
	// The compressed body is not needed any more.
	g.buffered.give(x, int64(cap(x.body.b)))
	x.body.release()
	x.body = bb
	return bb.b, nil
}
