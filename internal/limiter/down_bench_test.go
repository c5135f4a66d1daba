package limiter

import (
	"net"
	"strconv"
	"testing"

	"github.com/tollgate/tollgate/internal/limit"
)

// closedAddr is a local address that refuses connections.
func closedAddr(tb testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// silentAddr is a local address that takes connections and never answers,
// as a Redis that hangs does.
func silentAddr(tb testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	return ln.Addr().String()
}

// BenchmarkAdmitRedisDown is the time one limited request spends on the
// limiter while Redis is away, with on_error fail_open: refusing
// connections or hanging, for the request that finds it away (first) and
// for those after it.
func BenchmarkAdmitRedisDown(b *testing.B) {
	s := []Scope{keyScope("bench", limit.Limits{RPM: 1 << 40})}
	limiter := func(b *testing.B, addr string) *Limiter {
		r, err := newRedis("redis://"+addr+"/0", "tgbench:", LeaseTTL, 0, 0)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { r.close() })
		return New(r, Options{FailOpen: true})
	}
	for _, away := range []struct {
		name string
		addr func(testing.TB) string
	}{{"refused", closedAddr}, {"silent", silentAddr}} {
		b.Run(away.name+"/first", func(b *testing.B) {
			addr := away.addr(b)
			for b.Loop() {
				if _, err := limiter(b, addr).Admit(ctx, &Request{ID: "1", Scopes: s}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(away.name+"/after", func(b *testing.B) {
			l := limiter(b, away.addr(b))
			l.Admit(ctx, &Request{ID: "0", Scopes: s})
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				if _, err := l.Admit(ctx, &Request{ID: strconv.Itoa(i), Scopes: s}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
