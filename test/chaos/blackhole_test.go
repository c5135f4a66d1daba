package chaos

import (
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"
)

// blackhole returns a loopback address where connecting times out: a
// socket listening with a backlog of zero that never accepts, its queue
// filled by connections held open, so that further SYNs are dropped.
func blackhole(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
	for i := 0; i < 8; i++ { // fill the accept queue
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err != nil {
			return addr // the queue is full: connects now time out
		}
		t.Cleanup(func() { c.Close() })
	}
	t.Skip("could not make a loopback address where connecting times out")
	return ""
}

func TestBlackhole(t *testing.T) {
	addr := blackhole(t)
	start := time.Now()
	if _, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
		t.Fatal("connected")
	} else if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		t.Fatalf("want a timeout, got %v", err)
	}
	t.Logf("connect timed out after %s", time.Since(start))
}
