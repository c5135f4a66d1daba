package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// The fake upstream answers a Gemini client's own request (its body, the
// upstream's model in the URL) on both methods, and the answer checks
// accept what it sends; a model left unrewritten or a stream without
// alt=sse is refused in the Gemini API's envelope.
func TestFakeUpstreamGeminiClient(t *testing.T) {
	srv := httptest.NewServer(newFakeUpstream())
	defer srv.Close()
	direct := &target{Name: "direct", BaseURL: srv.URL, client: srv.Client()}
	for _, name := range []string{"gemini-client", "stream-gemini-client"} {
		w, _ := workloadByName(name)
		s := newReqSpec(direct, w)
		if got := s.header.Get("x-goog-api-key"); got != tollgateMasterKey {
			t.Errorf("%s: x-goog-api-key %q", name, got)
		}
		warn, err := verify(context.Background(), direct.client, s, w)
		if err != nil || warn != "" {
			t.Errorf("%s: %v (warning %q)", name, err, warn)
		}
		total, ttfb, err := s.do(context.Background(), direct.client, make([]byte, 4096))
		if err != nil || total <= 0 || w.Stream != (ttfb > 0) {
			t.Errorf("%s: do: %v, total %v, ttfb %v", name, err, total, ttfb)
		}
	}
	// Every event carries the usage, as the Gemini API's do.
	resp, err := http.Post(srv.URL+"/v1beta/models/gemini-bench:streamGenerateContent?alt=sse", "application/json", strings.NewReader(`{"contents":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	stream, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var events, withUsage int
	_ = eachSSEData(stream, func(data string) error {
		events++
		if strings.Contains(data, `"usageMetadata":{"promptTokenCount":`) {
			withUsage++
		}
		return nil
	})
	if events != streamContentEvents+1 || withUsage != events {
		t.Errorf("%d events, %d with usage; want %d, all", events, withUsage, streamContentEvents+1)
	}
	for path, status := range map[string]int{
		"/v1beta/models/bench-g:generateContent":                    http.StatusNotFound,
		"/v1beta/models/gemini-bench:streamGenerateContent":         http.StatusBadRequest,
		"/v1beta/models/gemini-bench:embedContent":                  http.StatusNotFound,
		"/v1beta/models/gemini-bench:streamGenerateContent?alt=sse": http.StatusOK,
	} {
		resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(`{"contents":[]}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != status {
			t.Errorf("%s: %d, want %d", path, resp.StatusCode, status)
		}
	}
}

func TestCheckGeminiStream(t *testing.T) {
	event := func(text, finish string) string {
		ev := `data: {"candidates":[{"content":{"parts":[{"text":` + strconv.Quote(text) + `}],"role":"model"}`
		if finish != "" {
			ev += `,"finishReason":"` + finish + `"`
		}
		return ev + "}]}\r\n\r\n"
	}
	words := strings.SplitAfter(streamedText, " ")
	var upstream strings.Builder
	for _, w := range words[:len(words)-1] {
		upstream.WriteString(event(w, ""))
	}
	half := len(streamedText) / 2
	for _, c := range []struct {
		name, stream, warn, err string
	}{
		{"as the upstream cut it", upstream.String() + event("", "STOP"), "", ""},
		{"finish with the last text, LF", strings.ReplaceAll(upstream.String(), "\r", "") + event("", "STOP"), "", ""},
		{"joined", event(streamedText[:half], "") + event(streamedText[half:], "STOP"), "2 events with text", ""},
		{"no finish", upstream.String(), "", "finish reason"},
		{"text lost", event(streamedText[:half], "STOP"), "", "streamed text"},
		{"no text", event("", "STOP"), "", "no text parts"},
		{"an error event", upstream.String() + `data: {"error":{"code":500,"message":"x","status":"INTERNAL"}}` + "\n\n", "", "error"},
		{"not JSON", "data: {\n\n", "", "bad SSE data line"},
	} {
		warn, err := checkGeminiStream([]byte(c.stream))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want one with %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || !strings.Contains(warn, c.warn) || (c.warn == "") != (warn == "") {
			t.Errorf("%s: %v, warning %q, want %q", c.name, err, warn, c.warn)
		}
	}
}

func TestCheckGeminiAnswer(t *testing.T) {
	for body, ok := range map[string]bool{
		`{"candidates":[{"content":{"parts":[{"text":` + answerText + `}],"role":"model"},"finishReason":"STOP"}]}`: true,
		`{"candidates":[{"content":{"parts":[{"text":` + answerText + `}],"role":"model"}}]}`:                       false,
		`{"candidates":[{"content":{"parts":[{"text":"other"}],"role":"model"},"finishReason":"STOP"}]}`:            false,
		`{"candidates":[]}`:      false,
		`{"error":{"code":400}}`: false,
		`not json`:               false,
	} {
		if err := checkGeminiAnswer([]byte(body)); (err == nil) != ok {
			t.Errorf("%s: %v", truncate(body, 60), err)
		}
	}
}
