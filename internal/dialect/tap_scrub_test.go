package dialect

import (
	"strings"
	"testing"
)

// An upstream's error event in a pass-through stream reaches the client
// without what names the operator's account; other events are the
// upstream's bytes, untouched.
func TestTapsScrubErrorEvents(t *testing.T) {
	const arn = "arn:aws:iam::123456789012:role/tollgate"
	for _, tc := range []struct {
		name string
		tap  Tap
		ev   string
	}{
		{"anthropic", Messages.NewTap(false), "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"denied for " + arn + "\"}}\n\n"},
		{"openai", Chat.NewTap(false), "data: {\"error\":{\"message\":\"project tollgate-prod-4711 is over quota\",\"type\":\"server_error\"}}\n\n"},
		{"responses error", Responses.NewTap(false), "event: error\ndata: {\"type\":\"error\",\"message\":\"key sk-proj-****wxyz refused\",\"code\":\"server_error\"}\n\n"},
		{"responses failed", Responses.NewTap(false), "event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"id\":\"resp_1\",\"error\":{\"code\":\"server_error\",\"message\":\"account 123456789012 suspended\"}}}\n\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := "data: {\"type\":\"x\",\"text\":\"account 123456789012 in the model's own words\"}\n\n"
			if got := string(tc.tap.Feed([]byte(text))); tc.name == "anthropic" && got != text {
				t.Errorf("an ordinary event changed: %q", got)
			}
			got := string(tc.tap.Feed([]byte(tc.ev)))
			for _, secret := range []string{"123456789012", "tollgate-prod-4711", "sk-proj", "wxyz"} {
				if strings.Contains(got, secret) {
					t.Errorf("%q reached the client: %s", secret, got)
				}
			}
			if !strings.Contains(got, "[redacted]") || !strings.HasSuffix(got, "\n\n") {
				t.Errorf("the event: %q", got)
			}
		})
	}
}
