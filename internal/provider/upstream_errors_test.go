package provider

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"testing"
)

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
