package cli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"
)

// TestIdleReleaseAtBurstEnd: memory is released at the first interval
// without a request after one with some, once per burst.
func TestIdleReleaseAtBurstEnd(t *testing.T) {
	tests := []struct {
		name     string
		requests []int  // requests started in each interval
		want     []bool // release at the tick that ends it
	}{
		{"idle from the start", []int{0, 0, 0}, []bool{false, false, false}},
		{"one burst", []int{5, 3, 0, 0}, []bool{false, false, true, false}},
		{"steady load", []int{2, 2, 2, 2}, []bool{false, false, false, false}},
		{"two bursts", []int{1, 0, 0, 4, 0}, []bool{false, true, false, false, true}},
		{"a single request", []int{1, 0}, []bool{false, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var i idleRelease
			h := i.wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
			for k, n := range tt.requests {
				for range n {
					h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
				}
				if got := i.tick(); got != tt.want[k] {
					t.Errorf("interval %d (%d requests): release %v, want %v", k, n, got, tt.want[k])
				}
			}
		})
	}
}

// TestIdleReleaseRun: run releases on the ticks that end a burst and
// returns when its context ends.
func TestIdleReleaseRun(t *testing.T) {
	var i idleRelease
	ticks := make(chan time.Time)
	released := make(chan struct{}, 4)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		i.run(ctx, ticks, func() { released <- struct{}{} })
		close(done)
	}()
	i.started.Add(1)
	ticks <- time.Time{} // the interval with the request
	ticks <- time.Time{} // the one without: the burst is over
	ticks <- time.Time{} // still idle: nothing more to release
	cancel()
	<-done
	if n := len(released); n != 1 {
		t.Errorf("released %d times, want once", n)
	}
}

var burstSink []byte

// BenchmarkReleaseMemory is what the end of a burst costs: a collection
// of a heap of about tollgate's size (a few MiB live) and returning what
// is free.
func BenchmarkReleaseMemory(b *testing.B) {
	b.ReportAllocs()
	live := make([][]byte, 0, 5<<10)
	for range 5 << 10 {
		live = append(live, make([]byte, 1<<10))
	}
	for b.Loop() {
		b.StopTimer()
		for range 256 {
			burstSink = make([]byte, 32<<10) // a burst's garbage
		}
		b.StartTimer()
		releaseMemory()
	}
	runtime.KeepAlive(live)
}
