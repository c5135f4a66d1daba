package limiter

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// RouteRedisLogs sends go-redis's own log lines, which it otherwise prints
// as plain text on stderr, to logger as warnings. go-redis has one logger
// for the whole process: call this once at start-up, before any client is
// built; it serves every client.
func RouteRedisLogs(logger *slog.Logger) { redis.SetLogger(newRedisLog(logger, time.Now)) }

// redisLogEvery is how often one kind of go-redis line (one format) is
// logged: during an outage go-redis reports every failed dial, each time
// with a new address or error text.
const redisLogEvery = time.Minute

// redisLog adapts go-redis's Printf logger to slog.
type redisLog struct {
	log *slog.Logger
	now func() time.Time

	mu   sync.Mutex
	last map[string]*redisLine // by format
}

type redisLine struct {
	at      time.Time
	dropped int
}

func newRedisLog(logger *slog.Logger, now func() time.Time) *redisLog {
	return &redisLog{log: logger, now: now, last: map[string]*redisLine{}}
}

// Printf logs a go-redis line as a warning record, unless a line of the
// same format was logged within redisLogEvery; the next one logged says
// how many were dropped.
func (a *redisLog) Printf(ctx context.Context, format string, v ...any) {
	if ctx == nil {
		ctx = context.Background()
	}
	if !a.log.Enabled(ctx, slog.LevelWarn) {
		return
	}
	now := a.now()
	a.mu.Lock()
	l := a.last[format]
	if l != nil && now.Sub(l.at) < redisLogEvery {
		l.dropped++
		a.mu.Unlock()
		return
	}
	dropped := 0
	switch {
	case l != nil:
		dropped, l.at, l.dropped = l.dropped, now, 0
	case len(a.last) < 1000: // formats are literals in go-redis: few
		a.last[format] = &redisLine{at: now}
	}
	a.mu.Unlock()
	msg := strings.TrimSpace(fmt.Sprintf(format, v...))
	if !strings.HasPrefix(msg, "redis: ") {
		msg = "redis: " + msg
	}
	attrs := []slog.Attr{slog.String("component", "go-redis")}
	if dropped > 0 {
		attrs = append(attrs, slog.Int("dropped", dropped))
	}
	a.log.LogAttrs(ctx, slog.LevelWarn, msg, attrs...)
}
