package gateway_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// formsEnv is a gateway in front of a fake of OpenAI's multipart
// endpoints, with a ledger and a body limit of maxBody bytes.
func formsEnv(t *testing.T, maxBody int64) (*env, *upstreamtest.FormServer, *store.Store) {
	t.Helper()
	up := upstreamtest.NewForms()
	t.Cleanup(up.Close)
	e, db := ledgerEnv(t, fmt.Sprintf(`
server: { max_body_bytes: %d }
providers:
  - { name: oai, type: openai, base_url: "%s/v1", api_key: k }
  - { name: ant, type: anthropic, base_url: "%s", api_key: k }
models:
  - { name: whisper, targets: [ { provider: oai, model: whisper-1 } ], pricing: { per_second: "0.0001" } }
  - { name: transcribe, targets: [ { provider: oai, model: gpt-4o-transcribe } ], pricing: { input: "2.50", output: "10" } }
  - { name: image-edit, targets: [ { provider: oai, model: gpt-image-1 } ], pricing: { input: "5", output: "40" } }
  - { name: claude, targets: [ { provider: ant, model: claude-x } ] }
`, maxBody, up.URL, up.URL))
	return e, up, db
}

// formPart is one part of a test form: a field, or a file of size bytes
// drawn from seed.
type formPart struct {
	name, value string
	file        string
	size        int64
	seed        uint64
}

// fileBytes is the content of a test file: size pseudo-random bytes.
func fileBytes(size int64, seed uint64) io.Reader {
	return io.LimitReader(rand.NewChaCha8([32]byte{byte(seed)}), size)
}

// postForm streams a multipart form to the gateway (the file is never
// held whole) and returns the answer and the SHA-256 of the file sent.
func postForm(t *testing.T, e *env, path string, parts []formPart) (*http.Response, []byte, string) {
	t.Helper()
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	sum := sha256.New()
	go func() {
		for _, p := range parts {
			if p.file == "" {
				mw.WriteField(p.name, p.value)
				continue
			}
			w, err := mw.CreateFormFile(p.name, p.file)
			if err != nil {
				pw.CloseWithError(err)
				return
			}
			if _, err := io.Copy(io.MultiWriter(w, sum), fileBytes(p.size, p.seed)); err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		pw.CloseWithError(mw.Close())
	}()
	req, _ := http.NewRequest("POST", e.gw.URL+path, pr)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+masterKey)
	resp, err := e.gw.Client().Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, body, hex.EncodeToString(sum.Sum(nil))
}

// A transcription, a translation and an image edit pass through with
// their files byte for byte and the model field rewritten, whether the
// model comes before or after the file; their usage (seconds of audio,
// tokens) is recorded with its cost.
func TestFormsPassThrough(t *testing.T) {
	e, up, db := formsEnv(t, 64<<20)
	for _, c := range []struct {
		name, path    string
		parts         []formPart
		upstreamModel string
		input, output int64
		units         int64
		unit          string
		cost          int64
	}{
		{"whisper, model after the file", "/v1/audio/transcriptions",
			[]formPart{{name: "file", file: "speech.mp3", size: 3 << 20, seed: 1}, {name: "model", value: "whisper"}, {name: "language", value: "en"}},
			"whisper-1", 0, 0, 196, "second", 196 * 100_000},
		{"whisper verbose, model first", "/v1/audio/translations",
			[]formPart{{name: "model", value: "whisper"}, {name: "response_format", value: "verbose_json"}, {name: "file", file: "ré sumé \"1\".wav", size: 160_000, seed: 2}},
			"whisper-1", 0, 0, 10, "second", 10 * 100_000},
		{"gpt-4o-transcribe tokens", "/v1/audio/transcriptions",
			[]formPart{{name: "file", file: "a.m4a", size: 50_000, seed: 3}, {name: "model", value: "transcribe"}},
			"gpt-4o-transcribe", 120, 6, 0, "", 120*2500 + 6*10000},
		{"image edit", "/v1/images/edits",
			[]formPart{{name: "image", file: "cat.png", size: 200_000, seed: 4}, {name: "prompt", value: "add a hat"}, {name: "model", value: "image-edit"}},
			"gpt-image-1", 700, 1056, 1, "image", 700*5000 + 1056*40000},
	} {
		resp, body, sum := postForm(t, e, c.path, c.parts)
		if resp.StatusCode != 200 {
			t.Errorf("%s: %d %s", c.name, resp.StatusCode, body)
			continue
		}
		reqs := up.Requests()
		got := reqs[len(reqs)-1]
		if got.Path != c.path || got.Fields["model"] != c.upstreamModel || got.FileSHA256 != sum || got.Header.Get("Authorization") != "Bearer k" {
			t.Errorf("%s: upstream got %s model %q file %s (sent %s)", c.name, got.Path, got.Fields["model"], got.FileSHA256, sum)
		}
		for _, p := range c.parts {
			if p.file == "" && p.name != "model" && got.Fields[p.name] != p.value {
				t.Errorf("%s: field %s = %q, want %q", c.name, p.name, got.Fields[p.name], p.value)
			}
			if p.file != "" && got.FileName != p.file {
				t.Errorf("%s: file name %q, want %q", c.name, got.FileName, p.file)
			}
		}
		r := waitRecord(t, db, resp.Header.Get("Tollgate-Request-Id"))
		if r.Endpoint != c.path || r.Input != c.input || r.Output != c.output || r.Units != c.units || r.Unit != c.unit ||
			r.CostNanoUSD == nil || *r.CostNanoUSD != c.cost {
			t.Errorf("%s: record %+v (cost %v), want tokens %d/%d units %d %s cost %d", c.name, r, r.CostNanoUSD, c.input, c.output, c.units, c.unit, c.cost)
		}
	}
}

