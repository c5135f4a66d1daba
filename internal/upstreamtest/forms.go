package upstreamtest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// FormReceived is a multipart request as a FormServer saw it: its fields,
// and of its file part the name, size and SHA-256 (the file itself is
// not kept: a test may upload hundreds of megabytes).
type FormReceived struct {
	Path, ContentType string
	Header            http.Header
	Fields            map[string]string
	FileName          string
	FileSize          int64
	FileSHA256        string
}

// FormServer is a fake of OpenAI's multipart endpoints
// (/audio/transcriptions, /audio/translations, /images/edits) that reads
// each form as a stream, as the real API does.
type FormServer struct {
	*httptest.Server
	mu       sync.Mutex
	received []FormReceived
}

// NewForms starts a FormServer. Its answers: a transcription's text with
// usage of type duration (one second a 16 kB of audio, whisper-*) or
// tokens (other models), verbose_json with a duration, text for
// response_format text; an image edit's images with gpt-image's usage.
func NewForms() *FormServer {
	s := &FormServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Requests returns what was received, in order.
func (s *FormServer) Requests() []FormReceived {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]FormReceived(nil), s.received...)
}

func (s *FormServer) serve(w http.ResponseWriter, r *http.Request) {
	rec := FormReceived{Path: r.URL.Path, ContentType: r.Header.Get("Content-Type"), Header: r.Header.Clone(), Fields: map[string]string{}}
	mr, err := r.MultipartReader()
	if err != nil {
		writeJSON(w, 400, map[string]any{"error": map[string]any{"message": "Could not parse multipart form", "type": "invalid_request_error"}})
		return
	}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			writeJSON(w, 400, map[string]any{"error": map[string]any{"message": "Could not parse multipart form: " + err.Error(), "type": "invalid_request_error"}})
			return
		}
		if p.FileName() != "" {
			h := sha256.New()
			n, err := io.Copy(h, p)
			if err != nil {
				return
			}
			rec.FileName, rec.FileSize, rec.FileSHA256 = p.FileName(), n, hex.EncodeToString(h.Sum(nil))
			continue
		}
		v, _ := io.ReadAll(io.LimitReader(p, 1<<20))
		rec.Fields[p.FormName()] = string(v)
	}
	s.mu.Lock()
	s.received = append(s.received, rec)
	s.mu.Unlock()
	model := rec.Fields["model"]
	if model == "" || rec.FileName == "" {
		writeJSON(w, 400, map[string]any{"error": map[string]any{"message": "model and file are required", "type": "invalid_request_error"}})
		return
	}
	seconds := max(1, rec.FileSize/16000)
	switch {
	case strings.HasSuffix(rec.Path, "/images/edits"):
		writeJSON(w, 200, map[string]any{"created": 1764000000, "data": []any{map[string]any{"b64_json": "ZWRpdGVk"}},
			"usage": map[string]any{"input_tokens": 700, "output_tokens": 1056, "total_tokens": 1756}})
	case rec.Fields["response_format"] == "text":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "Hello from the audio.\n")
	case rec.Fields["response_format"] == "verbose_json":
		writeJSON(w, 200, map[string]any{"task": "transcribe", "language": "english", "duration": float64(seconds) - 0.5, "text": "Hello from the audio."})
	case strings.HasPrefix(model, "whisper"):
		writeJSON(w, 200, map[string]any{"text": "Hello from the audio.", "usage": map[string]any{"type": "duration", "seconds": seconds}})
	default:
		writeJSON(w, 200, map[string]any{"text": "Hello from the audio.",
			"usage": map[string]any{"type": "tokens", "input_tokens": 120, "output_tokens": 6, "total_tokens": 126}})
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}
