package provider

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
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

var bedrockCreds = upstreamtest.BedrockCredentials{AccessKeyID: "AKIDTOLLGATETEST", SecretAccessKey: "bedrock-test-secret", Region: "eu-west-3"}

// inferenceProfile is a cross-region inference profile id: a ':' to escape.
const inferenceProfile = "eu.anthropic.claude-sonnet-4-5-20250929-v1:0"

func newTestBedrock(t *testing.T, srv *upstreamtest.Server, p config.Provider) Provider {
	t.Helper()
	p.Name, p.Type, p.Endpoint = "aws", "bedrock", srv.URL
	if p.Region == "" {
		p.Region = bedrockCreds.Region
	}
	p.Timeouts = config.Timeouts{Connect: time.Second, FirstByte: 5 * time.Second, Idle: 5 * time.Second}
	pr, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	return pr
}

func staticKeys() config.Provider {
	return config.Provider{CloudOptions: config.CloudOptions{AccessKeyID: bedrockCreds.AccessKeyID, SecretAccessKey: bedrockCreds.SecretAccessKey}}
}

func messagesRequest(stream bool, body string) *Request {
	return &Request{Op: dialect.Generate, Dialect: dialect.Messages, Model: inferenceProfile, Stream: stream,
		Body: Body{[]byte(body)}, Header: http.Header{"Anthropic-Version": {"2023-06-01"}, "Anthropic-Beta": {"context-1m-2025-08-07, interleaved-thinking-2025-05-14"}}}
}

func readAll(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	return b
}

// TestBedrockInvoke: the request Bedrock gets is InvokeModel's, signed;
// its answer is Anthropic's JSON and passes as it is.
func TestBedrockInvoke(t *testing.T) {
	message := upstreamtest.File("anthropic_message.json")
	srv := upstreamtest.NewBedrock(bedrockCreds, func(upstreamtest.Received) upstreamtest.Reply { return upstreamtest.Reply{Body: message} })
	defer srv.Close()
	p := newTestBedrock(t, srv, staticKeys())
	if p.Dialect() != dialect.Messages {
		t.Fatalf("dialect %v", p.Dialect())
	}
	resp, err := p.Do(context.Background(), messagesRequest(false, `{"model":"`+inferenceProfile+`","max_tokens":64,"stream":false,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, resp); resp.StatusCode != 200 || !bytes.Equal(got, message) {
		t.Fatalf("%d %s", resp.StatusCode, got)
	}
	r := srv.Last()
	if r.RawPath != "/model/eu.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke" || r.Path != "/model/"+inferenceProfile+"/invoke" {
		t.Errorf("path %q (%q)", r.RawPath, r.Path)
	}
	body := gjson.ParseBytes(r.Body)
	if body.Get("model").Exists() || body.Get("stream").Exists() || body.Get("anthropic_version").Str != "bedrock-2023-05-31" ||
		body.Get("max_tokens").Int() != 64 || body.Get("messages.0.content").Str != "hi" {
		t.Errorf("body %s", r.Body)
	}
	if betas := body.Get("anthropic_beta").Array(); len(betas) != 2 || betas[0].Str != "context-1m-2025-08-07" || betas[1].Str != "interleaved-thinking-2025-05-14" {
		t.Errorf("anthropic_beta %s", body.Get("anthropic_beta").Raw)
	}
	for _, h := range []string{"Anthropic-Version", "Anthropic-Beta", "X-Api-Key"} {
		if r.Header.Get(h) != "" {
			t.Errorf("%s sent to Bedrock", h)
		}
	}
	if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential=AKIDTOLLGATETEST/") || r.Header.Get("Accept") != "application/json" {
		t.Errorf("headers %v", r.Header)
	}
}

// TestBedrockStream: event-stream frames come out as the Anthropic
// stream they carry, byte for byte.
func TestBedrockStream(t *testing.T) {
	events := upstreamtest.Events("anthropic_stream.sse")
	srv := upstreamtest.NewBedrock(bedrockCreds, func(upstreamtest.Received) upstreamtest.Reply { return upstreamtest.Reply{Events: events} })
	defer srv.Close()
	p := newTestBedrock(t, srv, staticKeys())
	resp, err := p.Do(context.Background(), messagesRequest(true, `{"model":"x","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, resp)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %v", resp.StatusCode, resp.Header)
	}
	var want []byte
	for _, ev := range events {
		want = append(want, normalizeSSE(ev)...)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("stream:\n%s\nwant:\n%s", got, want)
	}
	if r := srv.Last(); !strings.HasSuffix(r.RawPath, "/invoke-with-response-stream") || r.Header.Get("Accept") != "application/vnd.amazon.eventstream" {
		t.Errorf("%s %v", r.RawPath, r.Header)
	}
}

// normalizeSSE is an event as eventStreamSSE writes it: event and data
// lines only.
func normalizeSSE(ev []byte) []byte {
	var name, data []byte
	for _, line := range bytes.Split(ev, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("event: ")); ok {
			name = v
		}
		if v, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			data = v
		}
	}
	return []byte("event: " + string(name) + "\ndata: " + string(data) + "\n\n")
}

