//go:build unix

package storetest

import (
	"syscall"
	"time"
)

// CPUTime is the CPU time (user and system) the process has used so
// far; 0 where the system does not tell.
func CPUTime() time.Duration {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
