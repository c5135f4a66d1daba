package h1client

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
)

// How a response body is delimited.
const (
	kindNone    uint8 = iota // HEAD, 204, 304, Content-Length: 0
	kindCL                   // exactly Content-Length bytes
	kindChunked              // chunked coding, then trailers
	kindEOF                  // until the server closes
)

// Body states. The exchange ends exactly once: at EOF or a read error
// (stateDone) or at Close before either (stateClosed).
const (
	stateOpen int32 = iota
	stateDone
	stateClosed
)

var errBodyClosed = errors.New("h1client: read on closed response body")

// body is a response body and the response it belongs to, in one allocation.
// It returns its connection to the pool the moment the body's end is read.
type body struct {
	resp http.Response
	te   [1]string // backs resp.TransferEncoding for plain chunked

	br     *bufio.Reader
	kind   uint8
	reuse  bool  // framing and Connection allow another exchange on the conn
	remain int64 // kindCL: bytes left
	cr     io.Reader

	c    *conn // nil when parsing without a connection
	ctx  context.Context
	stop func() bool // stops the context's AfterFunc; nil if none

	state atomic.Int32
	mu    sync.Mutex // serialises Read; Close does not take it
	err   error      // sticky Read result, under mu
}

// Read reads the body. After the body's end it returns io.EOF; an early end
// from the server is io.ErrUnexpectedEOF (Content-Length and chunked bodies);
// a cancelled request context gives an error wrapping the context's error.
func (b *body) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return 0, b.err
	}
	if b.state.Load() == stateClosed {
		return 0, errBodyClosed
	}
	if len(p) == 0 {
		return 0, nil // asks for nothing: nothing to wait for
	}
	if b.c != nil && (b.kind == kindChunked || b.kind == kindEOF) {
		b.c.waitReadable() // a stream's next event may be minutes away
	}
	n, err := b.read(p)
	if err == nil {
		return n, nil
	}
	if err == io.EOF {
		b.err = io.EOF
		b.finish(true)
		return n, io.EOF
	}
	switch {
	case b.state.Load() == stateClosed:
		err = errBodyClosed
	case b.ctx != nil && b.ctx.Err() != nil:
		err = fmt.Errorf("h1client: reading response body: %w", b.ctx.Err())
	}
	b.err = err
	b.finish(false)
	return n, err
}

func (b *body) read(p []byte) (int, error) {
	switch b.kind {
	case kindCL:
		if b.remain <= 0 {
			return 0, io.EOF
		}
		if int64(len(p)) > b.remain {
			p = p[:b.remain]
		}
		n, err := b.br.Read(p)
		b.remain -= int64(n)
		if b.remain == 0 {
			return n, io.EOF // report the end with the last bytes: the conn is free now
		}
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return n, err
	case kindChunked:
		n, err := b.cr.Read(p)
		if err == io.EOF {
			if terr := discardTrailers(b.br); terr != nil {
				return n, terr
			}
		}
		return n, err
	case kindEOF:
		return b.br.Read(p)
	}
	return 0, io.EOF
}

// Close ends the exchange. Before the body's end it closes the connection
// rather than draining it; it may be called while a Read is blocked in
// another goroutine, which then returns an error. After the end it does
// nothing.
func (b *body) Close() error {
	if b.state.CompareAndSwap(stateOpen, stateClosed) {
		b.release(false)
	}
	return nil
}

// finish ends the exchange from Read, unless Close got there first.
func (b *body) finish(atEOF bool) {
	if b.state.CompareAndSwap(stateOpen, stateDone) {
		b.release(atEOF)
	}
}

// release stops the context hook and pools or closes the connection. The
// connection is pooled only after a clean end of a reusable response with
// no byte beyond it, and only if the context hook never ran (it may have
// moved the deadline).
func (b *body) release(atEOF bool) {
	stopped := b.stop == nil || b.stop()
	if b.c == nil {
		return
	}
	if atEOF && b.reuse && stopped && b.br.Buffered() == 0 {
		b.c.p.put(b.c)
	} else {
		b.c.close()
	}
}