// TestBedrockStreamFailures: a frame whose CRC does not match is a read
// error after the events before it; an exception frame is the Anthropic
// error event and the stream's end.
func TestBedrockStreamFailures(t *testing.T) {
	events := upstreamtest.Events("anthropic_stream.sse")
	for _, tc := range []struct {
		name    string
		reply   upstreamtest.Reply
		wantErr bool
		tail    string
	}{
		{"corrupt CRC", upstreamtest.Reply{Events: events, CorruptFrame: 3}, true, ""},
		{"cut", upstreamtest.Reply{Events: events[:2], Cut: true}, true, ""},
		{"exception", upstreamtest.Reply{Events: events[:3], Exception: &upstreamtest.BedrockException{Type: "modelStreamErrorException", Message: "The model stopped: \"overloaded\""}},
			false, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"The model stopped: \\\"overloaded\\\"\"}}\n\n"},
		{"throttled", upstreamtest.Reply{Events: events[:1], Exception: &upstreamtest.BedrockException{Type: "throttlingException", Message: "slow down"}},
			false, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"slow down\"}}\n\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := upstreamtest.NewBedrock(bedrockCreds, func(upstreamtest.Received) upstreamtest.Reply { return tc.reply })
			defer srv.Close()
			p := newTestBedrock(t, srv, staticKeys())
			resp, err := p.Do(context.Background(), messagesRequest(true, `{"max_tokens":64,"stream":true,"messages":[]}`))
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if tc.wantErr {
				if err == nil {
					t.Fatalf("no read error; got %s", got)
				}
				if tc.name == "corrupt CRC" && (!errors.Is(err, ErrEventStream) || !bytes.Equal(got, append(normalizeSSE(events[0]), normalizeSSE(events[1])...))) {
					t.Fatalf("error %v after %q", err, got)
				}
				return
			}
			if err != nil || !strings.HasSuffix(string(got), tc.tail) {
				t.Fatalf("%v\n%s", err, got)
			}
		})
	}
}

// TestBedrockErrors: Bedrock's error shapes reach the gateway as
// Anthropic errors with the matching status. (Refused credentials:
// TestCredentialRefused.)
func TestBedrockErrors(t *testing.T) {
	for _, tc := range []struct {
		kind, message string
		status        int
		wantStatus    int
		wantType      string
	}{
		{"ValidationException", "messages: field required", 400, 400, "invalid_request_error"},
		{"ThrottlingException", "Too many requests, please wait before trying again.", 429, 429, "rate_limit_error"},
		{"ResourceNotFoundException", "Model not found", 404, 404, "not_found_error"},
		{"ModelTimeoutException", "Model has timed out", 408, 504, "timeout_error"},
		{"ServiceUnavailableException", "Service unavailable", 503, 529, "overloaded_error"},
		{"ModelNotReadyException", "Model is not ready", 429, 529, "overloaded_error"},
		{"InternalServerException", "Internal error", 500, 500, "api_error"},
		{"SomethingNewException", "new", 418, 418, "invalid_request_error"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			srv := upstreamtest.NewBedrock(bedrockCreds, func(upstreamtest.Received) upstreamtest.Reply {
				return upstreamtest.Reply{Status: tc.status, Header: http.Header{"X-Amzn-Errortype": {tc.kind + ":http://internal.amazon.com/coral/com.amazon.bedrock/"}},
					Body: []byte(`{"message":"` + tc.message + `"}`)}
			})
			defer srv.Close()
			resp, err := newTestBedrock(t, srv, staticKeys()).Do(context.Background(), messagesRequest(false, `{"max_tokens":1,"messages":[]}`))
			if err != nil {
				t.Fatal(err)
			}
			got := gjson.ParseBytes(readAll(t, resp))
			if resp.StatusCode != tc.wantStatus || got.Get("type").Str != "error" || got.Get("error.type").Str != tc.wantType || got.Get("error.message").Str != tc.message {
				t.Fatalf("%d %s", resp.StatusCode, got.Raw)
			}
		})
	}
}

