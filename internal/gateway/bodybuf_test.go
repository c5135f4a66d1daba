package gateway

import "testing"

func TestBodyBufReturnsOnlyWhenAllReleased(t *testing.T) {
	bb := newBodyBuf(5000)
	if len(bb.b) != 5000 || cap(bb.b) != 8192 {
		t.Fatalf("len %d cap %d, want 5000 in an 8 KiB class", len(bb.b), cap(bb.b))
	}
	releaseReader := bb.hold()
	bb.release() // the handler is done; a reader still holds it
	if got := newBodyBuf(5000); got == bb {
		t.Fatal("buffer reused while a reader still held it")
	}
	releaseReader()
	releaseReader() // idempotent
	if bb.refs.Load() != 0 {
		t.Fatalf("refs = %d after all releases", bb.refs.Load())
	}
	big := newBodyBuf(5 << 20)
	if big.class != 0 || len(big.b) != 5<<20 {
		t.Errorf("large body pooled: class %d", big.class)
	}
	big.release()
}

// The package's tests run with released buffers poisoned (export_test.go),
// so that a body read after it was given back cannot pass unnoticed.
func TestReleasedBodyIsPoisoned(t *testing.T) {
	bb := newBodyBuf(3000)
	b := bb.b
	copy(b, `{"model":"m"}`)
	bb.release()
	for i, c := range b[:cap(b)] {
		if c != 0xFF {
			t.Fatalf("byte %d of a released body is %#x, want the poison 0xFF", i, c)
		}
	}
}
