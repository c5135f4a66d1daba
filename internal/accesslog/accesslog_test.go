package accesslog

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func TestWriterFlushesPeriodicallyAndOnClose(t *testing.T) {
	var out syncBuf
	w := New(&out)
	w.Write([]byte("one\n"))
	if out.String() != "" {
		t.Fatalf("written before a flush: %q", out.String())
	}
	deadline := time.Now().Add(5 * time.Second)
	for out.String() != "one\n" {
		if time.Now().After(deadline) {
			t.Fatalf("not flushed within 5s: %q", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	w.Write([]byte("two\n"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if out.String() != "one\ntwo\n" {
		t.Errorf("after Close: %q", out.String())
	}
}

func TestWriterConcurrentLinesStayWhole(t *testing.T) {
	var out syncBuf
	w := New(&out)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 500; j++ {
				w.Write([]byte(strings.Repeat("x", 100) + "\n"))
			}
		}()
	}
	wg.Wait()
	w.Close()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 4000 {
		t.Fatalf("%d lines, want 4000", len(lines))
	}
	for _, l := range lines {
		if len(l) != 100 {
			t.Fatalf("torn line %q", l)
		}
	}
}
