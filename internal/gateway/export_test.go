package gateway

import "time"

// SetPingInterval changes the keep-alive interval for tests and returns the old one.
func SetPingInterval(d time.Duration) time.Duration {
	old := pingInterval
	pingInterval = d
	return old
}

// Every test of the package reads request bodies through poisoned
// buffers: a body used after it was given back fails the test reading it.
func init() { poisonReleased = true }
