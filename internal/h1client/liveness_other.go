//go:build !linux

package h1client

import "net"

// liveness has no non-blocking peek here: idle connections are assumed alive,
// and a failure on reuse is left to the retry in RoundTrip.
type liveness struct{}

func (l *liveness) init(net.Conn, func()) {}

// wait does not wait: the read that follows does, with its buffer.
func (l *liveness) wait() {}

func (l *liveness) alive() bool { return true }
