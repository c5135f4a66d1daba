package ledger

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/store/storetest"
)

func rec(i int) store.Request {
	return store.Request{ID: fmt.Sprintf("req_%05d", i), Time: time.UnixMilli(1_800_000_000_000 + int64(i)),
		ClientProtocol: "openai", Model: "m", Provider: "p", UpstreamModel: "u", Lane: "passthrough",
		Status: 200, Input: int64(i), Output: 1}
}

func sqliteStore(t *testing.T) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "l.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// countIDs checks that the store holds exactly the records 0..n-1, once each.
func countIDs(t *testing.T, s *store.Store, n int) {
	t.Helper()
	seen := map[string]int{}
	var before time.Time
	for {
		page, err := s.Requests(context.Background(), store.RequestFilter{Before: before, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page {
			seen[r.ID]++
		}
		if len(page) < 1000 {
			break
		}
		before = page[len(page)-1].Time
	}
	if len(seen) != n {
		t.Fatalf("%d distinct records stored, want %d", len(seen), n)
	}
	for i := 0; i < n; i++ {
		if c := seen[rec(i).ID]; c != 1 {
			t.Fatalf("%s stored %d times, want once", rec(i).ID, c)
		}
	}
}

func waitDrained(t *testing.T, r *Recorder) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		mem, spilled := r.Pending()
		if mem == 0 && spilled == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still pending after 20s: %d in memory, %d spilled", mem, spilled)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestBatchesAndCloseFlushes(t *testing.T) {
	s := sqliteStore(t)
	r, err := New(s, Options{BatchSize: 100, FlushInterval: time.Hour, SpillPath: filepath.Join(t.TempDir(), "spill")})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < 1234; i += 4 {
				r.RecordRow(rec(i))
			}
		}()
	}
	wg.Wait()
	if err := r.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	countIDs(t, s, 1234)
}

// switchable makes a real store's writes fail while the database is "down".
type switchable struct {
	s    *store.Store
	down atomic.Bool
}

func (w *switchable) InsertRequests(ctx context.Context, recs []store.Request) error {
	if w.down.Load() {
		return errors.New("database unreachable")
	}
	return w.s.InsertRequests(ctx, recs)
}

func TestOutageSpillsAndReplays(t *testing.T) {
	s := sqliteStore(t)
	sink := &switchable{s: s}
	spill := filepath.Join(t.TempDir(), "spill")
	r, err := New(sink, Options{BatchSize: 50, BufferSize: 100, FlushInterval: 10 * time.Millisecond, SpillPath: spill})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		r.RecordRow(rec(i))
	}
	waitDrained(t, r)
	sink.down.Store(true)
	for i := 10; i < 510; i++ {
		r.RecordRow(rec(i)) // the request path keeps going
	}
	if mem, spilled := r.Pending(); mem > 100 || spilled < 400 {
		t.Fatalf("during the outage: %d in memory (bound 100), %d spilled, want ≥ 400", mem, spilled)
	}
	if fi, err := os.Stat(spill); err != nil || fi.Size() == 0 {
		t.Fatalf("no spill file during the outage: %v", err)
	}
	sink.down.Store(false)
	waitDrained(t, r)
	if err := r.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	countIDs(t, s, 510)
	if _, err := os.Stat(spill); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("spill file left after replay: %v", err)
	}
}

// Records that cannot be written by shutdown are kept in the spill file and
// written by the next run.
func TestSpillSurvivesRestart(t *testing.T) {
	s := sqliteStore(t)
	sink := &switchable{s: s}
	sink.down.Store(true)
	spill := filepath.Join(t.TempDir(), "spill")
	r, _ := New(sink, Options{BatchSize: 50, BufferSize: 1000, FlushInterval: 10 * time.Millisecond, SpillPath: spill})
	for i := 0; i < 300; i++ {
		r.RecordRow(rec(i))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := r.Close(ctx); err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("Close during an outage = %v, want an error saying so", err)
	}
	sink.down.Store(false)
	r2, _ := New(sink, Options{FlushInterval: 10 * time.Millisecond, SpillPath: spill})
	waitDrained(t, r2)
	r2.Close(context.Background())
	countIDs(t, s, 300)
}

// relay forwards TCP connections to a database and can cut them all, to
// take a real PostgreSQL away and bring it back.
type relay struct {
	target string
	mu     sync.Mutex
	ln     net.Listener
	addr   string
	conns  map[net.Conn]bool
}

func newRelay(t *testing.T, target string) *relay {
	r := &relay{target: target, conns: map[net.Conn]bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.addr = ln.Addr().String()
	r.serve(ln)
	t.Cleanup(r.down)
	return r
}

func (r *relay) serve(ln net.Listener) {
	r.mu.Lock()
	r.ln = ln
	r.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", r.target)
			if err != nil {
				c.Close()
				continue
			}
			r.mu.Lock()
			r.conns[c], r.conns[u] = true, true
			r.mu.Unlock()
			go func() { io.Copy(u, c); u.Close() }()
			go func() { io.Copy(c, u); c.Close() }()
		}
	}()
}

func (r *relay) down() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ln != nil {
		r.ln.Close()
		r.ln = nil
	}
	for c := range r.conns {
		c.Close()
		delete(r.conns, c)
	}
}

func (r *relay) up(t *testing.T) {
	ln, err := net.Listen("tcp", r.addr)
	if err != nil {
		t.Fatal(err)
	}
	r.serve(ln)
}

// The same outage against a real PostgreSQL whose connections are cut.
func TestPostgresOutage(t *testing.T) {
	pgURL, withSchema := storetest.SchemaURL(t)
	if pgURL == "" {
		t.Skip("TOLLGATE_TEST_POSTGRES_URL is not set: PostgreSQL outage test skipped")
	}
	host := "127.0.0.1:5432"
	if i := strings.Index(pgURL, "@"); i >= 0 {
		rest := pgURL[i+1:]
		host = rest[:strings.IndexAny(rest+"/", "/")]
	}
	rl := newRelay(t, host)
	relayed := strings.Replace(withSchema, host, rl.addr, 1)
	s, err := store.Open(context.Background(), relayed+"&connect_timeout=2")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	r, _ := New(s, Options{BatchSize: 50, BufferSize: 100, FlushInterval: 10 * time.Millisecond, SpillPath: filepath.Join(t.TempDir(), "spill")})
	for i := 0; i < 10; i++ {
		r.RecordRow(rec(i))
	}
	waitDrained(t, r)
	rl.down()
	for i := 10; i < 410; i++ {
		r.RecordRow(rec(i))
	}
	if _, spilled := r.Pending(); spilled == 0 {
		t.Fatal("nothing spilled while PostgreSQL was unreachable")
	}
	rl.up(t)
	waitDrained(t, r)
	if err := r.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	countIDs(t, s, 410)
}
