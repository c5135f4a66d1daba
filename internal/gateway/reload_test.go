package gateway

import (
	"sync"
	"testing"

	"github.com/tollgate/tollgate/internal/route"
)

func drainedNow(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// TestSwapKeepsRequestsOnTheirGeneration: a request holds the generation
// it started with; the old one reports drained when its last request
// ends, and at once when it had none.
func TestSwapKeepsRequestsOnTheirGeneration(t *testing.T) {
	first, second, third := &route.Table{}, &route.Table{}, &route.Table{}
	g := New(Options{Routes: first})
	held := g.acquire()
	drained := g.Swap(second, Limits{})
	if held.routes != first {
		t.Fatal("a request in flight changed routes")
	}
	if drainedNow(drained) {
		t.Fatal("drained while a request holds the old generation")
	}
	next := g.acquire()
	if next.routes != second {
		t.Fatal("a new request did not get the new routes")
	}
	held.release()
	if !drainedNow(drained) {
		t.Fatal("not drained after the last request ended")
	}
	next.release()
	if !drainedNow(g.Swap(third, Limits{})) {
		t.Error("a generation without requests is not drained at once")
	}
}

// TestSwapUnderLoad: with requests acquiring and releasing while
// generations are swapped, every retired generation drains.
func TestSwapUnderLoad(t *testing.T) {
	g := New(Options{Routes: &route.Table{}})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
					g.acquire().release()
				}
			}
		})
	}
	var retired []<-chan struct{}
	for range 200 {
		retired = append(retired, g.Swap(&route.Table{}, Limits{}))
	}
	close(stop)
	wg.Wait()
	for i, c := range retired {
		if !drainedNow(c) {
			t.Fatalf("generation %d never drained", i)
		}
	}
}
