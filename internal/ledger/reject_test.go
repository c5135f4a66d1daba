package ledger

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/store/storetest"
)

// refusing opens the test databases (SQLite, and PostgreSQL when
// TOLLGATE_TEST_POSTGRES_URL is set) with a rule refusing every record of
// model "poison", as a database refuses a record it cannot take: a CHECK
// constraint in PostgreSQL (SQLSTATE 23514), a trigger in SQLite
// (SQLITE_CONSTRAINT).
func refusing(t *testing.T) map[string]*store.Store {
	t.Helper()
	ctx := context.Background()
	out := map[string]*store.Store{}
	open := func(name, url, driver, dsn, rule string) {
		s, err := store.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		if err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		raw, err := sql.Open(driver, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		if _, err := raw.Exec(rule); err != nil {
			t.Fatal(err)
		}
		out[name] = s
	}
	path := filepath.Join(t.TempDir(), "r.db")
	open("sqlite", "sqlite://"+path, "sqlite", "file:"+path,
		"CREATE TRIGGER no_poison BEFORE INSERT ON requests WHEN NEW.model = 'poison' BEGIN SELECT RAISE(ABORT, 'poison'); END")
	if pgURL, withSchema := storetest.SchemaURL(t); pgURL != "" {
		open("postgres", withSchema, "pgx", withSchema, "ALTER TABLE requests ADD CONSTRAINT no_poison CHECK (model <> 'poison')")
	}
	return out
}

// logBuffer collects what a Recorder logs.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

// countStored counts the records stored of ids 0..n-1, failing on any
// stored twice.
func countStored(t *testing.T, s *store.Store, n int) int {
	t.Helper()
	got := 0
	for i := 0; i < n; i++ {
		if _, err := s.RequestByID(context.Background(), rec(i).ID); err == nil {
			got++
		} else if !store.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	return got
}

// A record the database refuses once made the writer retry its batch
// forever, taking it for an unreachable database: nothing was recorded for
// anyone again. Now the batch is split, the others are written, and the
// refused record is set aside, logged with its request id, and counted.
func TestRefusedRecordSetAside(t *testing.T) {
	for name, s := range refusing(t) {
		t.Run(name, func(t *testing.T) {
			var logs logBuffer
			r, err := New(s, Options{BatchSize: 100, FlushInterval: 10 * time.Millisecond,
				SpillPath: filepath.Join(t.TempDir(), "spill"), Logger: logs.logger()})
			if err != nil {
				t.Fatal(err)
			}
			poison := map[int]bool{7: true, 150: true, 151: true, 999: true}
			for i := 0; i < 1000; i++ {
				x := rec(i)
				if poison[i] {
					x.Model = "poison"
				}
				r.RecordRow(x)
			}
			waitDrained(t, r)
			if err := r.Healthy(); err != nil {
				t.Errorf("healthy after setting records aside: %v", err)
			}
			// The ledger goes on recording.
			for i := 1000; i < 1100; i++ {
				r.RecordRow(rec(i))
			}
			if err := r.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := countStored(t, s, 1100); got != 1100-len(poison) {
				t.Errorf("%d records stored, want %d", got, 1100-len(poison))
			}
			if got := r.Rejected(); got != int64(len(poison)) {
				t.Errorf("Rejected() = %d, want %d", got, len(poison))
			}
			for i := range poison {
				if !strings.Contains(logs.String(), "request_id="+rec(i).ID) {
					t.Errorf("the log does not name %s:\n%s", rec(i).ID, logs.String())
				}
			}
		})
	}
}

// writeSpill writes lines as a spill file left by an earlier run.
func writeSpill(t *testing.T, path string, lines ...string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
}

func spillLine(t *testing.T, r store.Request) string {
	t.Helper()
	b, err := json.Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

// A record in the spill file that the database refuses, or a line that is
// not a record at all, once stalled every later start: the replay failed
// before anything else was written. Now each is set aside and the rest is
// written; the spill file is gone.
func TestPoisonedSpillDoesNotStall(t *testing.T) {
	for name, s := range refusing(t) {
		t.Run(name, func(t *testing.T) {
			spill := filepath.Join(t.TempDir(), "spill")
			nul := rec(3)
			nul.Model, nul.UserAgent = "a\x00b", "ua \x00" // refused by PostgreSQL before the store cleaned text
			poison := rec(4)
			poison.Model = "poison"
			torn := spillLine(t, rec(9))
			writeSpill(t, spill, spillLine(t, rec(0)), spillLine(t, rec(1)), "{not json\n", spillLine(t, rec(2)),
				spillLine(t, nul), spillLine(t, poison), "\n", spillLine(t, rec(5)), spillLine(t, rec(6)),
				torn[:len(torn)/2]) // cut short by a crash
			r, err := New(s, Options{BatchSize: 3, FlushInterval: 10 * time.Millisecond, SpillPath: spill})
			if err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(10 * time.Second)
			for countStored(t, s, 7) < 6 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			r.RecordRow(rec(7))
			if err := r.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := countStored(t, s, 8); got != 7 {
				t.Fatalf("%d of records 0..7 stored, want all but the refused one", got)
			}
			got, err := s.RequestByID(context.Background(), nul.ID)
			if err != nil || got.Model != "a\uFFFDb" || !utf8.ValidString(got.UserAgent) {
				t.Errorf("the record with NUL: %+v %v", got, err)
			}
			if r.Rejected() != 3 {
				t.Errorf("Rejected() = %d, want 3 (a refused record, a bad line, a torn one)", r.Rejected())
			}
			for _, p := range []string{spill, spill + replaySuffix} {
				if _, err := os.Stat(p); !os.IsNotExist(err) {
					t.Errorf("%s left after the replay: %v", p, err)
				}
			}
		})
	}
}

// A spill file whose last line a crash cut short takes new records on
// lines of their own.
func TestSpillAfterTornLine(t *testing.T) {
	s := sqliteStore(t)
	sink := &switchable{s: s}
	sink.down.Store(true)
	spill := filepath.Join(t.TempDir(), "spill")
	torn := spillLine(t, rec(0))
	writeSpill(t, spill, spillLine(t, rec(1)), torn[:10])
	r, _ := New(sink, Options{BatchSize: 10, BufferSize: 1, FlushInterval: time.Hour, SpillPath: spill})
	r.RecordRow(rec(2))
	r.RecordRow(rec(3)) // over the buffer: spilled
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	r.Close(ctx)
	sink.down.Store(false)
	r2, _ := New(sink, Options{FlushInterval: 10 * time.Millisecond, SpillPath: spill})
	waitDrained(t, r2)
	r2.Close(context.Background())
	if got := countStored(t, s, 4); got != 3 || r2.Rejected() != 1 {
		t.Errorf("%d stored (want 1, 2 and 3), %d set aside (want the torn line)", got, r2.Rejected())
	}
}

// The hostile request of the original report, end to end: a User-Agent
// with byte 0xff, a model with NUL, a megabyte of User-Agent. Each is
// stored cleaned; nothing is refused or retried.
func TestHostileRecordsWritten(t *testing.T) {
	for name, s := range storetest.Open(t) {
		t.Run(name, func(t *testing.T) {
			r, _ := New(s, Options{BatchSize: 10, FlushInterval: 10 * time.Millisecond, SpillPath: filepath.Join(t.TempDir(), "spill")})
			for i := 0; i < 30; i++ {
				x := rec(i)
				switch i % 3 {
				case 0:
					x.UserAgent = "Mozilla/5.0 \xff"
				case 1:
					x.Model = "a\u0000b"
				case 2:
					x.UserAgent = strings.Repeat("A", 1<<20)
				}
				r.RecordRow(x)
			}
			if mem, _ := r.Pending(); mem > 0 {
				r.mu.Lock()
				for _, x := range r.buf {
					if len(x.UserAgent) > store.MaxFieldBytes {
						t.Errorf("a %d-byte User-Agent held in memory", len(x.UserAgent))
					}
				}
				r.mu.Unlock()
			}
			waitDrained(t, r)
			if err := r.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			countIDs(t, s, 30)
			if r.Rejected() != 0 {
				t.Errorf("%d records set aside", r.Rejected())
			}
			for i := 0; i < 3; i++ {
				got, err := s.RequestByID(context.Background(), rec(i).ID)
				if err != nil || !utf8.ValidString(got.UserAgent) || !utf8.ValidString(got.Model) ||
					strings.Contains(got.Model, "\x00") || len(got.UserAgent) > store.MaxFieldBytes {
					t.Errorf("stored as %q %q (%v)", got.Model, got.UserAgent, err)
				}
			}
		})
	}
}

// Healthy reports a writer that cannot write, and a backlog over its bound.
func TestHealthyReportsAStall(t *testing.T) {
	s := sqliteStore(t)
	sink := &switchable{s: s}
	r, _ := New(sink, Options{BatchSize: 10, FlushInterval: 10 * time.Millisecond, StallAfter: 100 * time.Millisecond,
		MaxBacklog: 50, SpillPath: filepath.Join(t.TempDir(), "spill")})
	defer r.Close(context.Background())
	r.RecordRow(rec(0))
	waitDrained(t, r)
	if err := r.Healthy(); err != nil {
		t.Fatalf("healthy writer: %v", err)
	}
	sink.down.Store(true)
	time.Sleep(300 * time.Millisecond)
	if err := r.Healthy(); err != nil {
		t.Errorf("an idle ledger with nothing to write is reported: %v", err)
	}
	r.RecordRow(rec(1))
	deadline := time.Now().Add(5 * time.Second)
	for r.Healthy() == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := r.Healthy(); err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("stalled writer: Healthy() = %v, want an error with the cause", err)
	}
	for i := 2; i < 60; i++ {
		r.RecordRow(rec(i))
	}
	if err := r.Healthy(); err == nil || !strings.Contains(err.Error(), "records waiting") {
		t.Errorf("backlog of 59: Healthy() = %v", err)
	}
	sink.down.Store(false)
	waitDrained(t, r)
	if err := r.Healthy(); err != nil {
		t.Errorf("after the outage: %v", err)
	}
}