// TestBedrockCredentialChain: without static keys, the SDK's standard
// chain finds them: the environment (with a session token), then a
// shared credentials file's profile.
func TestBedrockCredentialChain(t *testing.T) {
	message := upstreamtest.File("anthropic_message.json")
	reply := func(upstreamtest.Received) upstreamtest.Reply { return upstreamtest.Reply{Body: message} }
	dir := t.TempDir()
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_REGION"} {
		t.Setenv(v, "")
	}
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")

	withToken := bedrockCreds
	withToken.SessionToken = "session-token-from-env"
	srv := upstreamtest.NewBedrock(withToken, reply)
	defer srv.Close()
	t.Setenv("AWS_ACCESS_KEY_ID", withToken.AccessKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", withToken.SecretAccessKey)
	t.Setenv("AWS_SESSION_TOKEN", withToken.SessionToken)
	resp, err := newTestBedrock(t, srv, config.Provider{}).Do(context.Background(), messagesRequest(false, `{"max_tokens":1,"messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	if readAll(t, resp); resp.StatusCode != 200 {
		t.Fatalf("credentials from the environment: %d", resp.StatusCode)
	}

	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"} {
		t.Setenv(v, "")
	}
	profiled := upstreamtest.BedrockCredentials{AccessKeyID: "AKIDPROFILE", SecretAccessKey: "profile-secret", Region: bedrockCreds.Region}
	os.WriteFile(filepath.Join(dir, "credentials"), []byte("[default]\naws_access_key_id = AKIDWRONG\naws_secret_access_key = wrong\n\n[tollgate]\naws_access_key_id = AKIDPROFILE\naws_secret_access_key = profile-secret\n"), 0o600)
	srv2 := upstreamtest.NewBedrock(profiled, reply)
	defer srv2.Close()
	resp, err = newTestBedrock(t, srv2, config.Provider{CloudOptions: config.CloudOptions{Profile: "tollgate"}}).Do(context.Background(),
		messagesRequest(false, `{"max_tokens":1,"messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	if readAll(t, resp); resp.StatusCode != 200 {
		t.Fatalf("credentials from the profile: %d", resp.StatusCode)
	}
}

// TestBedrockCountTokens: count_tokens is CountTokens with the
// InvokeModel body inside, its answer renamed.
func TestBedrockCountTokens(t *testing.T) {
	srv := upstreamtest.NewBedrock(bedrockCreds, func(upstreamtest.Received) upstreamtest.Reply {
		return upstreamtest.Reply{Body: []byte(`{"inputTokens":42}`)}
	})
	defer srv.Close()
	r := messagesRequest(false, `{"model":"m","messages":[{"role":"user","content":"count me"}]}`)
	r.Op = dialect.CountTokens
	resp, err := newTestBedrock(t, srv, staticKeys()).Do(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, resp); resp.StatusCode != 200 || string(got) != `{"input_tokens":42}` {
		t.Fatalf("%d %s", resp.StatusCode, got)
	}
	got := srv.Last()
	inner := gjson.GetBytes(got.Body, "input.invokeModel.body")
	if !strings.HasSuffix(got.RawPath, "/count-tokens") || inner.Type != gjson.String {
		t.Fatalf("%s %s", got.RawPath, got.Body)
	}
	body, err := decodeBase64(inner.Str)
	if err != nil || gjson.GetBytes(body, "model").Exists() || gjson.GetBytes(body, "max_tokens").Int() != 1 ||
		gjson.GetBytes(body, "anthropic_version").Str != "bedrock-2023-05-31" || gjson.GetBytes(body, "messages.0.content").Str != "count me" {
		t.Fatalf("inner body %s (%v)", body, err)
	}
}

func TestBedrockConfig(t *testing.T) {
	checkProviderConfigs(t, []providerConfigCase{
		{`{ name: a, type: bedrock }`, "providers[0].region: is required"},
		{`{ name: a, type: bedrock, region: us-east-1, api_key: k }`, "providers[0].api_key: type bedrock does not take API keys"},
		{`{ name: a, type: bedrock, region: us-east-1, access_key_id: AKID }`, "providers[0].secret_access_key: give access_key_id and secret_access_key together"},
		{`{ name: a, type: bedrock, region: us-east-1, session_token: t }`, "providers[0].session_token: goes with access_key_id"},
		{`{ name: a, type: bedrock, region: us-east-1, endpoint: "ftp://x" }`, "providers[0].endpoint:"},
		{`{ name: a, type: bedrock, region: us-east-1, base_url: "https://x" }`, "providers[0].base_url: is not an option of type bedrock"},
		{`{ name: a, type: openai, api_key: k, region: us-east-1 }`, "providers[0].region: is not an option of type openai"},
	})
}

// providerConfigCase is a provider's YAML and the error it must get.
type providerConfigCase struct{ yaml, want string }

// checkProviderConfigs loads each provider (named a) in a configuration
// and checks the error names the member and the rule.
func checkProviderConfigs(t *testing.T, cases []providerConfigCase) {
	t.Helper()
	for _, tc := range cases {
		_, err := config.Parse([]byte("providers: ["+tc.yaml+"]\nmodels: [ { name: m, targets: [ { provider: a, model: x } ] } ]\n"), func(string) (string, bool) { return "", false })
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.yaml, err, tc.want)
		}
	}
}

