package breaker

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Share keeps breakers in step across replicas through Redis. When one
// opens or closes, its replica writes "o:MS" or "c:MS" (the time, unix
// milliseconds) under prefix+name; every interval each replica reads them
// all and opens or closes its own to match, so a target that failed on one
// replica is skipped by all within interval. Redis being away only stops
// the sharing: each breaker goes on by itself. stop ends it.
func Share(c redis.UniversalClient, prefix string, breakers map[string]*Breaker, interval time.Duration, log *slog.Logger) (stop func()) {
	type change struct {
		name string
		open bool
		at   time.Time
	}
	changes := make(chan change, 256)
	names := make([]string, 0, len(breakers))
	keys := make([]string, 0, len(breakers))
	var ttl time.Duration
	for name, b := range breakers {
		name, b := name, b
		names, keys = append(names, name), append(keys, prefix+name)
		ttl = max(ttl, 2*b.s.Cooldown)
		b.OnChange(func(open bool, at time.Time) {
			select {
			case changes <- change{name, open, at}:
			default: // sharing is best effort; never block a request
			}
		})
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(interval)
		defer t.Stop()
		failing := false
		report := func(err error) {
			if err != nil && !failing {
				log.Warn("breakers: sharing through Redis failed; each replica goes on alone", "error", err)
			}
			failing = err != nil
		}
		for {
			select {
			case <-done:
				return
			case ch := <-changes:
				v := "c:"
				if ch.open {
					v = "o:"
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				report(c.Set(ctx, prefix+ch.name, v+strconv.FormatInt(ch.at.UnixMilli(), 10), ttl).Err())
				cancel()
			case <-t.C:
				if len(keys) == 0 {
					continue
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				vals, err := c.MGet(ctx, keys...).Result()
				cancel()
				report(err)
				for i, v := range vals {
					s, _ := v.(string)
					kind, ms, ok := strings.Cut(s, ":")
					n, err := strconv.ParseInt(ms, 10, 64)
					if !ok || err != nil {
						continue
					}
					b := breakers[names[i]]
					if kind == "o" {
						b.Opened(time.UnixMilli(n))
					} else {
						b.Closed(time.UnixMilli(n))
					}
				}
			}
		}
	}()
	return func() { close(done); <-finished }
}
