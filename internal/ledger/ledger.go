// Package ledger records one usage record per request, off the request
// path and without losing any. Records wait in a bounded memory buffer and
// are written in batches by one goroutine. While the database is
// unreachable the gateway keeps serving: the writer retries with backoff,
// and once the buffer is full new records are appended to a local spill
// file, replayed automatically when the database is back. Writes are
// idempotent by request id, so a replay never duplicates.
package ledger

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/tollgate/tollgate/internal/store"
)

// Sink stores records; it must be idempotent by record id.
type Sink interface {
	InsertRequests(ctx context.Context, recs []store.Request) error
}

// Options tune a Recorder; zero values take the defaults.
type Options struct {
	BatchSize     int           // records per write (default 2000)
	FlushInterval time.Duration // longest a record waits in memory (default 500ms)
	BufferSize    int           // records held in memory before spilling (default 50,000)
	SpillPath     string        // the spill file (default "tollgate-ledger.spill")
	Logger        *slog.Logger
}

// Recorder is safe for concurrent use.
type Recorder struct {
	sink Sink
	o    Options
	log  *slog.Logger

	mu      sync.Mutex
	buf     []store.Request // waiting to be written
	closing bool

	// writeMu makes one flush at a time (the writer goroutine, or Close).
	writeMu sync.Mutex

	// spillMu guards the spill file; it is never held while the database
	// is written, so Record never waits on the database.
	spillMu  sync.Mutex
	spill    *os.File
	spilled  int  // records in spill files, as far as this run knows
	hasSpill bool // a spill or replay file may hold records

	wake chan struct{}
	done chan struct{}
}