// A transcription answered as text says nothing of the audio's length:
// its cost is unknown, not 0.
func TestFormsTextAnswerUnpriced(t *testing.T) {
	e, _, db := formsEnv(t, 1<<20)
	resp, body, _ := postForm(t, e, "/v1/audio/transcriptions",
		[]formPart{{name: "model", value: "whisper"}, {name: "response_format", value: "text"}, {name: "file", file: "a.mp3", size: 32000, seed: 5}})
	if resp.StatusCode != 200 || string(body) != "Hello from the audio.\n" {
		t.Fatalf("%d %q", resp.StatusCode, body)
	}
	if r := waitRecord(t, db, resp.Header.Get("Tollgate-Request-Id")); r.CostNanoUSD != nil || r.Units != 0 {
		t.Errorf("a text transcription's record: cost %v units %d, want an unknown cost", r.CostNanoUSD, r.Units)
	}
}

// Forms the gateway refuses, in OpenAI's envelope, none reaching the
// upstream: not multipart, no model, a model whose target does not
// transcribe, a form past max_body_bytes, a compressed form.
func TestFormsRefused(t *testing.T) {
	e, up, _ := formsEnv(t, 1<<20)
	file := formPart{name: "file", file: "a.mp3", size: 1000, seed: 1}
	for _, c := range []struct {
		name   string
		parts  []formPart
		status int
		param  string
	}{
		{"no model", []formPart{file}, 400, "model"},
		{"unknown model", []formPart{file, {name: "model", value: "nope"}}, 404, "model"},
		{"not served", []formPart{file, {name: "model", value: "claude"}}, 400, "model"},
		{"too large", []formPart{{name: "file", file: "big.mp3", size: 2 << 20, seed: 1}, {name: "model", value: "whisper"}}, 413, ""},
	} {
		resp, body, _ := postForm(t, e, "/v1/audio/transcriptions", c.parts)
		if resp.StatusCode != c.status || gjson.GetBytes(body, "error.param").Str != c.param || !gjson.GetBytes(body, "error.message").Exists() {
			t.Errorf("%s: %d %s", c.name, resp.StatusCode, body)
		}
	}
	// Too large after its model was read, the form already on its way
	// upstream: still the client's 413, and no failure of the target
	// (six in a row would open its breaker for everyone).
	for range 6 {
		resp, body, _ := postForm(t, e, "/v1/audio/transcriptions", []formPart{{name: "model", value: "whisper"}, {name: "file", file: "big.mp3", size: 2 << 20, seed: 1}})
		if resp.StatusCode != 413 {
			t.Fatalf("too large after the model: %d %s", resp.StatusCode, body)
		}
	}
	resp, body, _ := postForm(t, e, "/v1/audio/transcriptions", []formPart{{name: "model", value: "whisper"}, file})
	if resp.StatusCode != 200 {
		t.Errorf("a good form after six too large: %d %s", resp.StatusCode, body)
	}
	resp = e.do("POST", "/v1/audio/transcriptions", `{"model":"whisper"}`, openAIAuth...)
	if body := readAll(t, resp.Body); resp.StatusCode != 400 || !strings.Contains(string(body), "multipart") {
		t.Errorf("a JSON body: %d %s", resp.StatusCode, body)
	}
	resp = e.do("POST", "/v1/audio/transcriptions", "x", append(openAIAuth, "Content-Type: multipart/form-data; boundary=b", "Content-Encoding: gzip")...)
	if body := readAll(t, resp.Body); resp.StatusCode != 415 {
		t.Errorf("a compressed form: %d %s", resp.StatusCode, body)
	}
	if n := len(up.Requests()); n != 1 { // the good one
		t.Errorf("%d refused forms reached the upstream whole", n-1)
	}
}

// A 100 MB transcription streams through without the process growing by
// more than a few MB, with its model after the file (kept aside on disk
// while the target is chosen) and before it (streamed at once).
func TestFormsLargeUploadMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 200 MB through loopback: go test without -short runs it")
	}
	e, up, _ := formsEnv(t, 200<<20)
	const size = 100 << 20
	for _, modelFirst := range []bool{false, true} {
		parts := []formPart{{name: "file", file: "long.wav", size: size, seed: 9}, {name: "model", value: "whisper"}}
		if modelFirst {
			parts[0], parts[1] = parts[1], parts[0]
		}
		runtime.GC()
		var base runtime.MemStats
		runtime.ReadMemStats(&base)
		var peak atomic.Uint64
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() { // the heap in use, sampled through the upload
			defer close(done)
			var m runtime.MemStats
			for {
				runtime.ReadMemStats(&m)
				if m.HeapInuse > peak.Load() {
					peak.Store(m.HeapInuse)
				}
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		}()
		resp, body, sum := postForm(t, e, "/v1/audio/transcriptions", parts)
		close(stop)
		<-done
		if resp.StatusCode != 200 {
			t.Fatalf("model first %v: %d %s", modelFirst, resp.StatusCode, body)
		}
		reqs := up.Requests()
		if got := reqs[len(reqs)-1]; got.FileSize != size || got.FileSHA256 != sum {
			t.Errorf("model first %v: upstream got %d bytes %s", modelFirst, got.FileSize, got.FileSHA256)
		}
		grew := int64(peak.Load()) - int64(base.HeapInuse)
		t.Logf("model first %v: heap in use grew %.1f MB at most while 100 MB went through", modelFirst, float64(grew)/(1<<20))
		if grew > 16<<20 {
			t.Errorf("model first %v: the heap grew by %d MB for a 100 MB upload", modelFirst, grew>>20)
		}
	}
}
