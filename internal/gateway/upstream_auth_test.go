package gateway_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// Real error answers, as each upstream words them, naming the operator's
// account: these words must reach the log and never the client.
const (
	awsAccessDenied = `{"message":"User: arn:aws:sts::123456789012:assumed-role/tollgate-prod/i-0abc12345 is not authorized to perform: bedrock:InvokeModel on resource: arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0 because no identity-based policy allows the bedrock:InvokeModel action"}`
	awsValidation   = `{"message":"The provided model identifier is invalid: arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3"}`
	googleDenied    = `{"error":{"code":403,"message":"Permission 'aiplatform.endpoints.predict' denied on resource '//aiplatform.googleapis.com/projects/tollgate-prod-4711/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5' (or it may not exist).","status":"PERMISSION_DENIED","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"IAM_PERMISSION_DENIED","domain":"aiplatform.googleapis.com","metadata":{"permission":"aiplatform.endpoints.predict","resource":"projects/tollgate-prod-4711/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5"}}]}}`
	googleBadInput  = `{"error":{"code":400,"message":"Invalid resource field value in the request: projects/tollgate-prod-4711/locations/us-east5/publishers/anthropic/models/claude-x","status":"INVALID_ARGUMENT"}}`
	geminiBadKey    = `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com","metadata":{"service":"generativelanguage.googleapis.com"}}]}}`
	geminiDisabled  = `{"error":{"code":403,"message":"Generative Language API has not been used in project 123456789012 before or it is disabled. Enable it by visiting https://console.developers.google.com/apis/api/generativelanguage.googleapis.com/overview?project=123456789012 then retry.","status":"PERMISSION_DENIED","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"SERVICE_DISABLED","domain":"googleapis.com","metadata":{"consumer":"projects/123456789012","service":"generativelanguage.googleapis.com"}}]}}`
	geminiKeyQuoted = `{"error":{"code":400,"message":"Request for key AIzaSyD-tollgate4711exampleKEYxyz contains an invalid argument.","status":"INVALID_ARGUMENT"}}`
	openAIBadKey    = `{"error":{"message":"Incorrect API key provided: sk-proj-********************************************wxyz. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`
	openAIRate      = `{"error":{"message":"Rate limit reached for gpt-4o in organization org-Tollgate4711Example on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`
	azureBadKey     = `{"error":{"code":"401","message":"Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource."}}`
	anthropicDenied = `{"type":"error","error":{"type":"permission_error","message":"Your API key does not have permission to use the specified resource."}}`
)

var testBedrock = upstreamtest.BedrockCredentials{AccessKeyID: "AKIDTOLLGATETEST", SecretAccessKey: "bedrock-test-secret", Region: "us-east-1"}

// upstreamAuthCase is one upstream answer and what the client must get.
type upstreamAuthCase struct {
	name string
	// setup starts the upstream and returns the provider's YAML entry
	// (named up; the model is claude-x, or gpt-x for OpenAI dialects).
	setup  func(t *testing.T) string
	client string // "anthropic", "openai" or "responses"
	// streamOnly: the upstream answers with a stream whatever was asked.
	streamOnly bool
	status     int // what the client gets
	// message the client's error says; auth: the answer is
	// upstream_auth_failed (502, not to be retried).
	message string
	auth    bool
	hidden  []string // in the log, never in the client's answer
}

func staticUpstream(t *testing.T, status int, body string, header http.Header) string {
	srv := upstreamtest.Static(upstreamtest.Reply{Status: status, Body: []byte(body), Header: header})
	t.Cleanup(srv.Close)
	return srv.URL
}

func streamUpstream(t *testing.T, events ...string) string {
	var evs [][]byte
	for _, e := range events {
		evs = append(evs, []byte(e))
	}
	srv := upstreamtest.Static(upstreamtest.Reply{Events: evs})
	t.Cleanup(srv.Close)
	return srv.URL
}

func bedrockUpstream(t *testing.T, accessKey string, rep upstreamtest.Reply) string {
	srv := upstreamtest.NewBedrock(testBedrock, func(upstreamtest.Received) upstreamtest.Reply { return rep })
	t.Cleanup(srv.Close)
	return `{ name: up, type: bedrock, region: us-east-1, access_key_id: ` + accessKey + `, secret_access_key: bedrock-test-secret, endpoint: "` + srv.URL + `" }`
}

