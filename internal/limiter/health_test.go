package limiter

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tollgate/tollgate/internal/limit"
)

// probeClock is the probe's clock, moved by the test: each wait the probe
// asks for is sent on asked, and ends when the test calls fire.
type probeClock struct {
	asked chan time.Duration
	fired chan struct{}
}

func newProbeClock() *probeClock {
	return &probeClock{asked: make(chan time.Duration), fired: make(chan struct{})}
}

func (c *probeClock) wait(d time.Duration, stop <-chan struct{}) bool {
	select {
	case c.asked <- d:
	case <-stop:
		return false
	}
	select {
	case <-c.fired:
		return true
	case <-stop:
		return false
	}
}

// next is the wait the probe asks for next.
func (c *probeClock) next(t *testing.T) time.Duration { return recv(t, c.asked) }

func (c *probeClock) fire() { c.fired <- struct{}{} }

// recv takes from ch; the bound only keeps a broken test from hanging.
func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(20 * time.Second):
		t.Fatal("nothing arrived")
		panic("unreachable")
	}
}

// dialer counts the connections a client opens, and sends them where the
// test says, whatever the client's address.
type dialer struct {
	n  atomic.Int64
	to atomic.Value // string
}

func (d *dialer) dial(ctx context.Context, network, _ string) (net.Conn, error) {
	d.n.Add(1)
	var nd net.Dialer
	return nd.DialContext(ctx, network, d.to.Load().(string))
}

// probedRedis is a back end on url whose connections go through d and
// whose probe keeps clk's time, always waiting the longest its backoff
// allows.
func probedRedis(t *testing.T, url string, d *dialer, clk *probeClock) *Redis {
	opt, err := RedisOptions(url, 0)
	if err != nil {
		t.Fatal(err)
	}
	opt.Dialer = d.dial
	r := newRedisClient(redis.NewClient(opt), "tgtest:"+newEpoch()+":", LeaseTTL, 0, func(h *health) {
		h.wait = clk.wait
		h.rnd = func(n int64) int64 { return n - 1 }
	})
	t.Cleanup(func() { r.close() })
	return r
}

// logRecords keeps the records logged through it.
type logRecords struct {
	mu   sync.Mutex
	msgs []string
	got  chan string
}

func newLogRecords() *logRecords { return &logRecords{got: make(chan string, 1000)} }

func (l *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecords) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logRecords) WithGroup(string) slog.Handler            { return l }
func (l *logRecords) Handle(_ context.Context, r slog.Record) error {
	msg := r.Message
	r.Attrs(func(a slog.Attr) bool {
		msg += fmt.Sprintf(" %s=%v", a.Key, a.Value)
		return true
	})
	l.mu.Lock()
	l.msgs = append(l.msgs, msg)
	l.mu.Unlock()
	l.got <- msg
	return nil
}

func (l *logRecords) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.msgs...)
}

// waitFor waits until a record starting with prefix is logged.
func (l *logRecords) waitFor(t *testing.T, prefix string) string {
	t.Helper()
	for {
		if m := recv(t, l.got); strings.HasPrefix(m, prefix) {
			return m
		}
	}
}

