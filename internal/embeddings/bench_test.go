package embeddings

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func BenchmarkParse(b *testing.B) {
	r := &Request{Model: "text-embedding-3-small", Format: "float"}
	for i := range 100 {
		r.Inputs = append(r.Inputs, Input{Text: "document " + strconv.Itoa(i) + ": " + strings.Repeat("the quick brown fox jumps over the lazy dog ", 8)})
	}
	body := requestBody(r)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(body); err != nil {
			b.Fatal(err)
		}
	}
}

// benchVectors is an answer's worth: 100 embeddings of 1536 values.
func benchVectors() [][]float32 {
	rng := rand.New(rand.NewPCG(3, 4))
	vecs := make([][]float32, 100)
	for i := range vecs {
		vecs[i] = make([]float32, 1536)
		for j := range vecs[i] {
			vecs[i][j] = float32(rng.NormFloat64() * 0.03)
		}
	}
	return vecs
}

func BenchmarkEncode(b *testing.B) {
	vecs := benchVectors()
	for _, format := range []string{"float", "base64"} {
		b.Run(format, func(b *testing.B) {
			var dst []byte
			b.ReportAllocs()
			for b.Loop() {
				dst = Encode(dst[:0], vecs, "text-embedding-3-small", format, 1000)
			}
			b.SetBytes(int64(len(dst)))
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	vecs := benchVectors()
	for _, format := range []string{"float", "base64"} {
		body := Encode(nil, vecs, "text-embedding-3-small", format, 1000)
		b.Run(format, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := Decode(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
