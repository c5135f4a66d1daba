package formdata

import (
	"context"
	"io"
	"strings"
	"testing"
)

// BenchmarkBody re-encodes a 10 MB file part: streamed when the model field
// comes first, replayed from the spill file when it comes after.
func BenchmarkBody(b *testing.B) {
	data := strings.Repeat("0123456789abcdef", 10<<20/16)
	for _, bc := range []struct {
		name string
		body string
	}{
		{"model first", encode(b, field("model", "whisper-1"), file("file", "a.mp3", "audio/mpeg", data))},
		{"model after file", encode(b, file("file", "a.mp3", "audio/mpeg", data), field("model", "whisper-1"))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			lim := Limits{Dir: b.TempDir()}
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.body)))
			for b.Loop() {
				f, err := Read(context.Background(), strings.NewReader(bc.body), testBoundary, "model", lim)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.Copy(io.Discard, f.Body("model", "whisper-large")); err != nil {
					b.Fatal(err)
				}
				f.Close()
			}
		})
	}
}
