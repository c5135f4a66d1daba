package scrub

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestString: the identifiers of the operator's account in upstreams'
// words are replaced, the rest of the text kept, and a JSON body stays
// JSON.
func TestString(t *testing.T) {
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
		{"rate limit of 30,000 input tokens per minute (org: 9d50ef40-6cc8-4ca6-9d35-1dc9cf26235c, model: claude-x)",
			"rate limit of 30,000 input tokens per minute (org: [redacted], model: claude-x)"},
		{"for your organization (a22cf6e6-a940-4fff-8c4c-1580816ac7be) of", "for your organization ([redacted]) of"},
		{"caller tollgate@tollgate-prod-4711.iam.gserviceaccount.com lacks aiplatform.endpoints.predict", "caller [redacted] lacks aiplatform.endpoints.predict"},
		{"denied on arn:aws:bedrock:us-east-1:123456789012:model/x. Check it (arn:aws:iam::123456789012:role/r).",
			"denied on [redacted]. Check it ([redacted])."},
		// What names no account stays.
		{"Please check your project settings. Project description: none", "Please check your project settings. Project description: none"},
		{"import sk-learn and scikit", "import sk-learn and scikit"},
		{"prompt is too long: 210432 tokens > 200000 maximum", "prompt is too long: 210432 tokens > 200000 maximum"},
		{"messages.0.content: Field required (request req_011CXYZabc)", "messages.0.content: Field required (request req_011CXYZabc)"},
	} {
		if got := String(tc.in); got != tc.want {
			t.Errorf("String(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
	body := []byte(`{"message":"User: arn:aws:iam::123456789012:role/\"x\" denied","projects":"projects/p-1\\n"}`)
	out := Bytes(body)
	if !json.Valid(out) || bytes.Contains(out, []byte("123456789012")) {
		t.Errorf("scrubbed JSON: %s", out)
	}
}
