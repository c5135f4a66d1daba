//go:build !unix

package storetest

import "time"

// CPUTime is the CPU time the process has used so far; 0 where the
// system does not tell, as here.
func CPUTime() time.Duration { return 0 }
