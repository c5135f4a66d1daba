// Package ledger records one usage record per request, off the request
// path and without losing any. Records wait in a bounded memory buffer and
// are written in batches by one goroutine. While the database is
// unreachable the gateway keeps serving: the writer retries with backoff,
// and once the buffer is full new records are appended to a local spill
// file, replayed automatically when the database is back. Writes are
// idempotent by request id, so a replay never duplicates.
//
// A record the database refuses (rather than a database that does not
// answer) is set aside: the batch holding it is split until the record is
// alone, the others are written, and the refused one is logged and
// counted (Rejected), never retried. With Options.Sync, Record returns
// only once its record is committed; callers that record at the same time
// share one transaction.
package ledger

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tollgate/tollgate/internal/clock"
	"github.com/tollgate/tollgate/internal/outcome"
	"github.com/tollgate/tollgate/internal/store"
)

// Sink stores records; it must be idempotent by record id. A write that
// fails because of the records themselves must fail with an error for
// which store.IsBadRecord is true; any other error is taken for a database
// that is away, and the write is retried.
type Sink interface {
	InsertRequests(ctx context.Context, recs []store.Request) error
}

// sanitizedSink is a Sink that can take records SanitizeRequest has
// cleaned already (store.Store): every record a Recorder holds is, so
// the Recorder writes through it and records are cleaned once.
type sanitizedSink interface {
	InsertSanitizedRequests(ctx context.Context, recs []store.Request) error
}

// Options tune a Recorder; zero values take the defaults.
type Options struct {
	BatchSize     int           // records per write (default 2000)
	FlushInterval time.Duration // longest a record waits in memory (default 500ms)
	BufferSize    int           // records held in memory before spilling (default 50,000)
	SpillPath     string        // the spill file (default "tollgate-ledger.spill")
	// Sync makes Record return only once its record is committed to the
	// database, so that a crash loses no completed request. Concurrent
	// callers wait for the same transaction (group commit). When the
	// database fails or does not answer within WriteTimeout, the record is
	// synced to the spill file instead, and Record returns.
	Sync bool
	// WriteTimeout bounds one write to the database (default 10s); a write
	// that takes longer is abandoned and retried like a failed one.
	WriteTimeout time.Duration
	// Healthy reports the ledger stalled when records have waited
	// StallAfter (default 10s) with nothing written, or when more than
	// MaxBacklog (default BufferSize) wait in memory and the spill file.
	StallAfter time.Duration
	MaxBacklog int
	Logger     *slog.Logger

	retention *retention // tests' settings for deleting old records
}

// Recorder is safe for concurrent use.
type Recorder struct {
	sink Sink
	o    Options
	log  *slog.Logger

	mu  sync.Mutex
	buf []store.Request // waiting to be written: a window of mem
	// mem is buf's backing array, reused from its start whenever the
	// buffer empties (see take).
	mem     []store.Request
	closed  bool          // Close has taken the buffer: Record spills
	taken   uint64        // records taken off the front of buf, ever
	added   uint64        // records appended to buf, ever
	advance chan struct{} // with Sync: closed (and replaced) when taken grows
	// lastWrite is when the writer last wrote a batch or found nothing to
	// write; lastErr the error of its last failed flush, nil after a good one.
	lastWrite time.Time
	lastErr   error

	rejected atomic.Int64

	// writeMu makes one flush at a time (the writer goroutine, or Close).
	// It also guards replayOffset: the bytes of the replay file already
	// written or set aside, so a replay cut short resumes after them.
	writeMu      sync.Mutex
	replayOffset int64

	// spillMu guards the spill file; it is never held while the database
	// is written, so Record never waits on the database.
	spillMu  sync.Mutex
	spill    *os.File
	spilled  int  // records in spill files, as far as this run knows
	hasSpill bool // a spill or replay file may hold records

	// ret tunes the deletion of old records, when the sink is a Retainer
	// with a retention; retainStop ends it and retained is closed once it
	// has ended.
	ret        retention
	retainStop context.CancelFunc
	retained   chan struct{}

	wake    chan struct{}
	done    chan struct{} // closed by Close: the writer goroutine stops
	stopped chan struct{} // closed when the writer goroutine has stopped
	cancel  context.CancelFunc
	ctx     context.Context // the writer goroutine's; cancelled when Close runs out of time
}

