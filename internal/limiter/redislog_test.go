package limiter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/logging"
)

// syncBuffer is a log destination safe for go-redis's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// records are the JSON records written so far.
func (s *syncBuffer) records(t *testing.T) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(s.b.String()), "\n") {
		if line == "" {
			continue
		}
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("not a JSON record: %q", line)
		}
		out = append(out, r)
	}
	return out
}

// go-redis's lines become warning records, and one kind of line is
// logged at most once a minute, with the count of those dropped.
func TestRedisLogRecords(t *testing.T) {
	var out syncBuffer
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := newRedisLog(slog.New(slog.NewJSONHandler(&out, nil)), func() time.Time { return now })
	const dial = "redis: connection pool: failed to dial after %d attempts: %v"
	refused := errors.New("dial tcp 127.0.0.1:6379: connect: connection refused")
	a.Printf(ctx, dial, 1, refused)
	a.Printf(ctx, "Conn has unread data (not push notification), removing it\n")
	for range 5 {
		now = now.Add(10 * time.Second)
		a.Printf(ctx, dial, 1, refused)
	}
	now = now.Add(10 * time.Second) // a minute after the first
	a.Printf(ctx, dial, 1, refused)
	var none context.Context // go-redis may pass none
	a.Printf(none, dial, 1, refused)
	rs := out.records(t)
	if len(rs) != 3 {
		t.Fatalf("%d records: %v", len(rs), rs)
	}
	want := []map[string]any{
		{"level": "WARN", "msg": "redis: connection pool: failed to dial after 1 attempts: " + refused.Error(), "component": "go-redis"},
		{"level": "WARN", "msg": "redis: Conn has unread data (not push notification), removing it", "component": "go-redis"},
		{"level": "WARN", "msg": "redis: connection pool: failed to dial after 1 attempts: " + refused.Error(), "component": "go-redis", "dropped": 5.0},
	}
	for i, w := range want {
		for k, v := range w {
			if rs[i][k] != v {
				t.Errorf("record %d: %s is %v, want %v", i, k, rs[i][k], v)
			}
		}
	}
}

// Once routed, go-redis's own lines (here: a failed dial) reach the
// gateway's logger as records.
func TestRouteRedisLogs(t *testing.T) {
	var out syncBuffer
	RouteRedisLogs(slog.New(slog.NewJSONHandler(&out, nil)))
	t.Cleanup(logging.Enable) // go-redis's own logger again
	opt, err := RedisOptions("redis://"+closedAddr(t)+"/0", 0)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opt)
	defer c.Close()
	if err := c.Ping(context.Background()).Err(); err == nil {
		t.Fatal("Ping reached a closed port")
	}
	rs := out.records(t)
	if len(rs) != 1 || rs[0]["level"] != "WARN" || rs[0]["component"] != "go-redis" ||
		!strings.HasPrefix(rs[0]["msg"].(string), "redis: connection pool: failed to dial after 1 attempts: ") {
		t.Fatalf("records: %v", rs)
	}
}
