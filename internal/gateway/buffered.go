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
	peak  atomic.Int64 // the most used has been
}

// DefaultMaxBufferedBytes is the budget when Options leave it unset:
// sixteen bodies of the largest size, and at least 64 MiB.
func DefaultMaxBufferedBytes(maxBody int64) int64 { return max(16*maxBody, 64<<20) }

var errBuffersFull = &Error{Status: http.StatusServiceUnavailable, Kind: dialect.Unavailable,
	Header:  http.Header{"Retry-After": {"1"}},
	Message: "the gateway is holding as many request bodies as it may at once; try again shortly"}

// take reserves n bytes for x's body, released when x ends.
func (b *bufferBudget) take(x *exchange, n int64) bool {
	used := b.used.Add(n)
	if used > b.limit {
		b.used.Add(-n)
		return false
	}
	for p := b.peak.Load(); used > p && !b.peak.CompareAndSwap(p, used); p = b.peak.Load() {
	}
	x.buffered += n
	return true
}

// give returns n of the bytes x holds, before x ends.
func (b *bufferBudget) give(x *exchange, n int64) {
	b.used.Add(-n)
	x.buffered -= n
}

// release frees what x holds.
func (b *bufferBudget) release(x *exchange) {
	if x.buffered > 0 {
		b.used.Add(-x.buffered)
		x.buffered = 0
	}
}

// readAll reads a body of unknown length (chunked) of at most max bytes
// from r, which must be an http.MaxBytesReader of max. The buffer is
// reserved as it grows, for what is really allocated: a grown buffer is
// counted before the bytes are copied into it, and the one it replaces
// goes back to its pool and its part of the budget, so that what the
// budget counts is what the body holds.
func (b *bufferBudget) readAll(x *exchange, r io.Reader, max int64) (*bodyBuf, error) {
	const first = 16 << 10
	if !b.take(x, int64(bodyBufCap(first))) {
		return nil, errBuffersFull
	}
	bb := newBodyBuf(first)
	n := 0
	for {
		if n == len(bb.b) {
			if int64(n) >= max {
				// Full: one more byte would show the body is too large.
				var one [1]byte
				k, err := io.ReadFull(r, one[:])
				switch {
				case err == io.EOF:
					bb.b = bb.b[:n]
					return bb, nil
				case k > 0:
					err = &http.MaxBytesError{Limit: max}
				}
				return bb, err
			}
			size := int(min(2*int64(n), max))
			if !b.take(x, int64(bodyBufCap(size))) {
				return bb, errBuffersFull
			}
			nb := newBodyBuf(size)
			copy(nb.b, bb.b[:n])
			b.give(x, int64(cap(bb.b)))
			bb.release()
			bb = nb
		}
		k, err := r.Read(bb.b[n:])
		n += k
		if err == io.EOF {
			bb.b = bb.b[:n]
			return bb, nil
		}
		if err != nil {
			return bb, err
		}
	}
}
