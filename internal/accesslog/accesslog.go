// Package accesslog writes the one line each request ends with. Lines are
// appended to a buffer and written out in batches (at least every flush
// interval, and at Close), so the request path pays no system call per
// line. A crash can lose at most one interval of lines; the usage ledger,
// not this log, is the durable record.
package accesslog

import (
	"bufio"
	"io"
	"sync"
	"time"
)

// Writer is a buffered, periodically flushed line writer. It is safe for
// concurrent use.
type Writer struct {
	mu   sync.Mutex
	bw   *bufio.Writer
	stop chan struct{}
	done chan struct{}
}

// FlushInterval is the longest a line waits in the buffer.
const FlushInterval = 100 * time.Millisecond

// New returns a Writer on w, flushing every FlushInterval until Close.
func New(w io.Writer) *Writer {
	lw := &Writer{bw: bufio.NewWriterSize(w, 64<<10), stop: make(chan struct{}), done: make(chan struct{})}
	go lw.loop()
	return lw
}

// Write appends one or more complete lines.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.bw.Write(p)
}

// Flush writes out what is buffered.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.bw.Flush()
}

// Close stops the flusher and writes out what is left.
func (w *Writer) Close() error {
	close(w.stop)
	<-w.done
	return w.Flush()
}

func (w *Writer) loop() {
	defer close(w.done)
	t := time.NewTicker(FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			w.Flush()
		case <-w.stop:
			return
		}
	}
}
