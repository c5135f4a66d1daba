package provider

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

const vertexModel = "claude-sonnet-4-5@20250929"

// vertexUpstream is a fake Vertex AI that serves requests carrying a token
// tokens issued, and answers the others as Google does.
func vertexUpstream(t *testing.T, tokens *upstreamtest.GoogleTokens, reply func(upstreamtest.Received) upstreamtest.Reply) *upstreamtest.Server {
	srv := upstreamtest.New(func(r upstreamtest.Received) upstreamtest.Reply {
		if !tokens.Valid(r.Header.Get("Authorization")) {
			return upstreamtest.Reply{Status: 401, Body: []byte(`{"error":{"code":401,"message":"Request had invalid authentication credentials.","status":"UNAUTHENTICATED"}}`)}
		}
		return reply(r)
	})
	t.Cleanup(srv.Close)
	return srv
}

func newTestVertex(t *testing.T, tokens *upstreamtest.GoogleTokens, endpoint, region string) Provider {
	t.Helper()
	file := filepath.Join(t.TempDir(), "sa.json")
	if err := os.WriteFile(file, tokens.ServiceAccountJSON(), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := New(config.Provider{Name: "gcp", Type: "vertex", Timeouts: config.Timeouts{Connect: time.Second, FirstByte: 5 * time.Second, Idle: 5 * time.Second},
		CloudOptions: config.CloudOptions{Project: "test-project", Region: region, CredentialsFile: file, Endpoint: endpoint}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestVertexRequests: rawPredict, streamRawPredict and count-tokens as
// Vertex takes them, with an access token from the service account, one
// for as long as it is valid.
func TestVertexRequests(t *testing.T) {
	tokens := upstreamtest.NewGoogleTokens(time.Hour)
	defer tokens.Close()
	message, events := upstreamtest.File("anthropic_message.json"), upstreamtest.Events("anthropic_stream.sse")
	srv := vertexUpstream(t, tokens, func(r upstreamtest.Received) upstreamtest.Reply {
		switch {
		case strings.HasSuffix(r.Path, ":streamRawPredict"):
			return upstreamtest.Reply{Events: events}
		case strings.HasSuffix(r.Path, "count-tokens:rawPredict"):
			return upstreamtest.Reply{Body: []byte(`{"input_tokens":9}`)}
		}
		return upstreamtest.Reply{Body: message}
	})
	p := newTestVertex(t, tokens, srv.URL, "us-east5")
	ctx := context.Background()
	header := http.Header{"Anthropic-Version": {"2023-06-01"}, "Anthropic-Beta": {"context-1m-2025-08-07"}}
	models := "/v1/projects/test-project/locations/us-east5/publishers/anthropic/models/"

	resp, err := p.Do(ctx, &Request{Op: dialect.Generate, Model: vertexModel, Header: header.Clone(),
		Body: Body{[]byte(`{"model":"` + vertexModel + `","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, resp); resp.StatusCode != 200 || string(got) != string(message) {
		t.Fatalf("%d %s", resp.StatusCode, got)
	}
	r := srv.Last()
	if r.Path != models+vertexModel+":rawPredict" || gjson.GetBytes(r.Body, "model").Exists() ||
		gjson.GetBytes(r.Body, "anthropic_version").Str != "vertex-2023-10-16" || r.Header.Get("Anthropic-Beta") != "context-1m-2025-08-07" {
		t.Fatalf("Vertex got %s %s %v", r.Path, r.Body, r.Header)
	}

	resp, err = p.Do(ctx, &Request{Op: dialect.Generate, Model: vertexModel, Stream: true, Header: header.Clone(),
		Body: Body{[]byte(`{"model":"x","max_tokens":8,"stream":true,"messages":[]}`)}})
	if err != nil {
		t.Fatal(err)
	}
	var want []byte
	for _, ev := range events {
		want = append(want, ev...)
	}
	if got := readAll(t, resp); string(got) != string(want) {
		t.Fatalf("stream:\n%s", got)
	}
	if r := srv.Last(); r.Path != models+vertexModel+":streamRawPredict" || !gjson.GetBytes(r.Body, "stream").Bool() {
		t.Fatalf("Vertex got %s %s", r.Path, r.Body)
	}

	resp, err = p.Do(ctx, &Request{Op: dialect.CountTokens, Model: vertexModel, Header: header.Clone(),
		Body: Body{[]byte(`{"model":"` + vertexModel + `","messages":[]}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, resp); string(got) != `{"input_tokens":9}` {
		t.Fatalf("count: %s", got)
	}
	if r := srv.Last(); r.Path != models+"count-tokens:rawPredict" || gjson.GetBytes(r.Body, "model").Str != vertexModel {
		t.Fatalf("Vertex got %s %s", r.Path, r.Body)
	}
	if n := tokens.Fetches(); n != 1 {
		t.Errorf("%d tokens fetched for three requests, want 1", n)
	}
}

// TestVertexTokenRefreshedBeforeExpiry: a token within five minutes of
// its end is replaced before it is used.
func TestVertexTokenRefreshedBeforeExpiry(t *testing.T) {
	tokens := upstreamtest.NewGoogleTokens(4 * time.Minute)
	defer tokens.Close()
	message := upstreamtest.File("anthropic_message.json")
	srv := vertexUpstream(t, tokens, func(upstreamtest.Received) upstreamtest.Reply { return upstreamtest.Reply{Body: message} })
	p := newTestVertex(t, tokens, srv.URL, "global")
	var seen []string
	for range 3 {
		resp, err := p.Do(context.Background(), &Request{Op: dialect.Generate, Model: vertexModel, Body: Body{[]byte(`{"messages":[]}`)}})
		if err != nil {
			t.Fatal(err)
		}
		if readAll(t, resp); resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		seen = append(seen, srv.Last().Header.Get("Authorization"))
	}
	if tokens.Fetches() != 3 || seen[0] == seen[1] || seen[1] == seen[2] {
		t.Fatalf("%d fetches, tokens %v: each request should carry a new one", tokens.Fetches(), seen)
	}
	if !strings.Contains(srv.Last().Path, "/locations/global/") {
		t.Errorf("path %s", srv.Last().Path)
	}
}

// TestVertexErrors: Google's error objects become Anthropic errors; the
// model's own (Anthropic) errors pass as they are.
func TestVertexErrors(t *testing.T) {
	tokens := upstreamtest.NewGoogleTokens(time.Hour)
	defer tokens.Close()
	for _, tc := range []struct {
		status             int
		body               string
		wantStatus         int
		wantType, wantText string
	}{
		{429, `{"error":{"code":429,"message":"Quota exceeded for aiplatform.googleapis.com/online_prediction_requests_per_base_model","status":"RESOURCE_EXHAUSTED"}}`, 429, "rate_limit_error", "Quota exceeded"},
		{400, `[{"error":{"code":400,"message":"Invalid endpoint projects/test-project/locations/europe-west1.","status":"INVALID_ARGUMENT"}}]`, 400, "invalid_request_error", "Invalid endpoint projects/[redacted]/locations"},
		{404, `{"error":{"code":404,"message":"Publisher Model was not found","status":"NOT_FOUND"}}`, 404, "not_found_error", "not found"},
		{503, `{"error":{"code":503,"message":"The service is currently unavailable.","status":"UNAVAILABLE"}}`, 529, "overloaded_error", "unavailable"},
		{400, `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: Field required"}}`, 400, "invalid_request_error", "max_tokens"},
		{502, `<html>Bad Gateway</html>`, 500, "api_error", "Bad Gateway"},
	} {
		srv := vertexUpstream(t, tokens, func(upstreamtest.Received) upstreamtest.Reply {
			return upstreamtest.Reply{Status: tc.status, Body: []byte(tc.body)}
		})
		resp, err := newTestVertex(t, tokens, srv.URL, "europe-west1").Do(context.Background(),
			&Request{Op: dialect.Generate, Model: vertexModel, Body: Body{[]byte(`{"messages":[]}`)}})
		if err != nil {
			t.Fatal(err)
		}
		got := gjson.ParseBytes(readAll(t, resp))
		if resp.StatusCode != tc.wantStatus || got.Get("error.type").Str != tc.wantType || !strings.Contains(got.Get("error.message").Str, tc.wantText) {
			t.Errorf("%d %s: got %d %s", tc.status, tc.body, resp.StatusCode, got.Raw)
		}
	}
}

func TestVertexConfig(t *testing.T) {
	checkProviderConfigs(t, []providerConfigCase{
		{`{ name: a, type: vertex, region: us-east5 }`, "providers[0].project: is required"},
		{`{ name: a, type: vertex, project: p }`, "providers[0].region: is required"},
		{`{ name: a, type: vertex, project: p, region: global, api_key: k }`, "providers[0].api_key: type vertex does not take API keys"},
		{`{ name: a, type: vertex, project: p, region: global, access_key_id: k }`, "providers[0].access_key_id: is not an option of type vertex"},
	})
}

// TestVertexWithoutCredentials: with no key file and no Application
// Default Credentials file, a Vertex provider starts without the network
// and asks the instance's metadata server at the first request; when that
// fails, the request fails as a credential that could not be obtained.
func TestVertexWithoutCredentials(t *testing.T) {
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", "")
	t.Setenv("HOME", t.TempDir())
	asked := make(chan string, 4)
	meta := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case asked <- r.URL.Path:
		default:
		}
		http.NotFound(w, r) // no service account on this instance
	}))
	defer meta.Close()
	t.Setenv("GCE_METADATA_HOST", strings.TrimPrefix(meta.URL, "http://"))
	upstream := upstreamtest.Static(upstreamtest.Reply{Body: []byte(`{}`)})
	defer upstream.Close()
	p, err := New(config.Provider{Name: "gcp", Type: "vertex", Timeouts: config.Timeouts{Connect: time.Second, FirstByte: 5 * time.Second, Idle: 5 * time.Second},
		CloudOptions: config.CloudOptions{Project: "test-project", Region: "us-east5", Endpoint: upstream.URL}})
	if err != nil {
		t.Fatalf("a provider without credentials does not start: %v", err)
	}
	if len(asked) != 0 {
		t.Fatalf("the metadata server was asked at start-up: %s", <-asked)
	}
	if got := p.(*HTTP).Credentials(); !strings.Contains(got, "metadata server") {
		t.Errorf("credentials from %q", got)
	}
	_, err = p.Do(context.Background(), &Request{Op: dialect.Generate, Model: vertexModel, Body: Body{[]byte(`{"messages":[]}`)}})
	var ae *AuthError
	if !errors.As(err, &ae) || !ae.Fetch {
		t.Fatalf("err = %v, want an AuthError that could not obtain credentials", err)
	}
	if path := <-asked; !strings.Contains(path, "/computeMetadata/v1/instance/service-accounts/default/token") {
		t.Errorf("the metadata server was asked for %s", path)
	}
	if len(upstream.Requests()) != 0 {
		t.Error("the request was sent without a credential")
	}
}
