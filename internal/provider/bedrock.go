package provider

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go/logging"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/embeddings"
)

// bedrockType is Claude on AWS Bedrock: the Anthropic Messages dialect
// over InvokeModel and InvokeModelWithResponseStream, signed with AWS
// Signature V4, streamed in event-stream frames (eventstream.go).
var bedrockType = &Type{
	Name: "bedrock",
	Config: config.ProviderType{
		NoKeys:     true,
		Options:    []string{"region", "access_key_id", "secret_access_key", "session_token", "profile", "endpoint"},
		Check:      checkBedrock,
		PriceModel: BedrockPriceModel,
	},
	New: newBedrock,
}

// bedrockAnthropicVersion is the anthropic_version Bedrock requires in the
// body (it takes no anthropic-version header).
const bedrockAnthropicVersion = "bedrock-2023-05-31"

func checkBedrock(p *config.Provider, bad func(member, format string, args ...any)) {
	if p.Region == "" {
		bad("region", "is required (the AWS region, such as us-east-1)")
	}
	if (p.AccessKeyID == "") != (p.SecretAccessKey == "") {
		bad("secret_access_key", "give access_key_id and secret_access_key together")
	}
	if p.SessionToken != "" && p.AccessKeyID == "" {
		bad("session_token", "goes with access_key_id and secret_access_key")
	}
	if p.Profile != "" && p.AccessKeyID != "" {
		bad("profile", "give static keys or a profile, not both")
	}
	if p.Endpoint != "" {
		if err := config.CheckURL(p.Endpoint); err != nil {
			bad("endpoint", "%v", err)
		}
	}
}

// bedrock signs and shapes requests for one Bedrock provider.
type bedrock struct {
	region string
	creds  aws.CredentialsProvider // cached and refreshed before expiry
	signer *v4.Signer
}

func newBedrock(p config.Provider) (Provider, error) {
	b := &bedrock{region: p.Region, signer: v4.NewSigner()}
	source := "" // static keys: check-config shows them
	if p.AccessKeyID != "" {
		b.creds = aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(p.AccessKeyID, p.SecretAccessKey, p.SessionToken))
	} else {
		// The standard chain: environment, shared files (the profile),
		// web identity, container and instance roles. Nothing is fetched
		// until the first request.
		source = "the AWS default chain: environment, shared files, web identity, container or instance role (resolved at the first request)"
		opts := []func(*awsconfig.LoadOptions) error{awsconfig.WithRegion(p.Region), awsconfig.WithLogger(awsLogger{})}
		if p.Profile != "" {
			opts = append(opts, awsconfig.WithSharedConfigProfile(p.Profile))
			source = "profile " + p.Profile
		}
		cfg, err := awsconfig.LoadDefaultConfig(context.Background(), opts...)
		if err != nil {
			return nil, fmt.Errorf("provider %q: AWS credentials: %w", p.Name, err)
		}
		b.creds = cfg.Credentials
	}
	base := p.Endpoint
	if base == "" {
		base = "https://bedrock-runtime." + p.Region + ".amazonaws.com"
	}
	p.BaseURL = base
	return NewHTTP(p, HTTPSpec{
		Dialect:     dialect.Messages,
		URL:         bedrockURL,
		Body:        bedrockBody,
		Embeddings:  embeddings.BedrockWire,
		Sign:        b.sign,
		Response:    bedrockResponse,
		Credentials: source,
	})
}

// awsLogger writes the AWS SDK's log lines (an instance role's warnings,
// a fall back to IMDSv1) through slog's default logger, which serve makes
// the gateway's: the SDK's own writes plain lines to stderr, into the
// middle of a JSON log.
type awsLogger struct{}

func (awsLogger) Logf(c logging.Classification, format string, v ...any) {
	level := slog.LevelDebug
	if c == logging.Warn {
		level = slog.LevelWarn
	}
	log := slog.Default()
	if !log.Enabled(context.Background(), level) {
		return
	}
	log.LogAttrs(context.Background(), level, fmt.Sprintf(format, v...), slog.String("component", "aws-sdk"))
}

// bedrockURL is the operation's URL: the model id is a path segment,
// escaped (inference profile ids and ARNs hold ':' and '/').
func bedrockURL(base *url.URL, r *Request) (*url.URL, bool) {
	var op string
	switch {
	case r.Op == dialect.CountTokens:
		op = "count-tokens"
	case r.Op == dialect.Embed:
		op = "invoke" // the model's own body (Titan, Cohere), made by package embeddings
	case r.Op != dialect.Generate:
		return nil, false
	case r.Stream:
		op = "invoke-with-response-stream"
	default:
		op = "invoke"
	}
	u := *base
	prefix := strings.TrimRight(base.Path, "/")
	u.Path = prefix + "/model/" + r.Model + "/" + op
	u.RawPath = strings.TrimRight(base.EscapedPath(), "/") + "/model/" + escapeLabel(r.Model) + "/" + op
	return &u, true
}