// New starts a Recorder writing to sink. Records left in the spill file by
// an earlier run are replayed first. When sink is a Retainer with a
// retention, the Recorder also deletes its records older than that, until
// Close.
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
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 10 * time.Second
	}
	if o.StallAfter <= 0 {
		o.StallAfter = 10 * time.Second
	}
	if o.MaxBacklog <= 0 {
		o.MaxBacklog = o.BufferSize
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	r := &Recorder{sink: sink, o: o, log: o.Logger, lastWrite: clock.Now(), ret: defaultRetention,
		wake: make(chan struct{}, 1), done: make(chan struct{}), stopped: make(chan struct{})}
	if o.retention != nil {
		r.ret = *o.retention
	}
	if o.Sync {
		r.advance = make(chan struct{})
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	for _, p := range []string{o.SpillPath, o.SpillPath + replaySuffix} {
		if fi, err := os.Stat(p); err == nil && fi.Size() > 0 {
			r.hasSpill = true // left by an earlier run: replay it
		}
	}
	go r.run()
	if p, ok := sink.(Retainer); ok && p.LedgerRetention() > 0 {
		r.startRetention(p, p.LedgerRetention())
	}
	return r, nil
}

// Record queues the record of one request's outcome. Without Options.Sync
// it never blocks on the database; with it, it returns once the record is
// committed, or synced to the spill file when the database fails.
func (r *Recorder) Record(o *outcome.Request) { r.RecordRow(Row(o)) }

// RecordRow queues one database row, cleaned and clipped by
// store.SanitizeRequest first, as Record does.
func (r *Recorder) RecordRow(rec store.Request) {
	rec = store.SanitizeRequest(rec) // bounds what is held, spilled and written
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		// Nothing writes the buffer any more: keep it for the next start.
		if err := r.spillRecords([]store.Request{rec}, true); err != nil {
			r.log.Error("ledger: a record made after shutdown could not be kept", "request_id", rec.ID, "error", err)
		}
		return
	}
	if len(r.buf) >= r.o.BufferSize {
		r.mu.Unlock()
		err := r.spillRecords([]store.Request{rec}, r.o.Sync)
		if err == nil {
			return
		}
		// Nowhere left to put it: keep it in memory rather than lose it.
		r.log.Error("ledger: spilling a record failed; keeping it in memory", "error", err)
		r.mu.Lock()
	}
	if len(r.buf) == cap(r.buf) {
		r.buf = append(r.buf, rec)
		r.mem = r.buf[:0] // a new array: buf is at its start
	} else {
		r.buf = append(r.buf, rec)
	}
	r.added++
	seq := r.added
	full := len(r.buf) >= r.o.BatchSize
	r.mu.Unlock()
	if full || r.o.Sync {
		select {
		case r.wake <- struct{}{}:
		default:
		}
	}
	if r.o.Sync {
		r.waitWritten(seq, rec)
	}
}

// waitWritten waits until the seq'th record appended has been taken off
// the buffer: committed, set aside, or synced to the spill file. Should
// the writer be held past any write's deadline, the caller syncs its
// record to the spill file itself (a record both spilled and written is
// stored once: writes are idempotent).
func (r *Recorder) waitWritten(seq uint64, rec store.Request) {
	var timeout <-chan time.Time
	for {
		r.mu.Lock()
		if r.taken >= seq {
			r.mu.Unlock()
			return
		}
		advance := r.advance
		r.mu.Unlock()
		if timeout == nil {
			t := time.NewTimer(2*r.o.WriteTimeout + r.o.FlushInterval)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-advance:
		case <-timeout:
			if err := r.spillRecords([]store.Request{rec}, true); err != nil {
				r.log.Error("ledger: a record could be neither written nor spilled in time", "request_id", rec.ID, "error", err)
			}
			return
		}
	}
}

