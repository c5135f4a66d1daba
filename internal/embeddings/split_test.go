package embeddings

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		n, max int
		want   [][2]int
	}{
		{0, 100, nil},
		{-1, 100, nil},
		{1, 100, [][2]int{{0, 1}}},
		{100, 100, [][2]int{{0, 100}}},
		{101, 100, [][2]int{{0, 100}, {100, 101}}},
		{200, 100, [][2]int{{0, 100}, {100, 200}}},
		{5, 1, [][2]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}}},
		{7, 3, [][2]int{{0, 3}, {3, 6}, {6, 7}}},
		{5, 0, [][2]int{{0, 5}}},
		{5, -3, [][2]int{{0, 5}}},
		{192, 96, [][2]int{{0, 96}, {96, 192}}},
	}
	for _, tt := range tests {
		if got := Split(tt.n, tt.max); !cmp.Equal(got, tt.want) {
			t.Errorf("Split(%d, %d) = %v, want %v", tt.n, tt.max, got, tt.want)
		}
	}
}

func TestSplit2048By100(t *testing.T) {
	got := Split(MaxInputs, GeminiMaxBatch)
	if len(got) != 21 {
		t.Fatalf("%d batches, want 21", len(got))
	}
	next := 0
	for i, b := range got {
		if b[0] != next || b[1] <= b[0] || b[1]-b[0] > 100 {
			t.Fatalf("batch %d = %v after %d", i, b, next)
		}
		if i < 20 && b[1]-b[0] != 100 {
			t.Errorf("batch %d has %d inputs", i, b[1]-b[0])
		}
		next = b[1]
	}
	if next != MaxInputs || got[20] != [2]int{2000, 2048} {
		t.Errorf("last batch %v", got[20])
	}
}
