package gateway

import (
	"net/http"
	"sync"
	"time"
)

// pingInterval is how long a translated stream may stay silent before the
// client gets a keep-alive event.
var pingInterval = 10 * time.Second

// pinger is a stream tap that can encode a keep-alive event.
type pinger interface {
	ping() []byte
}

// keepalive writes a keep-alive event whenever the stream has been silent
// for pingInterval, so that clients and proxies in between do not give up
// while an upstream model thinks without streaming. It shares a lock with
// the relay's writes, so a ping never lands inside an event.
type keepalive struct {
	mu       sync.Mutex
	last     time.Time
	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

// startKeepalive starts pinging w; lock and unlock around every other write.
func startKeepalive(w http.ResponseWriter, rc *http.ResponseController, ping []byte, deadline func(*http.ResponseController)) *keepalive {
	k := &keepalive{last: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	interval := pingInterval
	go func() {
		defer close(k.done)
		t := time.NewTicker(interval / 4)
		defer t.Stop()
		for {
			select {
			case <-k.stop:
				return
			case now := <-t.C:
				k.mu.Lock()
				if now.Sub(k.last) >= interval {
					deadline(rc)
					if _, err := w.Write(ping); err == nil {
						rc.Flush()
					}
					k.last = now
				}
				k.mu.Unlock()
			}
		}
	}()
	return k
}

func (k *keepalive) lock() {
	if k != nil {
		k.mu.Lock()
	}
}

func (k *keepalive) unlock() {
	if k != nil {
		k.last = time.Now()
		k.mu.Unlock()
	}
}

// close stops the pinger; no write happens after it returns. It may be
// called more than once (the relay stops it before writing a stream's
// end, and again as it returns).
func (k *keepalive) close() {
	if k != nil {
		k.stopOnce.Do(func() { close(k.stop) })
		<-k.done
	}
}
