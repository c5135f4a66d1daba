// Package clock is tollgate's one source of wall-clock time.
//
// Everything that turns "now" into a date (a budget period, a key's expiry,
// a ledger timestamp, a usage query's range) asks Now, never time.Now, so
// that the whole process can be moved in time: with TOLLGATE_TEST_CLOCK set
// to an RFC 3339 instant, the process's clock starts at that instant and
// runs on from there. The test suite runs again with it set to month ends, a
// leap day and 23:59:59 UTC, which shows any test that passes only on the
// day or at the hour it was written.
//
// Durations: Now's monotonic reading is moved with it, so a duration
// between two Now values is exact, and one between a Now value and the
// system clock (time.Since, time.Until) is off by the offset. Code that
// measures durations takes both ends from time.Now (or both from Now); it
// turns such an origin into a date with Moved.
package clock

import (
	"fmt"
	"os"
	"time"
)

// Env names the variable that moves the process's clock.
const Env = "TOLLGATE_TEST_CLOCK"

var offset = fromEnv()

func fromEnv() time.Duration {
	v := os.Getenv(Env)
	if v == "" {
		return 0
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		// A mistyped value must not run the suite on the real clock
		// while claiming to have moved it.
		panic(fmt.Sprintf("%s=%q: want an RFC 3339 time such as 2028-02-29T23:59:59Z: %v", Env, v, err))
	}
	return time.Until(t)
}

// Now is the current time, moved by TOLLGATE_TEST_CLOCK when it is set.
func Now() time.Time {
	if offset == 0 {
		return time.Now()
	}
	return time.Now().Add(offset)
}

// Moved turns an instant read from the system clock (time.Now) into the
// process's clock.
func Moved(t time.Time) time.Time {
	if offset == 0 {
		return t
	}
	return t.Add(offset)
}

// Offset is how far Now is from the system clock: zero unless
// TOLLGATE_TEST_CLOCK is set. Clocks kept elsewhere (Redis's TIME) are
// moved by the same amount.
func Offset() time.Duration { return offset }
