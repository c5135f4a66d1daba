package ledger

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/store/storetest"
)

// counting counts the writes that reach a store, each taking at least
// delay, as a commit does.
type counting struct {
	s      *store.Store
	delay  time.Duration
	writes atomic.Int64
}

func (c *counting) InsertRequests(ctx context.Context, recs []store.Request) error {
	c.writes.Add(1)
	time.Sleep(c.delay)
	return c.s.InsertRequests(ctx, recs)
}

// With Sync, a record is committed when Record returns: a crash right
// after loses nothing. Callers at the same time share transactions.
func TestSyncCommitsBeforeReturning(t *testing.T) {
	for name, s := range storetest.Open(t) {
		t.Run(name, func(t *testing.T) {
			sink := &counting{s: s, delay: 2 * time.Millisecond}
			// No timer flush: only a waiting caller starts a write.
			r, _ := New(sink, Options{Sync: true, FlushInterval: time.Hour, SpillPath: filepath.Join(t.TempDir(), "spill")})
			defer r.Close(context.Background())
			r.RecordRow(rec(0))
			if _, err := s.RequestByID(context.Background(), rec(0).ID); err != nil {
				t.Fatalf("not committed when Record returned: %v", err)
			}
			const callers, each = 32, 20
			var wg sync.WaitGroup
			var missing atomic.Int64
			for g := 0; g < callers; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < each; i++ {
						x := rec(1 + g*each + i)
						r.RecordRow(x)
						if _, err := s.RequestByID(context.Background(), x.ID); err != nil {
							missing.Add(1)
						}
					}
				}()
			}
			wg.Wait()
			if missing.Load() > 0 {
				t.Errorf("%d records not committed when Record returned", missing.Load())
			}
			countIDs(t, s, 1+callers*each)
			if w := sink.writes.Load(); w > callers*each/3 {
				t.Errorf("%d writes for %d records: concurrent callers must share transactions", w, callers*each)
			}
		})
	}
}

// With Sync and the database failing, Record does not wait for it: the
// record is synced to the spill file, and written once the database is
// back.
func TestSyncDuringAnOutage(t *testing.T) {
	s := sqliteStore(t)
	sink := &switchable{s: s}
	sink.down.Store(true)
	spill := filepath.Join(t.TempDir(), "spill")
	r, _ := New(sink, Options{Sync: true, FlushInterval: 10 * time.Millisecond, SpillPath: spill})
	start := time.Now()
	for i := 0; i < 20; i++ {
		r.RecordRow(rec(i))
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("20 records took %s during an outage", d)
	}
	if n := spilledIDs(t, spill); n != 20 {
		t.Errorf("%d records in the spill files, want all 20 when Record returned", n)
	}
	sink.down.Store(false)
	waitDrained(t, r)
	if err := r.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	countIDs(t, s, 20)
}

// hanging is a database that takes every write and never answers.
type hanging struct{}

func (hanging) InsertRequests(ctx context.Context, recs []store.Request) error {
	<-ctx.Done()
	return ctx.Err()
}

// With Sync and a database that hangs, Record returns after the write
// timeout, its record synced to the spill file.
func TestSyncWithAHangingDatabase(t *testing.T) {
	spill := filepath.Join(t.TempDir(), "spill")
	r, _ := New(hanging{}, Options{Sync: true, WriteTimeout: 50 * time.Millisecond, FlushInterval: 10 * time.Millisecond, SpillPath: spill})
	start := time.Now()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); r.RecordRow(rec(i)) }()
	}
	wg.Wait()
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Record took %s with a write timeout of 50ms", d)
	}
	if n := spilledIDs(t, spill); n != 8 {
		t.Errorf("%d records in the spill files, want 8", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	r.Close(ctx)
}

// spilledIDs counts the distinct records in the spill files.
func spilledIDs(t *testing.T, spill string) int {
	t.Helper()
	ids := map[string]bool{}
	for _, p := range []string{spill, spill + replaySuffix} {
		f, err := os.Open(p)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var x store.Request
			if json.Unmarshal(sc.Bytes(), &x) == nil {
				ids[x.ID] = true
			}
		}
		f.Close()
	}
	return len(ids)
}

// killChildEnv holds, in the child process of TestSyncSurvivesKill, the
// database URL to record into.
const killChildEnv = "TOLLGATE_LEDGER_KILL_CHILD_DB"

// A process killed (kill -9) while recording under load once lost the
// records of its last half second, still waiting in memory. With Sync,
// every record whose Record call returned is in the database.
func TestSyncSurvivesKill(t *testing.T) {
	if url := os.Getenv(killChildEnv); url != "" {
		recordUntilKilled(url)
		return
	}
	urls := map[string]string{"sqlite": "sqlite://" + filepath.Join(t.TempDir(), "kill.db")}
	if pgURL, withSchema := storetest.SchemaURL(t); pgURL != "" {
		urls["postgres"] = withSchema
	}
	for name, url := range urls {
		t.Run(name, func(t *testing.T) {
			s, err := store.Open(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Migrate(context.Background()); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestSyncSurvivesKill$")
			cmd.Env = append(os.Environ(), killChildEnv+"="+url)
			cmd.Dir = t.TempDir()
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var returned []int
			sc := bufio.NewScanner(out)
			for sc.Scan() && len(returned) < 500 {
				if i, err := strconv.Atoi(sc.Text()); err == nil {
					returned = append(returned, i)
				}
			}
			cmd.Process.Kill() // SIGKILL: no shutdown, no flush
			cmd.Wait()
			if len(returned) < 500 {
				t.Fatalf("the child recorded only %d records", len(returned))
			}
			for _, i := range returned {
				if _, err := s.RequestByID(context.Background(), rec(i).ID); err != nil {
					t.Fatalf("record %d, recorded before the kill, is not stored: %v", i, err)
				}
			}
		})
	}
}

// recordUntilKilled records from 16 goroutines, printing each record's
// number once Record has returned, until the process is killed.
func recordUntilKilled(url string) {
	s, err := store.Open(context.Background(), url)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	r, _ := New(s, Options{Sync: true, SpillPath: "spill"})
	var mu sync.Mutex
	var next atomic.Int64
	for g := 0; g < 16; g++ {
		go func() {
			for {
				i := int(next.Add(1))
				r.RecordRow(rec(i))
				mu.Lock()
				fmt.Println(i)
				mu.Unlock()
			}
		}()
	}
	select {}
}
