//go:build linux

package h1client

import (
	"net"
	"syscall"
	"unsafe"
)

// liveness peeks at an idle connection's socket without blocking, to catch a
// server that closed it (or wrote to it unasked) while it sat in the pool.
type liveness struct {
	raw  syscall.RawConn
	peek func(fd uintptr) bool // built once per conn so that a check does not allocate
	buf  [1]byte
	ok   bool
}

func (l *liveness) init(nc net.Conn) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return
	}
	l.raw = raw
	l.peek = func(fd uintptr) bool {
		_, _, errno := syscall.Syscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&l.buf[0])), 1,
			syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
		// 0 bytes: the peer closed; data: bytes nobody asked for. Only
		// "would block" means an idle, healthy connection.
		l.ok = errno == syscall.EAGAIN || errno == syscall.EWOULDBLOCK
		return true // never wait for readiness
	}
}

// alive reports whether the idle connection may be used. Connections that
// expose no file descriptor are assumed alive.
func (l *liveness) alive() bool {
	if l.raw == nil {
		return true
	}
	l.ok = false
	if err := l.raw.Read(l.peek); err != nil {
		return false
	}
	return l.ok
}
