package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/store"
)

// TestTimingsSampleTheWholeWindow: Timings takes the newest records of
// each of 24 equal slices of the window, so a busy window is described
// from its start to its end, not by its last hour; records outside the
// window, of other keys or not usage are not read.
func TestTimingsSampleTheWholeWindow(t *testing.T) {
	ctx := context.Background()
	since := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	until := since.Add(24 * time.Hour)
	var recs []store.Request
	add := func(id string, at time.Time, key, endpoint string, latency float64) {
		recs = append(recs, store.Request{ID: id, Time: at, KeyID: key, ClientProtocol: "openai", Endpoint: endpoint,
			Model: "m", CanonicalModel: "m", Provider: "p", Lane: "passthrough", Status: 200,
			LatencyMS: latency, TTFBMS: latency / 2, OverheadMS: latency / 100})
	}
	// 300 records an hour; the latency is the hour: 0 ms to 23 ms.
	for h := range 24 {
		for i := range 300 {
			add(fmt.Sprintf("req_%02d_%03d", h, i), since.Add(time.Duration(h)*time.Hour+time.Duration(i)*12*time.Second), "key_a",
				"/v1/chat/completions", float64(h))
		}
	}
	add("req_before", since.Add(-time.Millisecond), "key_a", "/v1/chat/completions", 1000)
	add("req_at_end", until, "key_a", "/v1/chat/completions", 1000)
	add("req_models", since.Add(time.Hour), "key_a", "/v1/models", 1000)
	add("req_other_key", since.Add(2*time.Hour-time.Second), "key_b", "/v1/chat/completions", 500)
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			if err := s.InsertRequests(ctx, recs); err != nil {
				t.Fatal(err)
			}
			got, err := s.Timings(ctx, "key_a", since, until)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Latency) != 24*200 || len(got.TTFB) != len(got.Latency) || len(got.Overhead) != len(got.Latency) {
				t.Fatalf("%d samples, want 4800 (200 of each hour's 300)", len(got.Latency))
			}
			per := map[float64]int{}
			for _, l := range got.Latency {
				per[l]++
			}
			for h := range 24 {
				if per[float64(h)] != 200 {
					t.Errorf("hour %d: %d samples, want 200 (%v)", h, per[float64(h)], per)
				}
			}
			if p50, p95 := store.Percentile(got.Latency, .5), store.Percentile(got.Latency, .95); p50 != 11 || p95 != 22 {
				t.Errorf("p50 %v, p95 %v; want 11 and 22", p50, p95)
			}
			// Every key: key_b's record, the newest of its hour, is in.
			all, err := s.Timings(ctx, "", since, until)
			if err != nil {
				t.Fatal(err)
			}
			if all.Latency[len(all.Latency)-1] != 500 {
				t.Errorf("every key: the slowest is %v, want key_b's 500", all.Latency[len(all.Latency)-1])
			}
			// A quiet window is read whole.
			quiet, err := s.Timings(ctx, "key_a", since.Add(90*time.Minute), since.Add(150*time.Minute))
			if err != nil || len(quiet.Latency) != 300 {
				t.Errorf("an hour's window: %d samples, %v; want its 300 records", len(quiet.Latency), err)
			}
		})
	}
}