// escapeLabel escapes a URI label as the AWS SDKs do: every byte but the
// unreserved ones (RFC 3986), so ':' in a model id is sent as %3A.
func escapeLabel(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte("0123456789ABCDEF"[c>>4])
		b.WriteByte("0123456789ABCDEF"[c&15])
	}
	return b.String()
}

// bedrockBody is the Messages request as Bedrock takes it: no model or
// stream (the URL says them), anthropic_version in the body, and the
// anthropic-beta header's features as anthropic_beta. count_tokens
// wraps it as CountTokens' invokeModel input.
func bedrockBody(r *Request) ([]byte, error) {
	body := r.Body.Bytes()
	if r.Op == dialect.Embed {
		return body, nil // already the embedding model's own
	}
	var err error
	for _, member := range []string{"model", "stream"} {
		if gjson.GetBytes(body, member).Exists() {
			if body, err = sjson.DeleteBytes(body, member); err != nil {
				return nil, fmt.Errorf("preparing the Bedrock request: %w", err)
			}
		}
	}
	if !gjson.GetBytes(body, "anthropic_version").Exists() {
		if body, err = sjson.SetBytes(body, "anthropic_version", bedrockAnthropicVersion); err != nil {
			return nil, fmt.Errorf("preparing the Bedrock request: %w", err)
		}
	}
	if betas := betaList(r.Header); len(betas) > 0 && !gjson.GetBytes(body, "anthropic_beta").Exists() {
		if body, err = sjson.SetBytes(body, "anthropic_beta", betas); err != nil {
			return nil, fmt.Errorf("preparing the Bedrock request: %w", err)
		}
	}
	if r.Op != dialect.CountTokens {
		return body, nil
	}
	if !gjson.GetBytes(body, "max_tokens").Exists() { // InvokeModel requires it; it counts for nothing
		if body, err = sjson.SetBytes(body, "max_tokens", 1); err != nil {
			return nil, fmt.Errorf("preparing the Bedrock request: %w", err)
		}
	}
	out := make([]byte, 0, base64.StdEncoding.EncodedLen(len(body))+40)
	out = append(out, `{"input":{"invokeModel":{"body":"`...)
	out = base64.StdEncoding.AppendEncode(out, body)
	return append(out, `"}}}`...), nil
}

// betaList reads the anthropic-beta header(s): comma-separated names.
func betaList(h http.Header) []string {
	var out []string
	for _, v := range h.Values("Anthropic-Beta") {
		for _, b := range strings.Split(v, ",") {
			if b = strings.TrimSpace(b); b != "" {
				out = append(out, b)
			}
		}
	}
	return out
}

// bedrockDropHeaders are the Anthropic API's headers that Bedrock does
// not take (the body carries the version and the betas).
var bedrockDropHeaders = []string{"Anthropic-Version", "Anthropic-Beta", "Anthropic-Dangerous-Direct-Browser-Access"}

// sign sets the request's AWS Signature V4 over its body.
func (b *bedrock) sign(ctx context.Context, req *http.Request, body []byte) error {
	for _, h := range bedrockDropHeaders {
		delete(req.Header, h)
	}
	if strings.HasSuffix(req.URL.Path, "/invoke-with-response-stream") {
		req.Header.Set("Accept", "application/vnd.amazon.eventstream")
	} else {
		req.Header.Set("Accept", "application/json")
	}
	creds, err := b.creds.Retrieve(ctx)
	if err != nil {
		return fmt.Errorf("AWS credentials: %w", err)
	}
	sum := sha256.Sum256(body)
	// AWS checks the signing time against its own clock: the system's,
	// never a clock moved for tests.
	return b.signer.SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), "bedrock", b.region, time.Now())
}

// BedrockPriceModel is the catalogue's id of a Bedrock model id:
// "us.anthropic.claude-sonnet-4-5-20250929-v1:0" (a cross-region
// inference profile) and "anthropic.claude-sonnet-4-5-20250929-v1:0" are
// both "claude-sonnet-4-5-20250929". An ARN's last segment is read the
// same way; other ids are left as they are.
func BedrockPriceModel(id string) string {
	if i := strings.LastIndexByte(id, '/'); i >= 0 && strings.HasPrefix(id, "arn:") {
		id = id[i+1:]
	}
	i := strings.Index(id, "anthropic.")
	if i < 0 {
		return id
	}
	if prefix := id[:i]; prefix != "" && (strings.Count(prefix, ".") != 1 || !strings.HasSuffix(prefix, ".")) {
		return id // not a geography prefix such as "us." or "global."
	}
	id = id[i+len("anthropic."):]
	// The version suffix: "-v1:0", "-v2:0", "-v1".
	if j := strings.LastIndex(id, "-v"); j > 0 {
		v := id[j+2:]
		if k := strings.IndexByte(v, ':'); k >= 0 {
			v = v[:k]
		}
		if v != "" && strings.Trim(v, "0123456789") == "" {
			id = id[:j]
		}
	}
	return id
}
