package clock

import (
	"os"
	"testing"
	"time"
)

func TestNowFollowsTheEnvironment(t *testing.T) {
	want := time.Now()
	if v, err := time.Parse(time.RFC3339Nano, os.Getenv(Env)); err == nil {
		want = v // the suite runs with the clock moved
	}
	// Now is at or after the instant it started from, and not by much:
	// the test binary started moments ago.
	if got := Now(); got.Before(want.Add(-time.Minute)) || got.After(want.Add(10*time.Minute)) {
		t.Fatalf("Now() = %s, want close to %s", got, want)
	}
}

func TestFromEnv(t *testing.T) {
	t.Setenv(Env, "")
	if d := fromEnv(); d != 0 {
		t.Errorf("unset: offset %s", d)
	}
	t.Setenv(Env, "2028-02-29T23:59:59Z")
	d := fromEnv()
	got := time.Now().Add(d)
	if want := time.Date(2028, 2, 29, 23, 59, 59, 0, time.UTC); got.Sub(want).Abs() > time.Second {
		t.Errorf("moved clock reads %s, want %s", got, want)
	}
	t.Setenv(Env, "tomorrow")
	defer func() {
		if recover() == nil {
			t.Error("a malformed value was accepted")
		}
	}()
	fromEnv()
}

func TestDurationsStayExact(t *testing.T) {
	t0, s0 := Now(), time.Now()
	time.Sleep(10 * time.Millisecond)
	if d := Now().Sub(t0); d < 10*time.Millisecond || d > time.Minute {
		t.Errorf("between two Now values: %s", d)
	}
	if d := time.Since(s0); d < 10*time.Millisecond || d > time.Minute {
		t.Errorf("between two system-clock values: %s", d)
	}
	// Moved puts a system-clock origin on the process's clock.
	if d := Now().Sub(Moved(s0)); d < 10*time.Millisecond || d > time.Minute {
		t.Errorf("Now() - Moved(origin) = %s", d)
	}
}