// take removes the first n records of the buffer, written or kept
// elsewhere, and wakes the Sync callers waiting for them.
func (r *Recorder) take(n int) {
	if n <= 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	n = min(n, len(r.buf))
	rest := r.buf[n:]
	clear(r.buf[:n]) // let the records' strings go
	switch {
	case len(rest) == 0:
		r.buf = r.reuse()
	case len(rest) <= n && cap(r.mem) <= r.keptBuffer():
		// Move the few left to the front (they lie past it: no overlap),
		// so that appends go on filling this array rather than grow a
		// new one once they reach its end. Every batch handed out was
		// taken: nothing else holds these slots.
		m := copy(r.mem[:cap(r.mem)], rest)
		clear(rest)
		r.buf = r.mem[:m]
	default:
		r.buf = rest
	}
	r.taken += uint64(n)
	if r.advance != nil {
		close(r.advance)
		r.advance = make(chan struct{})
	}
}

// reuse returns the empty buffer to append to once every record is
// taken; r.mu is held. The backing array is kept for the next records,
// so that steady traffic appends without allocating, unless a burst grew
// it past keptBuffer(): then it goes, and the buffer grows again from
// nothing, rather than hold a spike's memory for good.
func (r *Recorder) reuse() []store.Request {
	if cap(r.mem) > r.keptBuffer() {
		r.mem = nil
	}
	return r.mem[:0]
}

// keptBuffer is the most records whose room the buffer keeps once empty:
// two batches, the most that a writer keeping up holds (one being
// written, the next filling), and never more than the buffer's size.
func (r *Recorder) keptBuffer() int { return min(2*r.o.BatchSize, r.o.BufferSize) }

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

// Rejected counts the records set aside because the database refused
// them (and unreadable lines of a spill file) since New. Each is logged
// with its request id and the record itself.
func (r *Recorder) Rejected() int64 { return r.rejected.Load() }

// Healthy returns an error when the ledger is not keeping up: records have
// waited Options.StallAfter with nothing written (the database failing or
// hanging), or more than Options.MaxBacklog records wait. A readiness
// check reports it.
func (r *Recorder) Healthy() error {
	r.mu.Lock()
	memory, last, lastErr := len(r.buf), r.lastWrite, r.lastErr
	r.mu.Unlock()
	r.spillMu.Lock()
	spilled, hasSpill := r.spilled, r.hasSpill
	r.spillMu.Unlock()
	backlog := memory + spilled
	if backlog > r.o.MaxBacklog {
		return fmt.Errorf("ledger: %d records waiting to be written, over %d", backlog, r.o.MaxBacklog)
	}
	// A writer waking each FlushInterval has that much leeway.
	if stalled := clock.Now().Sub(last); (backlog > 0 || hasSpill) && stalled > r.o.StallAfter+r.o.FlushInterval {
		if lastErr != nil {
			return fmt.Errorf("ledger: nothing written for %s, %d records waiting: %w", stalled.Round(time.Second), backlog, lastErr)
		}
		return fmt.Errorf("ledger: nothing written for %s, %d records waiting", stalled.Round(time.Second), backlog)
	}
	return nil
}

