package formdata

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"os"
	"runtime"
	"testing"
)

// heapPeak samples the heap as bytes flow through it.
type heapPeak struct {
	r      io.Reader
	n      int64
	peak   uint64
	sample int64
}

func (h *heapPeak) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	h.n += int64(n)
	if h.n >= h.sample {
		h.sample = h.n + 4<<20
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		h.peak = max(h.peak, m.HeapInuse)
	}
	return n, err
}

// TestLargeFileMemory passes a 100 MB file part through, made by a
// generator rather than held in memory, and checks that the process does not
// grow with it: the part goes to the spill file when the model field comes
// after it, and straight through when it comes first.
func TestLargeFileMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("100 MB through the parser")
	}
	const size = 100 << 20
	for _, modelFirst := range []bool{false, true} {
		name := map[bool]string{false: "model after file", true: "model first"}[modelFirst]
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			var head, tail bytes.Buffer
			mw := multipart.NewWriter(&head)
			mw.SetBoundary(testBoundary)
			if modelFirst {
				mw.WriteField("model", "whisper-1")
			}
			mw.CreateFormFile("file", "long.wav")
			mw = multipart.NewWriter(&tail)
			mw.SetBoundary(testBoundary)
			if !modelFirst {
				// A fresh writer's first boundary lacks the CRLF that
				// ends the file's contents; Close writes its own.
				tail.WriteString("\r\n")
				mw.WriteField("model", "whisper-1")
			}
			mw.Close()
			in := sha256.New()
			gen := io.TeeReader(io.LimitReader(rand.NewChaCha8([32]byte{1}), size), in)
			body := io.MultiReader(&head, gen, &tail)

			runtime.GC()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			src := &heapPeak{r: body}
			f, err := Read(context.Background(), src, testBoundary, "model", Limits{Memory: 1 << 20, Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			files, _ := os.ReadDir(dir)
			if modelFirst != (len(files) == 0) {
				t.Errorf("spill files %v", files)
			}
			out := &heapPeak{r: f.Body("model", "whisper-large")}
			mr := multipart.NewReader(out, f.Boundary())
			got := sha256.New()
			var model string
			for {
				p, err := mr.NextPart()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if p.FormName() == "model" {
					b, _ := io.ReadAll(p)
					model = string(b)
					continue
				}
				if _, err := io.Copy(got, p); err != nil {
					t.Fatal(err)
				}
			}
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			if !bytes.Equal(got.Sum(nil), in.Sum(nil)) {
				t.Error("the file's contents changed on the way")
			}
			if model != "whisper-large" {
				t.Errorf("model = %q", model)
			}
			if files, _ := os.ReadDir(dir); modelFirst != (len(files) == 0) {
				t.Errorf("spill files %v", files)
			}
			peak := max(src.peak, out.peak, after.HeapInuse)
			growth := int64(peak) - int64(before.HeapInuse)
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%d MB passed: heap in use grew by at most %.2f MB, %.2f MB allocated in all, Len %d",
				size>>20, float64(growth)/(1<<20), float64(alloc)/(1<<20), f.Len())
			if growth > 8<<20 {
				t.Errorf("heap grew by %d bytes", growth)
			}
			if alloc > 16<<20 {
				t.Errorf("%d bytes allocated", alloc)
			}
			f.Close()
			assertEmpty(t, dir)
		})
	}
}
