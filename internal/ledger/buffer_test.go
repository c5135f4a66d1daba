package ledger

import (
	"testing"

	"github.com/tollgate/tollgate/internal/store"
)

// TestBufferKeepsBoundedRoom checks the buffer's memory policy: once
// emptied it keeps its array for the next records when that holds at
// most two batches, lets a spike's larger array go, moves the few
// records left after a write to the front, and holds no taken record.
func TestBufferKeepsBoundedRoom(t *testing.T) {
	for _, tc := range []struct {
		name           string
		record, taken  int
		wantLeft       int
		wantKept       bool // the array is kept (else let go)
		wantSameMemory bool // recording as many again appends in place
	}{
		{name: "a batch", record: 4, taken: 4, wantKept: true, wantSameMemory: true},
		{name: "two batches", record: 8, taken: 8, wantKept: true, wantSameMemory: true},
		{name: "a spike", record: 20, taken: 20, wantKept: false},
		{name: "a batch of two taken", record: 6, taken: 4, wantLeft: 2, wantKept: true, wantSameMemory: true},
		{name: "a spike partly taken", record: 20, taken: 12, wantLeft: 8, wantKept: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Recorder{o: Options{BatchSize: 4, BufferSize: 100}, wake: make(chan struct{}, 1)}
			for i := range tc.record {
				r.RecordRow(rec(i))
			}
			before := cap(r.mem)
			r.take(tc.taken)
			if len(r.buf) != tc.wantLeft {
				t.Fatalf("%d records left, want %d", len(r.buf), tc.wantLeft)
			}
			for i, got := range r.buf {
				if want := rec(tc.taken + i).ID; got.ID != want {
					t.Fatalf("record %d is %q, want %q", i, got.ID, want)
				}
			}
			if kept := cap(r.mem) > 0; kept != tc.wantKept {
				t.Fatalf("array kept = %v (capacity %d of %d), want %v", kept, cap(r.mem), before, tc.wantKept)
			}
			if tc.wantLeft > 0 && cap(r.mem) <= r.keptBuffer() && &r.buf[0] != &r.mem[:1][0] {
				t.Fatal("the records left are not at the front of the array")
			}
			// The buffer is the window [off, off+len) of the array.
			all, off := r.mem[:cap(r.mem)], cap(r.mem)-cap(r.buf)
			for i, slot := range all {
				if (i < off || i >= off+len(r.buf)) && slot != (store.Request{}) {
					t.Fatalf("slot %d outside the buffer still holds record %q", i, slot.ID)
				}
			}
			if tc.wantSameMemory {
				mem := &r.mem[:1][0]
				for i := range tc.taken {
					r.RecordRow(rec(1000 + i))
				}
				if &r.mem[:1][0] != mem {
					t.Fatal("recording into the emptied buffer allocated a new array")
				}
			}
		})
	}
}
