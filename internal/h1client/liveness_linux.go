//go:build linux

package h1client

import (
	"net"
	"syscall"
	"unsafe"
)

// liveness peeks at an idle connection's socket without blocking, to catch a
// server that closed it (or wrote to it unasked) while it sat in the pool.
//
// The same peek lets a reader wait for bytes without a buffer of its own:
// wait calls block (once) when it finds none, and waits for the socket to
// become readable.
type liveness struct {
	raw     syscall.RawConn
	peek    func(fd uintptr) bool // built once per conn so that a check does not allocate
	await   func(fd uintptr) bool // likewise, for wait
	block   func()
	buf     [1]byte
	ok      bool
	blocked bool
}

func (l *liveness) init(nc net.Conn, block func()) {
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
		errno := l.peekByte(fd)
		// 0 bytes: the peer closed; data: bytes nobody asked for. Only
		// "would block" means an idle, healthy connection.
		l.ok = errno == syscall.EAGAIN || errno == syscall.EWOULDBLOCK
		return true // never wait for readiness
	}
	l.block = block
	l.await = func(fd uintptr) bool {
		if errno := l.peekByte(fd); errno != syscall.EAGAIN && errno != syscall.EWOULDBLOCK {
			return true // bytes, the peer's close or an error: the read will tell
		}
		if !l.blocked {
			l.blocked = true
			l.block()
		}
		return false
	}
}

// wait returns once the connection has bytes to read, has been closed by
// the peer, or fails (a deadline passed, the conn closed), having called
// block if it found nothing to read at first.
func (l *liveness) wait() {
	if l.raw == nil {
		return
	}
	l.blocked = false
	l.raw.Read(l.await) // an error is the next read's to report
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

// peekByte peeks at the socket's next byte without blocking.
func (l *liveness) peekByte(fd uintptr) syscall.Errno {
	_, _, errno := syscall.Syscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&l.buf[0])), 1,
		syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
	return errno
}