func decodeBase64(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }

// BenchmarkBedrockPrepare measures what Bedrock adds to a 1 KB request
// before it is sent: the body rewritten and the AWS Signature V4.
func BenchmarkBedrockPrepare(b *testing.B) {
	pr, err := New(config.Provider{Name: "aws", Type: "bedrock", CloudOptions: config.CloudOptions{Region: "us-east-1",
		AccessKeyID: "AKIDBENCH", SecretAccessKey: "bench-secret", Endpoint: "https://bedrock.invalid"}})
	if err != nil {
		b.Fatal(err)
	}
	h := pr.(*HTTP)
	body := []byte(`{"model":"us.anthropic.claude-sonnet-4-5-20250929-v1:0","max_tokens":1024,"messages":[{"role":"user","content":"` +
		strings.Repeat("lorem ipsum ", 75) + `"}]}`)
	r := &Request{Op: dialect.Generate, Dialect: dialect.Messages, Model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
		Body: Body{body}, Header: http.Header{"Anthropic-Version": {"2023-06-01"}}}
	ctx := context.Background()
	b.Run("rewrite+sign", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			u, _ := h.spec.URL(h.base, r)
			raw, err := h.spec.Body(r)
			if err != nil {
				b.Fatal(err)
			}
			req := &http.Request{Method: "POST", URL: u, Host: u.Host, Header: r.Header.Clone(), ContentLength: int64(len(raw))}
			if err := h.spec.Sign(ctx, req, raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sign", func(b *testing.B) {
		u, _ := h.spec.URL(h.base, r)
		raw, _ := h.spec.Body(r)
		b.ReportAllocs()
		for b.Loop() {
			req := &http.Request{Method: "POST", URL: u, Host: u.Host, Header: http.Header{}, ContentLength: int64(len(raw))}
			if err := h.spec.Sign(ctx, req, raw); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestBedrockSDKLogsThroughSlog: the AWS SDK's own log lines (here its
// warning that the instance metadata service refused a token and it falls
// back to IMDSv1) go through slog, as JSON in the gateway's log, not as
// plain lines on stderr.
func TestBedrockSDKLogsThroughSlog(t *testing.T) {
	var buf bytes.Buffer
	prev, prevOut, prevFlags := slog.Default(), log.Writer(), log.Flags()
	slog.SetDefault(slog.New(slog.NewJSONHandler(&buf, nil)))
	t.Cleanup(func() { slog.SetDefault(prev); log.SetOutput(prevOut); log.SetFlags(prevFlags) })

	role := upstreamtest.BedrockCredentials{AccessKeyID: "ASIAROLE", SecretAccessKey: "role-secret", SessionToken: "role-token", Region: bedrockCreds.Region}
	imds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/latest/api/token": // an IMDSv2 token is refused: the SDK warns and falls back
			w.WriteHeader(http.StatusForbidden)
		case "/latest/meta-data/iam/security-credentials/":
			io.WriteString(w, "tollgate-role")
		case "/latest/meta-data/iam/security-credentials/tollgate-role":
			fmt.Fprintf(w, `{"Code":"Success","Type":"AWS-HMAC","AccessKeyId":%q,"SecretAccessKey":%q,"Token":%q,"Expiration":%q}`,
				role.AccessKeyID, role.SecretAccessKey, role.SessionToken, time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
		default:
			http.NotFound(w, r)
		}
	}))
	defer imds.Close()
	dir := t.TempDir()
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_REGION",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_EC2_METADATA_V1_DISABLED"} {
		t.Setenv(v, "")
	}
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "false")
	t.Setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.URL)

	srv := upstreamtest.NewBedrock(role, func(upstreamtest.Received) upstreamtest.Reply {
		return upstreamtest.Reply{Body: upstreamtest.File("anthropic_message.json")}
	})
	defer srv.Close()
	resp, err := newTestBedrock(t, srv, config.Provider{}).Do(context.Background(), messagesRequest(false, `{"max_tokens":1,"messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	if readAll(t, resp); resp.StatusCode != 200 {
		t.Fatalf("credentials from the instance role: %d", resp.StatusCode)
	}
	var warned bool
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		l := gjson.Parse(line)
		if line != "" && !gjson.Valid(line) {
			t.Errorf("not a JSON log line: %q", line)
		}
		if strings.Contains(l.Get("msg").Str, "falling back to IMDSv1") && l.Get("level").Str == "WARN" && l.Get("component").Str == "aws-sdk" {
			warned = true
		}
	}
	if !warned {
		t.Errorf("the SDK's warning is not in the log:\n%s", buf.String())
	}
}
