package h1client

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"
)

// hostPool holds the idle connections to one host:port.
type hostPool struct {
	t   *Transport
	key string

	mu    sync.Mutex
	idle  []*conn // oldest first; checkout takes the newest (LIFO)
	timer *time.Timer
	armed bool
}

// get returns an idle connection that still looks alive, or dials a new one.
// fresh skips the idle list.
func (p *hostPool) get(ctx context.Context, fresh bool) (*conn, error) {
	if !fresh {
		timeout := p.t.idleTimeout()
		for {
			p.mu.Lock()
			n := len(p.idle)
			if n == 0 {
				p.mu.Unlock()
				break
			}
			c := p.idle[n-1]
			p.idle[n-1] = nil
			p.idle = p.idle[:n-1]
			p.mu.Unlock()
			if time.Since(c.idleAt) >= timeout || !c.live.alive() {
				c.close()
				continue
			}
			c.reused = true
			return c, nil
		}
	}
	return p.dial(ctx)
}

// dial connects on a goroutine of its own that ends with the dial: name
// resolution and connecting run deep, and on the caller's goroutine they
// would grow its stack to 16 KiB for as long as the exchange that follows
// (a stream: minutes) and the connection's next ones. A new connection
// costs that goroutine; a reused one nothing.
func (p *hostPool) dial(ctx context.Context) (*conn, error) {
	dial := p.t.DialContext
	if dial == nil {
		dial = defaultDialer.DialContext
	}
	type dialed struct {
		nc  net.Conn
		err error
	}
	ch := make(chan dialed, 1)
	go func() {
		nc, err := dial(ctx, "tcp", p.key)
		ch <- dialed{nc, err}
	}()
	d := <-ch
	nc, err := d.nc, d.err
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("h1client: dial %s: %w (%v)", p.key, ctx.Err(), err)
		}
		return nil, fmt.Errorf("h1client: dial %s: %w", p.key, err)
	}
	return newConn(nc, p, p.t.readBufferSize()), nil
}

// put makes c idle. Over the per-host bound, c is closed instead.
func (p *hostPool) put(c *conn) {
	c.park() // an idle conn holds no read buffer; the body's end left none buffered
	c.idleAt = time.Now()
	max := p.t.maxIdlePerHost()
	p.mu.Lock()
	if len(p.idle) >= max {
		p.mu.Unlock()
		c.close()
		return
	}
	p.idle = append(p.idle, c)
	if !p.armed {
		p.armed = true
		if p.timer == nil {
			p.timer = time.AfterFunc(p.t.idleTimeout(), p.expire)
		} else {
			p.timer.Reset(p.t.idleTimeout())
		}
	}
	p.mu.Unlock()
}

// expire closes the connections idle for longer than IdleConnTimeout and
// re-arms the timer for the oldest one left. One timer serves the whole host.
func (p *hostPool) expire() {
	timeout := p.t.idleTimeout()
	now := time.Now()
	var stale []*conn
	p.mu.Lock()
	i := 0
	for i < len(p.idle) && now.Sub(p.idle[i].idleAt) >= timeout {
		i++
	}
	if i > 0 {
		stale = append(stale, p.idle[:i]...)
		n := copy(p.idle, p.idle[i:])
		clear(p.idle[n:])
		p.idle = p.idle[:n]
	}
	if len(p.idle) > 0 {
		p.timer.Reset(p.idle[0].idleAt.Add(timeout).Sub(now))
	} else {
		p.armed = false
	}
	p.mu.Unlock()
	for _, c := range stale {
		c.close()
	}
}

func (p *hostPool) closeIdle() {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	if p.timer != nil {
		p.timer.Stop()
	}
	p.armed = false
	p.mu.Unlock()
	for _, c := range idle {
		c.close()
	}
}
