package embeddings

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"reflect"
	"strings"
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

func TestSplitInputs(t *testing.T) {
	text := func(n int) Input { return Input{Text: strings.Repeat("a", n)} }
	for _, c := range []struct {
		name          string
		inputs        []Input
		max, maxBytes int
		want          [][2]int
	}{
		{"no byte bound is Split", []Input{text(10), text(10), text(10)}, 2, 0, [][2]int{{0, 2}, {2, 3}}},
		{"bytes cut first", []Input{text(40), text(40), text(40)}, 10, 100, [][2]int{{0, 2}, {2, 3}}},
		{"count cuts first", []Input{text(1), text(1), text(1)}, 2, 100, [][2]int{{0, 2}, {2, 3}}},
		{"exactly the bound fits", []Input{text(50), text(50), text(1)}, 10, 100, [][2]int{{0, 2}, {2, 3}}},
		{"an input over the bound goes alone", []Input{text(10), text(500), text(10)}, 10, 100, [][2]int{{0, 1}, {1, 2}, {2, 3}}},
		{"tokens count 8 bytes each", []Input{{Tokens: make([]int64, 10)}, {Tokens: make([]int64, 10)}}, 10, 100, [][2]int{{0, 1}, {1, 2}}},
		{"none", nil, 10, 100, nil},
	} {
		if got := SplitInputs(c.inputs, c.max, c.maxBytes); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestWires(t *testing.T) {
	for model, want := range map[string]*Wire{
		"amazon.titan-embed-text-v2:0": Titan,
		"cohere.embed-english-v3":      Cohere,
		"us.cohere.embed-v4:0":         Cohere,
		"arn:aws:bedrock:us-east-1::foundation-model/amazon.titan-embed-text-v2:0": Titan,
		"anthropic.claude-sonnet-4-5-20250929-v1:0":                                nil,
	} {
		if got := BedrockWire(model); got != want {
			t.Errorf("BedrockWire(%q) = %v, want %v", model, got, want)
		}
	}
	if VertexWire("gemini-embedding-001") != VertexOne || VertexWire("text-embedding-005") != Vertex {
		t.Error("VertexWire: gemini-embedding models take one input a request, text-embedding ones many")
	}
}
