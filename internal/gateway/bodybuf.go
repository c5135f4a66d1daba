package gateway

import (
	"math/bits"
	"sync"
	"sync/atomic"
)

// Request bodies are read whole (they must be validated before anything is
// sent), so a 100 KB request would otherwise allocate, zero and later
// collect 100 KB. Buffers come from pools by power-of-two size class.
const (
	minBodyClass = 10 // 1 KiB: a small request held for a long stream holds little
	maxBodyClass = 22 // 4 MiB; larger bodies are allocated and left to the GC
)

var bodyPools [maxBodyClass + 1]sync.Pool

// bodyBuf is a pooled request body. The upstream transport may still be
// reading it after the handler returns (it closes the request body from its
// own goroutine), so it goes back to its pool only when the handler and
// every reader have released it.
type bodyBuf struct {
	b     []byte
	class int // 0 when not pooled
	refs  atomic.Int32
}

// bodyBufCap is the capacity newBodyBuf(n) allocates: n rounded up to
// its size class, or n itself when it is not pooled. The buffer budget
// counts it, not n.
func bodyBufCap(n int) int {
	if class := bodyClass(n); class != 0 {
		return 1 << class
	}
	return n
}

// bodyClass is the pool size class of a buffer of n bytes, 0 for none.
func bodyClass(n int) int {
	class := max(minBodyClass, bits.Len(uint(n-1)))
	if n == 0 || class > maxBodyClass {
		return 0
	}
	return class
}

// newBodyBuf returns a buffer of length n held once by the caller.
func newBodyBuf(n int) *bodyBuf {
	class := bodyClass(n)
	if class == 0 {
		bb := &bodyBuf{b: make([]byte, n)}
		bb.refs.Store(1)
		return bb
	}
	bb, _ := bodyPools[class].Get().(*bodyBuf)
	if bb == nil {
		bb = &bodyBuf{b: make([]byte, 1<<class), class: class}
	}
	bb.b = bb.b[:n]
	bb.refs.Store(1)
	return bb
}

// hold takes a reference for a reader; the returned func releases it.
func (bb *bodyBuf) hold() func() {
	bb.refs.Add(1)
	var once sync.Once
	return func() { once.Do(bb.release) }
}

// release drops a reference; the last one returns the buffer to its pool.
func (bb *bodyBuf) release() {
	if bb.refs.Add(-1) == 0 && bb.class != 0 {
		bb.b = bb.b[:cap(bb.b)]
		if poisonReleased {
			for i := range bb.b {
				bb.b[i] = 0xFF // not JSON, not UTF-8: a late reader cannot pass unnoticed
			}
		}
		bodyPools[bb.class].Put(bb)
	}
}

// poisonReleased makes release overwrite a buffer before pooling it. The
// package's tests set it, so that anything still reading a request body
// after it was given back (early, by a stream) fails them.
var poisonReleased = false
