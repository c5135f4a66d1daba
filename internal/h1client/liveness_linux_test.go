//go:build linux

package h1client

import (
	"io"
	"net"
	"syscall"
	"testing"
)

// A connection waiting for bytes holds no read buffer: it parks it in the
// transport's pool when nothing is there to read, and takes one back when
// bytes arrive, which then read as usual. A new one has none until then.
func TestWaitReadableParksBuffer(t *testing.T) {
	for _, tc := range []struct {
		name       string
		sentBefore bool // the bytes are there before the wait
		wantParked bool
	}{
		{"bytes at hand", true, false},
		{"bytes later", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			nc, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			srv, err := ln.Accept()
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			tr := &Transport{}
			c := newConn(nc, &hostPool{t: tr}, 4096)
			defer c.close()
			if c.br.Size() != 0 {
				t.Fatalf("a new conn has a %d-byte read buffer before any response, want none", c.br.Size())
			}
			c.unpark() // as after a response's head

			const msg = "data: {}\n\n"
			if tc.sentBefore {
				if _, err := io.WriteString(srv, msg); err != nil {
					t.Fatal(err)
				}
				// Wait until the bytes have reached the socket, without
				// reading them through c.
				buf := make([]byte, len(msg))
				err := c.live.raw.Read(func(fd uintptr) bool {
					n, _, err := syscall.Recvfrom(int(fd), buf, syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
					return err == nil && n == len(msg)
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			parkedSize := make(chan int, 1)
			c.live.block = func() {
				c.park()
				parkedSize <- c.br.Size()
				if _, err := io.WriteString(srv, msg); err != nil {
					t.Error(err)
				}
			}
			c.waitReadable()
			select {
			case size := <-parkedSize:
				if !tc.wantParked {
					t.Fatal("the buffer was parked with bytes at hand")
				}
				if size != 0 {
					t.Errorf("parked reader has a %d-byte buffer, want none", size)
				}
			default:
				if tc.wantParked {
					t.Fatal("the buffer was not parked while waiting")
				}
			}
			if c.br.Size() != 4096 {
				t.Errorf("reader buffer %d bytes after the wait, want 4096", c.br.Size())
			}
			got := make([]byte, len(msg))
			if _, err := io.ReadFull(c.br, got); err != nil || string(got) != msg {
				t.Errorf("read %q, %v; want %q", got, err, msg)
			}
		})
	}
}
