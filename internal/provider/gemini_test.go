package provider

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// TestGeminiURLs: the Gemini API's and Vertex AI's generateContent URLs,
// streamed with alt=sse, their countTokens URLs and bodies, and their
// credentials.
func TestGeminiURLs(t *testing.T) {
	tokens := upstreamtest.NewGoogleTokens(time.Hour)
	defer tokens.Close()
	srv := upstreamtest.New(func(upstreamtest.Received) upstreamtest.Reply { return upstreamtest.Reply{Body: []byte(`{}`)} })
	defer srv.Close()
	file := filepath.Join(t.TempDir(), "sa.json")
	os.WriteFile(file, tokens.ServiceAccountJSON(), 0o600)
	timeouts := config.Timeouts{Connect: time.Second, FirstByte: time.Second, Idle: time.Second}
	api, err := New(config.Provider{Name: "g", Type: "gemini", BaseURL: srv.URL, APIKey: "gk", Timeouts: timeouts})
	if err != nil {
		t.Fatal(err)
	}
	vertex, err := New(config.Provider{Name: "v", Type: "vertex-gemini", Timeouts: timeouts,
		CloudOptions: config.CloudOptions{Project: "p", Region: "us-central1", CredentialsFile: file, Endpoint: srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	const generate = `{"contents":[],"toolConfig":{"functionCallingConfig":{"mode":"ANY"}}}`
	for _, tc := range []struct {
		p                    Provider
		op                   dialect.Op
		model                string
		stream               bool
		path, query, authKey string
		body                 string // what the upstream gets
		in                   string // what the gateway sends; "" is generate
	}{
		{api, dialect.Generate, "gemini-2.5-pro", false, "/v1beta/models/gemini-2.5-pro:generateContent", "", "X-Goog-Api-Key", generate, ""},
		{api, dialect.Generate, "models/gemini-2.5-flash", true, "/v1beta/models/gemini-2.5-flash:streamGenerateContent", "alt=sse", "X-Goog-Api-Key", generate, ""},
		{api, dialect.CountTokens, "gemini-2.5-pro", false, "/v1beta/models/gemini-2.5-pro:countTokens", "", "X-Goog-Api-Key",
			`{"generateContentRequest":{"contents":[],"toolConfig":{"functionCallingConfig":{"mode":"ANY"}},"model":"models/gemini-2.5-pro"}}`, ""},
		{vertex, dialect.CountTokens, "gemini-2.5-pro", false, "/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-pro:countTokens", "", "Authorization",
			`{"contents":[]}`, ""},
		{vertex, dialect.Generate, "gemini-2.5-pro", true, "/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-pro:streamGenerateContent", "alt=sse", "Authorization", generate, ""},
		// A Gemini client's own count body, wrapped, on the pass-through lane.
		{api, dialect.CountTokens, "gemini-2.5-pro", false, "/v1beta/models/gemini-2.5-pro:countTokens", "", "X-Goog-Api-Key",
			`{"generateContentRequest":{"model":"models/gemini-2.5-pro","contents":[{"parts":[{"text":"hi"}]}]}}`,
			`{"generateContentRequest":{"model":"models/client-name","contents":[{"parts":[{"text":"hi"}]}]}}`},
		{vertex, dialect.CountTokens, "gemini-2.5-pro", false, "/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-pro:countTokens", "", "Authorization",
			`{"contents":[{"parts":[{"text":"hi"}]}]}`,
			`{"generateContentRequest":{"model":"models/client-name","contents":[{"parts":[{"text":"hi"}]}],"toolConfig":{}}}`},
	} {
		in := tc.in
		if in == "" {
			in = generate
		}
		if tc.p.Dialect() != dialect.Gemini {
			t.Fatalf("dialect %v", tc.p.Dialect())
		}
		resp, err := tc.p.Do(context.Background(), &Request{Op: tc.op, Model: tc.model, Stream: tc.stream, Body: Body{[]byte(in)}})
		if err != nil {
			t.Fatal(err)
		}
		readAll(t, resp)
		got := srv.Last()
		if got.Path != tc.path || got.Query != tc.query || got.Header.Get(tc.authKey) == "" {
			t.Errorf("%s: got %s?%s %v", tc.model, got.Path, got.Query, got.Header)
		}
		if string(got.Body) != tc.body {
			t.Errorf("%s %s: body %s, want %s", tc.model, got.Path, got.Body, tc.body)
		}
	}
	if got := srv.Last().Header.Get("Authorization"); !tokens.Valid(got) {
		t.Errorf("Vertex got %q", got)
	}
}
