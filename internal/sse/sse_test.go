package sse

import (
	"bytes"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want int
	}{
		{"empty", "", 0},
		{"incomplete line", "data: x", 0},
		{"line without blank", "data: x\n", 0},
		{"lf", "data: x\n\nmore", 9},
		{"crlf", "data: x\r\n\r\nmore", 11},
		{"lone cr", "data: x\r\rmore", 9},
		{"cr at end waits", "data: x\r\n\r", 0},
		{"mixed", "event: a\r\ndata: x\n\r\n", 20},
		{"comment event", ": ping\n\n", 8},
		{"two events", "data: 1\n\ndata: 2\n\n", 9},
		{"leading blank", "\ndata: 1\n\n", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Split([]byte(tc.in)); got != tc.want {
				t.Errorf("Split(%q) = %d, want %d", tc.in, got, tc.want)
			}
		})
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		wantName string
		wantData string
		noData   bool
	}{
		{"named", "event: message_start\ndata: {\"a\":1}\n\n", "message_start", `{"a":1}`, false},
		{"no space", "event:ping\ndata:{}\n\n", "ping", `{}`, false},
		{"only one space stripped", "data:  x\n\n", "", " x", false},
		{"multi data", "data: a\ndata: b\r\ndata: c\n\n", "", "a\nb\nc", false},
		{"comment ignored", ": keepalive\ndata: [DONE]\n\n", "", "[DONE]", false},
		{"id and retry ignored", "id: 7\nretry: 10\ndata: x\n\n", "", "x", false},
		{"no data", "event: ping\n\n", "ping", "", true},
		{"empty data", "data\n\n", "", "", false},
		{"field without colon", "data\ndata: x\n\n", "", "\nx", false},
	}
	var f Fields
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f.Parse([]byte(tc.in))
			if string(f.Name) != tc.wantName {
				t.Errorf("Name = %q, want %q", f.Name, tc.wantName)
			}
			if tc.noData != (f.Data == nil) {
				t.Errorf("Data nil = %v, want %v", f.Data == nil, tc.noData)
			}
			if string(f.Data) != tc.wantData {
				t.Errorf("Data = %q, want %q", f.Data, tc.wantData)
			}
		})
	}
}

func TestAppendEvent(t *testing.T) {
	got := AppendEvent(nil, "ping", []byte(`{"type":"ping"}`))
	if want := "event: ping\ndata: {\"type\":\"ping\"}\n\n"; string(got) != want {
		t.Errorf("AppendEvent = %q, want %q", got, want)
	}
	got = AppendEvent(nil, "", []byte("[DONE]"))
	if want := "data: [DONE]\n\n"; string(got) != want {
		t.Errorf("AppendEvent = %q, want %q", got, want)
	}
}

// splitAll splits a stream fed in pieces of size n and returns the events.
func splitAll(stream []byte, n int) []string {
	var buf []byte
	var out []string
	for len(stream) > 0 || len(buf) > 0 {
		k := min(n, len(stream))
		buf = append(buf, stream[:k]...)
		stream = stream[k:]
		for {
			m := Split(buf)
			if m == 0 {
				break
			}
			out = append(out, string(buf[:m]))
			buf = buf[m:]
		}
		if k == 0 {
			break
		}
	}
	return out
}

// Events must come out the same wherever the network splits the bytes.
func TestSplitChunkBoundaryInvariance(t *testing.T) {
	stream := []byte("event: a\ndata: 1\n\n: ping\n\nevent: b\r\ndata: 2\r\n\r\ndata: 3\r\rdata: [DONE]\n\n")
	want := splitAll(stream, len(stream))
	if len(want) != 5 {
		t.Fatalf("whole-buffer split gave %d events: %q", len(want), want)
	}
	for n := 1; n < len(stream); n++ {
		got := splitAll(stream, n)
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("pieces of %d: got %q, want %q", n, got, want)
		}
	}
}

func FuzzSplitParse(f *testing.F) {
	for _, s := range []string{"data: x\n\n", "event: a\r\ndata: 1\r\n\r\n", "data: a\ndata: b\n\n", "\r\r", ": c\n\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var fl Fields
		total := 0
		for rest := b; ; {
			n := Split(rest)
			if n == 0 {
				break
			}
			if n > len(rest) {
				t.Fatalf("Split returned %d > %d", n, len(rest))
			}
			fl.Parse(rest[:n])
			if fl.Data != nil && bytes.Contains(fl.Data, []byte("\r")) {
				t.Fatalf("data contains a line ending: %q", fl.Data)
			}
			total += n
			rest = rest[n:]
		}
		if total > len(b) {
			t.Fatalf("consumed %d of %d", total, len(b))
		}
		// Re-encoding a single-line data event and splitting again is stable.
		if fl.Data != nil && !bytes.ContainsAny(fl.Data, "\n") {
			enc := AppendEvent(nil, string(bytes.ReplaceAll(fl.Name, []byte("\n"), nil)), fl.Data)
			if Split(enc) != len(enc) {
				t.Fatalf("re-encoded event %q does not split as one event", enc)
			}
		}
	})
}
