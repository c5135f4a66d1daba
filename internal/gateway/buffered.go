package gateway

import (
	"io"
	"net/http"
	"sync/atomic"

	"github.com/tollgate/tollgate/internal/dialect"
)

// Request bodies are read whole before anything is sent, each at most
// maxBody bytes. That bounds one request, not many: twenty 31 MiB bodies
// at once once held 2 GiB. bufferBudget bounds the bytes held by all
// bodies being read or served at once; a body that does not fit is
// refused with 503 and retry-after, before it is read.
type bufferBudget struct {
	limit int64
	used  atomic.Int64
}

// DefaultMaxBufferedBytes is the budget when Options leave it unset:
// sixteen bodies of the largest size, and at least 64 MiB.
func DefaultMaxBufferedBytes(maxBody int64) int64 { return max(16*maxBody, 64<<20) }

var errBuffersFull = &Error{Status: http.StatusServiceUnavailable, Kind: dialect.Unavailable,
	Header:  http.Header{"Retry-After": {"1"}},
	Message: "the gateway is holding as many request bodies as it may at once; try again shortly"}

// take reserves n bytes for x's body, released when x ends.
func (b *bufferBudget) take(x *exchange, n int64) bool {
	if b.used.Add(n) > b.limit {
		b.used.Add(-n)
		return false
	}
	x.buffered += n
	return true
}

// release frees what x holds.
func (b *bufferBudget) release(x *exchange) {
	if x.buffered > 0 {
		b.used.Add(-x.buffered)
		x.buffered = 0
	}
}

// readAll reads a body of unknown length (chunked) of at most max bytes,
// reserving its buffer as it grows.
func (b *bufferBudget) readAll(x *exchange, r io.Reader, max int64) ([]byte, error) {
	const first = 16 << 10
	if !b.take(x, first) {
		return nil, errBuffersFull
	}
	buf := make([]byte, 0, first)
	for {
		if len(buf) == cap(buf) {
			// Double, but past max only by the byte that shows the body
			// is too large.
			grow := min(int64(cap(buf)), max+1-int64(cap(buf)))
			if grow <= 0 {
				grow = 1
			}
			if !b.take(x, grow) {
				return nil, errBuffersFull
			}
			buf = append(buf[:cap(buf)], make([]byte, grow)...)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}
