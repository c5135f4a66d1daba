package provider

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
)

// TestScrub: the identifiers of the operator's account in upstreams'
// words are replaced, the rest of the text kept, and a JSON body stays
// JSON.
func TestScrub(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"User: arn:aws:sts::123456789012:assumed-role/tollgate/i-0abc is not authorized",
			"User: [redacted] is not authorized"},
		{"on resource: arn:aws-us-gov:bedrock:us-gov-west-1:123456789012:inference-profile/us.anthropic.claude-v1:0 because",
			"on resource: [redacted] because"},
		{"account 123456789012 is not subscribed", "account [redacted] is not subscribed"},
		{"The access key AKIAIOSFODNN7EXAMPLE does not exist", "The access key [redacted] does not exist"},
		{"resource 'projects/tollgate-prod-4711/locations/us-east5/publishers/anthropic'", "resource 'projects/[redacted]/locations/us-east5/publishers/anthropic'"},
		{"API has not been used in project 123456789012 before", "API has not been used in project [redacted] before"},
		{"Permission denied on resource project tollgate-prod-4711.", "Permission denied on resource project [redacted]."},
		{"Request for key AIzaSyD-tollgate4711exampleKEYxyz is invalid", "Request for key [redacted] is invalid"},
		{"Incorrect API key provided: sk-proj-****************wxyz.", "Incorrect API key provided: [redacted]."},
		{"invalid x-api-key sk-ant-***wxyz", "invalid x-api-key [redacted]"},
		{"key 0123456789abcdef0123456789abcdef refused", "key [redacted] refused"},
		{"Rate limit reached for gpt-4o in organization org-Tollgate4711Example on tokens", "Rate limit reached for gpt-4o in organization [redacted] on tokens"},
		// What names no account stays.
		{"prompt is too long: 210432 tokens > 200000 maximum", "prompt is too long: 210432 tokens > 200000 maximum"},
		{"messages.0.content: Field required (request req_011CXYZabc)", "messages.0.content: Field required (request req_011CXYZabc)"},
	} {
		if got := scrub(tc.in); got != tc.want {
			t.Errorf("scrub(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
	body := []byte(`{"message":"User: arn:aws:iam::123456789012:role/\"x\" denied","projects":"projects/p-1\\n"}`)
	out := scrubBytes(body)
	if !json.Valid(out) || bytes.Contains(out, []byte("123456789012")) {
		t.Errorf("scrubbed JSON: %s", out)
	}
}

// TestEventStreamExceptionScrubbed: an exception inside a Bedrock stream
// reaches the client scrubbed, or, for a refused credential, without the
// upstream's words; the log gets them.
func TestEventStreamExceptionScrubbed(t *testing.T) {
	for _, tc := range []struct {
		kind, message, want string
	}{
		{"validationException", "model arn:aws:bedrock:us-east-1:123456789012:inference-profile/x is not ready",
			`{"type":"error","error":{"type":"invalid_request_error","message":"model [redacted] is not ready"}}`},
		{"accessDeniedException", "User: arn:aws:sts::123456789012:assumed-role/r/i is not authorized",
			`{"type":"error","error":{"type":"api_error","message":"the gateway could not authenticate to the upstream provider"}}`},
	} {
		var logs bytes.Buffer
		r := &Request{Log: slog.New(slog.NewJSONHandler(&logs, nil)), ID: "req_1"}
		got, _ := io.ReadAll(newEventStreamSSE(io.NopCloser(bytes.NewReader(frame(t, "exception", tc.kind, []byte(`{"message":"`+tc.message+`"}`)))), r))
		if want := "event: error\ndata: " + tc.want + "\n\n"; string(got) != want {
			t.Errorf("%s: got %q, want %q", tc.kind, got, want)
		}
		if !strings.Contains(logs.String(), "123456789012") || !strings.Contains(logs.String(), "req_1") {
			t.Errorf("%s: the log lacks the upstream's words: %s", tc.kind, logs.String())
		}
	}
}

// TestCredentialRefused: which answers refuse the operator's credential.
func TestCredentialRefused(t *testing.T) {
	geminiBadKey := `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com"}]}}`
	for _, tc := range []struct {
		status int
		body   string
		want   bool
	}{
		{401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`, true},
		{403, `{"type":"error","error":{"type":"permission_error","message":"no access"}}`, true},
		{400, geminiBadKey, true},
		{400, "[" + geminiBadKey + "]", true},
		{500, geminiBadKey, true},
		// The words quoted from a prompt are not the reason.
		{400, `{"error":{"code":400,"message":"Invalid value at 'contents[0]' (API_KEY_INVALID)","status":"INVALID_ARGUMENT"}}`, false},
		{400, `{"error":{"message":"prompt is too long","type":"invalid_request_error"}}`, false},
		{429, `{"error":{"message":"Rate limit reached","type":"requests"}}`, false},
	} {
		if got := credentialRefused(tc.status, []byte(tc.body)); got != tc.want {
			t.Errorf("%d %s: %v, want %v", tc.status, tc.body, got, tc.want)
		}
	}
}