func awsError(status int, kind, body string) upstreamtest.Reply {
	return upstreamtest.Reply{Status: status, Body: []byte(body),
		Header: http.Header{"X-Amzn-Errortype": {kind + ":http://internal.amazon.com/coral/com.amazon.bedrock/"}}}
}

// vertexUpstream serves Vertex with a service account's token endpoint;
// key is the account's key file (nil: the endpoint's own account).
func vertexUpstream(t *testing.T, status int, body string, key func(tokens *upstreamtest.GoogleTokens) []byte) string {
	tokens := upstreamtest.NewGoogleTokens(time.Hour)
	t.Cleanup(tokens.Close)
	srv := upstreamtest.Static(upstreamtest.Reply{Status: status, Body: []byte(body)})
	t.Cleanup(srv.Close)
	sa := tokens.ServiceAccountJSON()
	if key != nil {
		sa = key(tokens)
	}
	file := filepath.Join(t.TempDir(), "sa.json")
	if err := os.WriteFile(file, sa, 0o600); err != nil {
		t.Fatal(err)
	}
	return `{ name: up, type: vertex, project: tollgate-prod-4711, region: us-east5, credentials_file: "` + file + `", endpoint: "` + srv.URL + `" }`
}

func upstreamAuthCases() []upstreamAuthCase {
	const couldNot = "the gateway could not authenticate to the upstream provider"
	return []upstreamAuthCase{
		{name: "anthropic 403", client: "openai", status: 502, auth: true, message: couldNot,
			setup: func(t *testing.T) string {
				return `{ name: up, type: anthropic, api_key: k, base_url: "` + staticUpstream(t, 403, anthropicDenied, nil) + `" }`
			}, hidden: []string{"does not have permission"}},
		{name: "anthropic 401 on the pass-through lane", client: "anthropic", status: 502, auth: true, message: couldNot,
			setup: func(t *testing.T) string {
				return `{ name: up, type: anthropic, api_key: k, base_url: "` + staticUpstream(t, 401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`, nil) + `" }`
			}, hidden: []string{"invalid x-api-key"}},
		{name: "anthropic stream beginning with an authentication_error", client: "anthropic", streamOnly: true, status: 502, auth: true, message: couldNot,
			setup: func(t *testing.T) string {
				return `{ name: up, type: anthropic, api_key: k, base_url: "` + streamUpstream(t, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"invalid x-api-key sk-ant-***wxyz\"}}\n\n") + `" }`
			}, hidden: []string{"wxyz"}},
		{name: "openai 401", client: "openai", status: 502, auth: true, message: couldNot,
			setup: func(t *testing.T) string {
				return `{ name: up, type: openai, api_key: k, base_url: "` + staticUpstream(t, 401, openAIBadKey, nil) + `" }`
			}, hidden: []string{"sk-proj", "wxyz"}},
		{name: "openai 429 scrubbed", client: "openai", status: 429, message: "organization [redacted] on tokens per min",
			setup: func(t *testing.T) string {
				return `{ name: up, type: openai, api_key: k, base_url: "` + staticUpstream(t, 429, openAIRate, nil) + `" }`
			}, hidden: []string{"org-Tollgate4711Example"}},
		{name: "openai-responses 401", client: "responses", status: 502, auth: true, message: couldNot,
			setup: func(t *testing.T) string {
				return `{ name: up, type: openai-responses, api_key: k, base_url: "` + staticUpstream(t, 401, openAIBadKey, nil) + `" }`
			}, hidden: []string{"sk-proj", "wxyz"}},
		{name: "azure-openai 401", client: "openai", status: 502, auth: true, message: couldNot,
			setup: func(t *testing.T) string {
				return `{ name: up, type: azure-openai, api_key: k, base_url: "` + staticUpstream(t, 401, azureBadKey, nil) + `/openai/v1" }`
			}, hidden: []string{"invalid subscription key"}},
		{name: "bedrock AccessDenied", client: "anthropic", status: 502, auth: true, message: couldNot,
			setup: func(t *testing.T) string {
				return bedrockUpstream(t, testBedrock.AccessKeyID, awsError(403, "AccessDeniedException", awsAccessDenied))
			}, hidden: []string{"123456789012", "arn:aws", "tollgate-prod"}},
		{name: "bedrock AccessDenied to an OpenAI client", client: "openai", status: 502, auth: true, message: couldNot,
			setup: func(t *testing.T) string {
				return bedrockUpstream(t, testBedrock.AccessKeyID, awsError(403, "AccessDeniedException", awsAccessDenied))
			}, hidden: []string{"123456789012", "arn:aws"}},
		{name: "bedrock ExpiredToken", client: "anthropic", status: 502, auth: true, message: couldNot,
			setup: func(t *testing.T) string {
				return bedrockUpstream(t, testBedrock.AccessKeyID, awsError(400, "ExpiredTokenException", `{"message":"The security token included in the request is expired"}`))
			}, hidden: []string{"is expired"}},
		{name: "bedrock UnrecognizedClient", client: "anthropic", status: 502, auth: true, message: couldNot,
			setup: func(t *testing.T) string {
				return bedrockUpstream(t, "AKIDNOTKNOWNTOAWS", upstreamtest.Reply{})
			}, hidden: []string{"security token included in the request is invalid"}},
		{name: "bedrock 400 scrubbed", client: "anthropic", status: 400, message: "The provided model identifier is invalid: [redacted]",
			setup: func(t *testing.T) string {
				return bedrockUpstream(t, testBedrock.AccessKeyID, awsError(400, "ValidationException", awsValidation))
			}, hidden: []string{"123456789012", "arn:aws"}},
		{name: "vertex PERMISSION_DENIED", client: "anthropic", status: 502, auth: true, message: couldNot,
			setup:  func(t *testing.T) string { return vertexUpstream(t, 403, googleDenied, nil) },
			hidden: []string{"tollgate-prod-4711"}},
		{name: "vertex 400 scrubbed", client: "anthropic", status: 400, message: "projects/[redacted]/locations",
			setup:  func(t *testing.T) string { return vertexUpstream(t, 400, googleBadInput, nil) },
			hidden: []string{"tollgate-prod-4711"}},
		{name: "vertex key refused by the token endpoint", client: "anthropic", status: 502, auth: true,
			message: "the gateway could not obtain credentials for the upstream provider",
			setup: func(t *testing.T) string {
				return vertexUpstream(t, 200, `{}`, func(tokens *upstreamtest.GoogleTokens) []byte {
					// Another account's key, sent to this endpoint: invalid_grant.
					other := upstreamtest.NewGoogleTokens(time.Hour)
					other.Close()
					return []byte(strings.Replace(string(other.ServiceAccountJSON()), other.URL, tokens.URL, 1))
				})
			}, hidden: []string{"invalid_grant"}},
		{name: "gemini API_KEY_INVALID", client: "anthropic", status: 502, auth: true, message: couldNot,
			setup: func(t *testing.T) string {
				return `{ name: up, type: gemini, api_key: k, base_url: "` + staticUpstream(t, 400, geminiBadKey, nil) + `" }`
			}, hidden: []string{"API key not valid"}},
		{name: "gemini API_KEY_INVALID to an OpenAI client", client: "openai", status: 502, auth: true, message: couldNot,
			setup: func(t *testing.T) string {
				return `{ name: up, type: gemini, api_key: k, base_url: "` + staticUpstream(t, 400, geminiBadKey, nil) + `" }`
			}, hidden: []string{"API key not valid"}},
		{name: "gemini service disabled", client: "anthropic", status: 502, auth: true, message: couldNot,
			setup: func(t *testing.T) string {
				return `{ name: up, type: gemini, api_key: k, base_url: "` + staticUpstream(t, 403, geminiDisabled, nil) + `" }`
			}, hidden: []string{"123456789012"}},
		{name: "gemini 400 scrubbed", client: "openai", status: 400, message: "Request for key [redacted] contains an invalid argument",
			setup: func(t *testing.T) string {
				return `{ name: up, type: gemini, api_key: k, base_url: "` + staticUpstream(t, 400, geminiKeyQuoted, nil) + `" }`
			}, hidden: []string{"AIzaSy", "tollgate4711"}},
	}
}

// TestUpstreamCredentialFailures: for every provider type, a credential
// the upstream refuses (401, 403, Google's API_KEY_INVALID, AWS's
// AccessDenied or ExpiredToken) or that cannot be obtained is one answer,
// 502 upstream_auth_failed with x-should-retry: false, on both lanes and
// whole or streamed; any other upstream error reaches the client with
// its account identifiers scrubbed. The upstream's words go to the log.
func TestUpstreamCredentialFailures(t *testing.T) {
	for _, tc := range upstreamAuthCases() {
		for _, stream := range []bool{false, true} {
			if tc.streamOnly && !stream {
				continue
			}
			name := tc.name
			if stream {
				name += " stream"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				e := newEnvYAML(t, "providers:\n  - "+tc.setup(t)+`
models:
  - { name: claude-x, targets: [ { provider: up, model: upstream-model } ] }
  - { name: gpt-x, targets: [ { provider: up, model: upstream-model } ] }
`)
				s := "false"
				if stream {
					s = "true"
				}
				var resp *http.Response
				switch tc.client {
				case "anthropic":
					resp = e.do("POST", "/v1/messages", `{"model":"claude-x","max_tokens":5,"stream":`+s+`,"messages":[{"role":"user","content":"hi"}]}`, anthropicAuth...)
				case "openai":
					resp = e.do("POST", "/v1/chat/completions", `{"model":"gpt-x","stream":`+s+`,"messages":[{"role":"user","content":"hi"}]}`, openAIAuth...)
				case "responses":
					resp = e.do("POST", "/v1/responses", `{"model":"gpt-x","stream":`+s+`,"input":"hi"}`, openAIAuth...)
				}
				body := readAll(t, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != tc.status {
					t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
				}
				msg := gjson.GetBytes(body, "error.message").Str
				if !strings.Contains(msg, tc.message) {
					t.Errorf("message %q, want it to say %q", msg, tc.message)
				}
				if tc.auth {
					if got := resp.Header.Get("X-Should-Retry"); got != "false" {
						t.Errorf("x-should-retry %q, want false", got)
					}
					want, at := "upstream_auth_failed", "error.code"
					if tc.client == "anthropic" { // its envelope has no code: its type says a gateway error
						want, at = "api_error", "error.type"
					}
					if got := gjson.GetBytes(body, at).Str; got != want {
						t.Errorf("%s %q, want %q: %s", at, got, want, body)
					}
				}
				var head strings.Builder
				resp.Header.Write(&head)
				logs := e.logs.String()
				for _, h := range tc.hidden {
					if strings.Contains(string(body), h) || strings.Contains(head.String(), h) {
						t.Errorf("the client got %q:\n%s\n%s", h, head.String(), body)
					}
					if !strings.Contains(logs, h) {
						t.Errorf("the log lacks %q:\n%s", h, logs)
					}
				}
			})
		}
	}
}

// A stream that begins with an upstream error naming the operator's
// account becomes a JSON error without those words; the log keeps them.
// Later error events are scrubbed by the taps (dialect).
func TestStreamStartErrorScrubbed(t *testing.T) {
	up := upstreamtest.Static(upstreamtest.Reply{Events: [][]byte{
		[]byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"model not enabled for project tollgate-prod-4711\"}}\n\n"),
	}})
	e := newEnv(t, up, nil, "")
	resp := e.do("POST", "/v1/messages", `{"model":"claude-x","max_tokens":8,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, anthropicAuth...)
	body := readAll(t, resp.Body)
	if resp.StatusCode != 400 || strings.Contains(string(body), "tollgate-prod-4711") || !strings.Contains(string(body), "[redacted]") {
		t.Errorf("%d %s", resp.StatusCode, body)
	}
	if !strings.Contains(e.logs.String(), "tollgate-prod-4711") {
		t.Errorf("the log lacks the upstream's words:\n%s", e.logs.String())
	}
}

// On the translation lane too: an upstream error event in the middle of
// a stream reaches the client in its protocol without what names the
// operator's account, and the log keeps the upstream's words.
func TestTranslatedStreamErrorScrubbed(t *testing.T) {
	up := upstreamtest.Static(upstreamtest.Reply{Events: [][]byte{
		[]byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-upstream-id\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n"),
		[]byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"capacity of arn:aws:bedrock:us-east-1:123456789012:inference-profile/x exceeded\"}}\n\n"),
	}})
	e := newEnv(t, up, nil, "")
	resp := e.do("POST", "/v1/chat/completions", `{"model":"claude-x","stream":true,"messages":[{"role":"user","content":"hi"}]}`, openAIAuth...)
	body := string(readAll(t, resp.Body))
	if strings.Contains(body, "123456789012") || !strings.Contains(body, "[redacted]") {
		t.Errorf("%d %s", resp.StatusCode, body)
	}
	if !strings.Contains(e.logs.String(), "123456789012") {
		t.Errorf("the log lacks the upstream's words")
	}
}