// New starts a Recorder writing to sink. Records left in the spill file by
// an earlier run are replayed first.
func New(sink Sink, o Options) (*Recorder, error) {
	if o.BatchSize <= 0 {
		o.BatchSize = 2000
	}
	if o.FlushInterval <= 0 {
		o.FlushInterval = 500 * time.Millisecond
	}
	if o.BufferSize <= 0 {
		o.BufferSize = 50_000
	}
	if o.SpillPath == "" {
		o.SpillPath = "tollgate-ledger.spill"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	r := &Recorder{sink: sink, o: o, log: o.Logger, wake: make(chan struct{}, 1), done: make(chan struct{})}
	for _, p := range []string{o.SpillPath, o.SpillPath + replaySuffix} {
		if fi, err := os.Stat(p); err == nil && fi.Size() > 0 {
			r.hasSpill = true // left by an earlier run: replay it
		}
	}
	go r.run()
	return r, nil
}

// Record queues one record. It never blocks on the database.
func (r *Recorder) Record(rec store.Request) {
	r.mu.Lock()
	if len(r.buf) >= r.o.BufferSize {
		r.mu.Unlock()
		if err := r.spillRecords([]store.Request{rec}); err != nil {
			// Nowhere left to put it: keep it in memory rather than lose it.
			r.log.Error("ledger: spilling a record failed; keeping it in memory", "error", err)
			r.mu.Lock()
			r.buf = append(r.buf, rec)
			r.mu.Unlock()
		}
		return
	}
	r.buf = append(r.buf, rec)
	full := len(r.buf) >= r.o.BatchSize
	r.mu.Unlock()
	if full {
		select {
		case r.wake <- struct{}{}:
		default:
		}
	}
}

// Pending reports the records in memory and those spilled to disk by this
// run and not yet written back.
func (r *Recorder) Pending() (memory, spilled int) {
	r.mu.Lock()
	memory = len(r.buf)
	r.mu.Unlock()
	r.spillMu.Lock()
	defer r.spillMu.Unlock()
	return memory, r.spilled
}

// Close writes everything out, retrying until ctx ends; what still cannot
// be written is left in the spill file for the next start.
func (r *Recorder) Close(ctx context.Context) error {
	r.mu.Lock()
	r.closing = true
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
	close(r.done)
	err := r.drain(ctx)
	r.mu.Lock()
	left := r.buf
	r.buf = nil
	r.mu.Unlock()
	if len(left) > 0 {
		if serr := r.spillRecords(left); serr != nil {
			return errors.Join(err, fmt.Errorf("ledger: %d records could not be written or spilled: %w", len(left), serr))
		}
	}
	r.spillMu.Lock()
	defer r.spillMu.Unlock()
	if r.spill != nil {
		syncErr := r.spill.Sync()
		r.spill.Close()
		r.spill = nil
		if syncErr != nil {
			return errors.Join(err, syncErr)
		}
	}
	if err != nil {
		return fmt.Errorf("%w; %d records kept in %s for the next start", err, r.spilled, r.o.SpillPath)
	}
	return nil
}

func (r *Recorder) run() {
	t := time.NewTicker(r.o.FlushInterval)
	defer t.Stop()
	backoff := time.Duration(0)
	for {
		select {
		case <-r.done:
			return
		case <-t.C:
		case <-r.wake:
		}
		if backoff > 0 {
			select {
			case <-r.done:
				return
			case <-time.After(backoff):
			}
		}
		if err := r.flushOnce(context.Background()); err != nil {
			if backoff == 0 {
				r.log.Warn("ledger: the database is unreachable; records are kept and retried", "error", err)
			}
			backoff = min(max(2*backoff, 100*time.Millisecond), 10*time.Second)
			continue
		}
		if backoff > 0 {
			r.log.Info("ledger: the database is reachable again")
		}
		backoff = 0
	}
}

// flushOnce writes the spill file back if there is one, then every batch
// in memory. It stops at the first failure, keeping what is not written.
func (r *Recorder) flushOnce(ctx context.Context) error {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	if err := r.replaySpill(ctx); err != nil {
		return err
	}
	for {
		r.mu.Lock()
		n := min(len(r.buf), r.o.BatchSize)
		batch := append([]store.Request(nil), r.buf[:n]...)
		r.mu.Unlock()
		if n == 0 {
			return nil
		}
		if err := r.sink.InsertRequests(ctx, batch); err != nil {
			return err
		}
		r.mu.Lock()
		r.buf = r.buf[n:]
		if len(r.buf) == 0 {
			r.buf = nil // let the backing array go after a burst
		}
		r.mu.Unlock()
	}
}

// drain flushes until everything is written or ctx ends.
func (r *Recorder) drain(ctx context.Context) error {
	backoff := 50 * time.Millisecond
	for {
		err := r.flushOnce(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("ledger: database still unreachable at shutdown: %w", err)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

// replaySuffix names the spill file while it is being written back.
const replaySuffix = ".replaying"

// spillRecords appends records to the spill file as JSON lines. The file
// is synced at Close; a process crash keeps what reached the kernel.
func (r *Recorder) spillRecords(recs []store.Request) error {
	r.spillMu.Lock()
	defer r.spillMu.Unlock()
	if r.spill == nil {
		f, err := os.OpenFile(r.o.SpillPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return err
		}
		r.spill = f
		r.log.Warn("ledger: memory buffer full; spilling records to disk", "path", r.o.SpillPath)
	}
	w := bufio.NewWriter(r.spill)
	enc := json.NewEncoder(w)
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	r.spilled += len(recs)
	r.hasSpill = true
	return nil
}

// replaySpill writes spilled records back to the sink. The spill file is
// first renamed aside, so new spills go to a fresh file while it is read
// without any lock held; a replay that fails is retried from that file.
// A partial replay is safe: writes are idempotent by id.
func (r *Recorder) replaySpill(ctx context.Context) error {
	r.spillMu.Lock()
	if !r.hasSpill {
		r.spillMu.Unlock()
		return nil
	}
	replay := r.o.SpillPath + replaySuffix
	if _, err := os.Stat(replay); errors.Is(err, os.ErrNotExist) {
		if r.spill != nil {
			r.spill.Close()
			r.spill = nil
		}
		if err := os.Rename(r.o.SpillPath, replay); err != nil && !errors.Is(err, os.ErrNotExist) {
			r.spillMu.Unlock()
			return err
		}
	}
	r.spillMu.Unlock()

	n, err := r.replayFile(ctx, replay)
	if err != nil {
		return err
	}
	r.spillMu.Lock()
	defer r.spillMu.Unlock()
	r.spilled = max(r.spilled-n, 0)
	if fi, err := os.Stat(r.o.SpillPath); err != nil || fi.Size() == 0 {
		r.hasSpill = false
	}
	if n > 0 {
		r.log.Info("ledger: spilled records written to the database", "records", n)
	}
	return nil
}

// replayFile writes one spill file to the sink and removes it.
func (r *Recorder) replayFile(ctx context.Context, path string) (int, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	dec := json.NewDecoder(bufio.NewReader(f))
	batch := make([]store.Request, 0, r.o.BatchSize)
	n := 0
	for {
		var rec store.Request
		err := dec.Decode(&rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			return n, fmt.Errorf("ledger: reading the spill file %s: %w", path, err)
		}
		batch = append(batch, rec)
		if len(batch) == r.o.BatchSize {
			if err := r.sink.InsertRequests(ctx, batch); err != nil {
				return n, err
			}
			n += len(batch)
			batch = batch[:0]
		}
	}
	if err := r.sink.InsertRequests(ctx, batch); err != nil {
		return n, err
	}
	n += len(batch)
	return n, os.Remove(path)
}
