package gateway

import "time"

// SetPingInterval changes the keep-alive interval for tests and returns the old one.
func SetPingInterval(d time.Duration) time.Duration {
	old := pingInterval
	pingInterval = d
	return old
}