// While Redis refuses connections, only the first limited request and
// the probes dial it; the others are let through (fail open) or refused
// (fail closed) without touching the network, and the outage is logged
// once. The probes back off from 100 ms to 5 s.
func TestRedisDownFailsFast(t *testing.T) {
	for _, open := range []bool{true, false} {
		t.Run(fmt.Sprintf("fail_open=%v", open), func(t *testing.T) {
			addr := closedAddr(t)
			d := &dialer{}
			d.to.Store(addr)
			clk := newProbeClock()
			logs := newLogRecords()
			l := New(probedRedis(t, "redis://"+addr+"/0", d, clk), Options{FailOpen: open, Logger: slog.New(logs)})
			s := keyScope("a", limit.Limits{RPM: 10, BudgetUSD: limit.NanoUSD(usd)})
			admitDown := func() {
				t.Helper()
				tk, err := l.Admit(ctx, &Request{ID: newEpoch(), Scopes: []Scope{s}, Cost: 1})
				switch {
				case open && (err != nil || tk == nil || tk.Status.Budget != nil):
					t.Fatalf("fail open: %+v %v", tk, err)
				case !open && (tk != nil || !errors.Is(err, ErrUnavailable)):
					t.Fatalf("fail closed: %+v %v", tk, err)
				}
				l.Settle(ctx, tk, Used{Cost: 1}) // also turned away, and not logged
			}
			admitDown()
			if n := d.n.Load(); n != 1 {
				t.Fatalf("the first request dialed %d times, want once", n)
			}
			if l.Up() {
				t.Fatal("up after a refused connection")
			}
			for range 100 {
				admitDown()
			}
			if err := l.Ping(ctx); !errors.Is(err, errRedisDown) {
				t.Errorf("Ping while down: %v", err)
			}
			if n := d.n.Load(); n != 1 {
				t.Fatalf("%d dials for 101 requests while Redis is known down", n)
			}
			// Each probe dials once, then backs off further, to 5 s at most.
			for i, want := range []time.Duration{100, 200, 400, 800, 1600, 3200, 5000, 5000} {
				if got := clk.next(t); got != want*time.Millisecond {
					t.Fatalf("probe %d after %s, want %s", i+1, got, want*time.Millisecond)
				}
				if n := d.n.Load(); n != int64(1+i) {
					t.Fatalf("before probe %d: %d dials", i+1, n)
				}
				admitDown()
				clk.fire()
			}
			clk.next(t) // the 8th probe has failed
			if n := d.n.Load(); n != 9 {
				t.Fatalf("after 8 probes: %d dials, want 9", n)
			}
			if got, want := l.Errors.Load(), int64(109+109*btoi(open)); got != want {
				// Admissions, and with fail open the settlements of their budgets.
				t.Errorf("%d errors counted, want %d", got, want)
			}
			if open && l.FailedOpen.Load() != 109 {
				t.Errorf("%d requests let through, want 109", l.FailedOpen.Load())
			}
			if m := logs.all(); len(m) != 1 || !strings.HasPrefix(m[0], "limits: counters unreachable") {
				t.Errorf("logged during the outage: %q", m)
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// When a probe reaches Redis again, the outage's end is logged and limits
// apply again.
func TestRedisProbeResumesLimiting(t *testing.T) {
	url := redisURL(t)
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	d := &dialer{}
	d.to.Store(closedAddr(t))
	clk := newProbeClock()
	logs := newLogRecords()
	r := probedRedis(t, url, d, clk)
	t.Cleanup(func() { dropPrefix(t, url, r.prefix) })
	l := New(r, Options{FailOpen: true, Logger: slog.New(logs)})
	s := keyScope("a", limit.Limits{RPM: 2})
	if tk, r := admit(t, l, "1", 0, 0, s); tk != nil || r != nil || l.Up() {
		t.Fatalf("Redis away: %+v %+v, up %v", tk, r, l.Up())
	}
	clk.next(t)
	clk.fire() // the first probe fails
	clk.next(t)
	d.to.Store(opt.Addr) // Redis is back
	clk.fire()
	if m := logs.waitFor(t, "limits: counters reachable again"); !strings.Contains(m, "probes=2") {
		t.Errorf("recovery logged as %q", m)
	}
	if !l.Up() {
		t.Fatal("down after a probe reached Redis")
	}
	dials := d.n.Load()
	for i := range 2 {
		if tk, r := admit(t, l, "2", 0, 0, s); tk == nil || r != nil || tk.Status.Requests.Remaining != int64(1-i) {
			t.Fatalf("request %d after the recovery: %+v %+v", i+1, tk, r)
		}
	}
	if _, r := admit(t, l, "3", 0, 0, s); r == nil || r.What != Requests {
		t.Fatalf("the third request in a minute was not refused: %+v", r)
	}
	if n := d.n.Load() - dials; n > 1 {
		t.Errorf("%d dials after the recovery; the probe's connection should serve", n)
	}
	if m := logs.all(); len(m) != 2 || !strings.HasPrefix(m[0], "limits: counters unreachable") {
		t.Errorf("logged: %q", m)
	}
}

// Found down at start-up (its Ping failed), Redis counts as down before
// any request, and its return is logged when the probe finds it.
func TestRedisDownAtStart(t *testing.T) {
	d := &dialer{}
	d.to.Store(closedAddr(t))
	clk := newProbeClock()
	r := probedRedis(t, "redis://"+closedAddr(t)+"/0", d, clk)
	if err := r.Ping(ctx); err == nil {
		t.Fatal("Ping reached a closed port")
	}
	logs := newLogRecords()
	l := New(r, Options{FailOpen: true, Logger: slog.New(logs)})
	if l.Up() {
		t.Error("up, though Ping failed")
	}
	if tk, err := l.Admit(ctx, &Request{ID: "1", Scopes: []Scope{keyScope("a", limit.Limits{RPM: 1})}}); tk != nil || err != nil || d.n.Load() != 1 {
		t.Errorf("admitted %+v %v after %d dials", tk, err, d.n.Load())
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go fakePong(ln)
	d.to.Store(ln.Addr().String())
	clk.next(t)
	clk.fire()
	logs.waitFor(t, "limits: counters reachable again")
	if !l.Up() || r.h.check() != nil {
		t.Error("down after the probe found Redis")
	}
}

// fakePong answers HELLO and PING as Redis does, and anything else with
// OK, on every connection.
func fakePong(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			in := bufio.NewReader(c)
			for {
				cmd, err := readCommand(in)
				if err != nil {
					return
				}
				switch strings.ToUpper(cmd) {
				case "HELLO":
					c.Write([]byte("%1\r\n$5\r\nproto\r\n:3\r\n"))
				case "PING":
					c.Write([]byte("+PONG\r\n"))
				default:
					c.Write([]byte("+OK\r\n"))
				}
			}
		}()
	}
}

// readCommand reads one RESP command and returns its name.
func readCommand(in *bufio.Reader) (string, error) {
	var n int
	if _, err := fmt.Fscanf(in, "*%d\r\n", &n); err != nil {
		return "", err
	}
	var name string
	for i := range n {
		var size int
		if _, err := fmt.Fscanf(in, "$%d\r\n", &size); err != nil {
			return "", err
		}
		b := make([]byte, size+2)
		if _, err := io.ReadFull(in, b); err != nil {
			return "", err
		}
		if i == 0 {
			name = string(b[:size])
		}
	}
	return name, nil
}

// replyErr is an error reply from Redis.
type replyErr string

func (e replyErr) Error() string { return string(e) }
func (replyErr) RedisError()     {}

func TestUnreachable(t *testing.T) {
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}
	for _, c := range []struct {
		ctx  context.Context
		err  error
		want bool
	}{
		{ctx, nil, false},
		{ctx, refused, true},
		{ctx, fmt.Errorf("admit: %w", refused), true},
		{ctx, errors.New("i/o timeout"), true},
		{ctx, redis.ErrClosed, true},
		{canceled, refused, false}, // the client left: nothing learned of Redis
		{ctx, redis.ErrPoolTimeout, false},
		{ctx, redis.ErrNoScript, false},
		{ctx, replyErr("WRONGTYPE Operation against a key holding the wrong kind of value"), false},
		{ctx, replyErr("LOADING Redis is loading the dataset in memory"), true},
		{ctx, fmt.Errorf("%w: x", errRedisDown), false},
	} {
		if got := unreachable(c.ctx, c.err); got != c.want {
			t.Errorf("unreachable(%v, ctx err %v) = %v", c.err, c.ctx.Err(), got)
		}
	}
}

func TestProbeDelay(t *testing.T) {
	most := func(n int64) int64 { return n - 1 }
	least := func(int64) int64 { return 0 }
	for n, want := range []time.Duration{100, 200, 400, 800, 1600, 3200, 5000, 5000} {
		if got := probeDelay(n, most); got != want*time.Millisecond {
			t.Errorf("probe %d: %s, want %s", n, got, want*time.Millisecond)
		}
		if got := probeDelay(n, least); got != want*time.Millisecond/2 {
			t.Errorf("probe %d, least: %s, want %s", n, got, want*time.Millisecond/2)
		}
	}
	if got := probeDelay(1000, most); got != probeMax {
		t.Errorf("probe 1000: %s", got)
	}
}

// probed is a back end that fails while down and, like Redis, says when
// a probe found it again.
type probed struct {
	*flaky
	onUp func(int, time.Duration)
}

func (p *probed) up() bool                                  { return !p.down.Load() }
func (p *probed) watch(f func(probes int, d time.Duration)) { p.onUp = f }

// A request turned away just before the probe found the store again
// does not start another outage.
func TestLateTurnedAwayRequestStartsNoOutage(t *testing.T) {
	b := &probed{flaky: &flaky{Memory: NewMemory()}}
	logs := newLogRecords()
	l := New(b, Options{FailOpen: true, Logger: slog.New(logs)})
	b.down.Store(true)
	l.failure(errDown)
	b.down.Store(false)
	b.onUp(3, time.Second)
	l.failure(fmt.Errorf("%w: connection refused", errRedisDown)) // checked before the probe's answer
	if !l.Up() {
		t.Error("down after the probe found the store")
	}
	if m := logs.all(); len(m) != 2 || !strings.HasPrefix(m[1], "limits: counters reachable again probes=3 down_for=1s") {
		t.Errorf("logged: %q", m)
	}
}