// Close writes everything out, retrying until ctx ends; what still cannot
// be written is left in the spill file for the next start.
func (r *Recorder) Close(ctx context.Context) error {
	defer r.cancel()
	if r.retainStop != nil {
		r.retainStop() // old records can wait for the next start
		<-r.retained
	}
	close(r.done)
	select {
	case <-r.stopped:
	case <-ctx.Done():
		r.cancel() // abandon the writer's flush: drain retries within ctx
		<-r.stopped
	}
	err := r.drain(ctx)
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	r.mu.Lock()
	r.closed = true
	left := r.buf[:len(r.buf):len(r.buf)]
	r.mu.Unlock()
	if len(left) > 0 {
		if serr := r.spillRecords(left, false); serr != nil {
			return errors.Join(err, fmt.Errorf("ledger: %d records could not be written or spilled: %w", len(left), serr))
		}
		r.take(len(left))
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
	defer close(r.stopped)
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
		if backoff > 0 && !r.sleep(backoff) {
			return
		}
		if err := r.flushOnce(r.ctx); err != nil {
			if backoff == 0 {
				r.log.Warn("ledger: the database is unreachable; records are kept and retried", "error", err)
			}
			if r.o.Sync {
				r.spillMemory() // the callers waiting on these records go on
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

// sleep waits d before the next try at a database that failed; false when
// the Recorder is closing. With Sync, records made meanwhile are synced to
// the spill file at once rather than keep their callers waiting.
func (r *Recorder) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-r.done:
			return false
		case <-t.C:
			return true
		case <-r.wake:
			if r.o.Sync {
				r.spillMemory()
			}
		}
	}
}

// flushOnce writes the spill file back if there is one, then every batch
// in memory. It stops at the first failure of the database, keeping what
// is not written.
func (r *Recorder) flushOnce(ctx context.Context) error {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	err := r.replaySpill(ctx)
	if err == nil {
		err = r.flushMemory(ctx)
	}
	r.mu.Lock()
	r.lastErr = err
	if err == nil {
		r.lastWrite = clock.Now()
	}
	r.mu.Unlock()
	return err
}

// flushMemory writes the buffer in batches; writeMu is held.
func (r *Recorder) flushMemory(ctx context.Context) error {
	for {
		r.mu.Lock()
		n := min(len(r.buf), r.o.BatchSize)
		// Appends never touch this prefix, and take only reslices: no copy.
		batch := r.buf[:n:n]
		r.mu.Unlock()
		if n == 0 {
			return nil
		}
		done, err := r.write(ctx, batch)
		r.take(done)
		if err != nil {
			return err
		}
	}
}

// spillMemory syncs the buffer to the spill file and takes it off: with
// Sync, while the database fails.
func (r *Recorder) spillMemory() {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	r.mu.Lock()
	recs := r.buf[:len(r.buf):len(r.buf)]
	r.mu.Unlock()
	if len(recs) == 0 {
		return
	}
	if err := r.spillRecords(recs, true); err != nil {
		r.log.Error("ledger: spilling records failed; keeping them in memory", "error", err)
		return
	}
	r.take(len(recs))
}

// write stores one batch and returns how many of its first records are
// done with: written, or set aside because the database refuses them.
// When the database refuses the batch, it is halved until each refused
// record is alone, so the others are written. An error means the database
// failed; the records from done on are to be written again.
func (r *Recorder) write(ctx context.Context, batch []store.Request) (done int, err error) {
	if len(batch) == 0 {
		return 0, nil
	}
	wctx, cancel := context.WithTimeout(ctx, r.o.WriteTimeout)
	if clean, ok := r.sink.(sanitizedSink); ok {
		err = clean.InsertSanitizedRequests(wctx, batch)
	} else {
		err = r.sink.InsertRequests(wctx, batch)
	}
	cancel()
	if err == nil {
		r.mu.Lock()
		r.lastWrite = clock.Now()
		r.mu.Unlock()
		return len(batch), nil
	}
	if !store.IsBadRecord(err) {
		return 0, err
	}
	if len(batch) == 1 {
		r.reject(batch[0], err)
		return 1, nil
	}
	half := len(batch) / 2
	done, err = r.write(ctx, batch[:half])
	if err != nil {
		return done, err
	}
	done, err = r.write(ctx, batch[half:])
	return half + done, err
}

// reject sets a record aside: logged in full, to be recovered by hand, and
// counted.
func (r *Recorder) reject(rec store.Request, err error) {
	r.rejected.Add(1)
	b, _ := json.Marshal(&rec)
	r.log.Error("ledger: the database refuses a record; it is set aside", "request_id", rec.ID, "error", err, "record", string(b))
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

// spillRecords appends records to the spill file as JSON lines. With
// durable, the file is synced before it returns; otherwise at Close, and
// a process crash keeps what reached the kernel.
func (r *Recorder) spillRecords(recs []store.Request, durable bool) error {
	r.spillMu.Lock()
	defer r.spillMu.Unlock()
	if r.spill == nil {
		f, err := os.OpenFile(r.o.SpillPath, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o600)
		if err != nil {
			return err
		}
		// A crash may have cut the last line short: end it, so the next
		// record starts a line of its own.
		if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
			last := make([]byte, 1)
			if _, err := f.ReadAt(last, fi.Size()-1); err == nil && last[0] != '\n' {
				if _, err := f.Write([]byte{'\n'}); err != nil {
					f.Close()
					return err
				}
			}
		}
		r.spill = f
		r.log.Warn("ledger: spilling records to disk", "path", r.o.SpillPath)
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
	if durable {
		if err := r.spill.Sync(); err != nil {
			return err
		}
	}
	r.spilled += len(recs)
	r.hasSpill = true
	return nil
}

// replaySpill writes spilled records back to the sink: a replay file left
// from before, then the spill file. The spill file is first renamed
// aside, so new spills go to a fresh file while it is read without any
// lock held; a replay that fails is resumed from that file. A partial
// replay is safe: writes are idempotent by id.
func (r *Recorder) replaySpill(ctx context.Context) error {
	for range 2 {
		if more, err := r.replayOnce(ctx); err != nil || !more {
			return err
		}
	}
	return nil
}

// replayOnce replays one file; more reports that spilled records remain.
func (r *Recorder) replayOnce(ctx context.Context) (more bool, err error) {
	r.spillMu.Lock()
	if !r.hasSpill {
		r.spillMu.Unlock()
		return false, nil
	}
	replay := r.o.SpillPath + replaySuffix
	if _, err := os.Stat(replay); errors.Is(err, os.ErrNotExist) {
		if r.spill != nil {
			r.spill.Close()
			r.spill = nil
		}
		if err := os.Rename(r.o.SpillPath, replay); err != nil && !errors.Is(err, os.ErrNotExist) {
			r.spillMu.Unlock()
			return false, err
		}
		r.replayOffset = 0
	}
	r.spillMu.Unlock()

	n, err := r.replayFile(ctx, replay)
	r.spillMu.Lock()
	defer r.spillMu.Unlock()
	r.spilled = max(r.spilled-n, 0)
	if err != nil {
		return true, err
	}
	if fi, err := os.Stat(r.o.SpillPath); err != nil || fi.Size() == 0 {
		r.hasSpill = false
	}
	if n > 0 {
		r.log.Info("ledger: spilled records written to the database", "records", n)
	}
	return r.hasSpill, nil
}

// replayFile writes one spill file to the sink, from replayOffset on, and
// removes it. It returns the records done with (written or set aside). A
// line that does not read as a record (cut short by a crash, or damaged)
// is set aside like a record the database refuses.
func (r *Recorder) replayFile(ctx context.Context, path string) (int, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if _, err := f.Seek(r.replayOffset, io.SeekStart); err != nil {
		return 0, err
	}
	br := bufio.NewReaderSize(f, 64<<10)
	off := r.replayOffset
	batch := make([]store.Request, 0, r.o.BatchSize)
	ends := make([]int64, 0, r.o.BatchSize) // where each record's line ends
	n := 0
	flush := func() error {
		if r.o.Sync {
			// Callers waiting in Record go before the backlog.
			if err := r.flushMemory(ctx); err != nil {
				return err
			}
		}
		done, err := r.write(ctx, batch)
		n += done
		if done > 0 {
			r.replayOffset = ends[done-1]
		}
		batch, ends = batch[:0], ends[:0]
		return err
	}
	for {
		line, rerr := br.ReadBytes('\n')
		if rerr != nil && rerr != io.EOF {
			return n, fmt.Errorf("ledger: reading the spill file %s: %w", path, rerr)
		}
		start := off
		off += int64(len(line))
		if line = bytes.TrimSpace(line); len(line) > 0 {
			var rec store.Request
			if jerr := json.Unmarshal(line, &rec); jerr != nil {
				if err := flush(); err != nil {
					return n, err
				}
				n++
				r.rejected.Add(1)
				r.log.Error("ledger: a line of the spill file is not a record; it is set aside",
					"path", path, "offset", start, "error", jerr, "line", string(line[:min(len(line), 1024)]))
				r.replayOffset = off
			} else {
				batch, ends = append(batch, store.SanitizeRequest(rec)), append(ends, off)
				if len(batch) == r.o.BatchSize {
					if err := flush(); err != nil {
						return n, err
					}
				}
			}
		} else if len(batch) == 0 {
			r.replayOffset = off
		}
		if rerr == io.EOF {
			break
		}
	}
	if err := flush(); err != nil {
		return n, err
	}
	r.replayOffset = 0
	return n, os.Remove(path)
}
