package provider

import (
	"cmp"
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"

	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/dialect"
)

// vertexType is Claude on Google Vertex AI: the Anthropic Messages dialect
// over rawPredict and streamRawPredict, authenticated with OAuth2 access
// tokens from a service account or Application Default Credentials.
var vertexType = &Type{
	Name: "vertex",
	Config: config.ProviderType{
		NoKeys:     true,
		Options:    []string{"project", "region", "credentials_file", "endpoint"},
		Check:      checkVertex,
		PriceModel: VertexPriceModel,
	},
	New: newVertex,
}

// vertexAnthropicVersion is the anthropic_version Vertex requires in the body.
const vertexAnthropicVersion = "vertex-2023-10-16"

// cloudPlatformScope is the OAuth2 scope of Vertex AI's API.
const cloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform"

// tokenEarlyRefresh is how long before its expiry an access token is
// replaced, so that no request carries one that expires on the way.
const tokenEarlyRefresh = 5 * time.Minute

func checkVertex(p *config.Provider, bad func(member, format string, args ...any)) {
	if p.Project == "" {
		bad("project", "is required (the Google Cloud project id)")
	}
	if p.Region == "" {
		bad("region", "is required (a Vertex AI region such as us-east5, or global)")
	}
	if p.Endpoint != "" {
		if err := config.CheckURL(p.Endpoint); err != nil {
			bad("endpoint", "%v", err)
		}
	}
}

func newVertex(p config.Provider) (Provider, error) {
	tokens, err := newGoogleTokens(p.CredentialsFile)
	if err != nil {
		return nil, fmt.Errorf("provider %q: Google credentials: %w", p.Name, err)
	}
	p.BaseURL = vertexEndpoint(p)
	models := "/v1/projects/" + url.PathEscape(p.Project) + "/locations/" + url.PathEscape(p.Region) + "/publishers/anthropic/models/"
	return NewHTTP(p, HTTPSpec{
		Dialect: dialect.Messages,
		URL: func(base *url.URL, r *Request) (*url.URL, bool) {
			var path string
			switch {
			case r.Op == dialect.CountTokens:
				path = models + "count-tokens:rawPredict"
			case r.Op != dialect.Generate:
				return nil, false
			case r.Stream:
				path = models + url.PathEscape(r.Model) + ":streamRawPredict"
			default:
				path = models + url.PathEscape(r.Model) + ":rawPredict"
			}
			full, err := url.Parse(strings.TrimRight(base.String(), "/") + path)
			if err != nil {
				return nil, false
			}
			return full, true
		},
		Body:        vertexBody,
		Sign:        tokens.sign,
		Response:    vertexResponse,
		Credentials: tokens.source,
	})
}

// vertexEndpoint is the Vertex AI endpoint of p's region, or its own.
func vertexEndpoint(p config.Provider) string {
	switch {
	case p.Endpoint != "":
		return p.Endpoint
	case p.Region == "global":
		return "https://aiplatform.googleapis.com"
	}
	return "https://" + p.Region + "-aiplatform.googleapis.com"
}

// vertexBody is the Messages request as Vertex takes it: no model (the
// URL names it; a token count keeps it, as its URL does not) and
// anthropic_version in the body. stream stays: streamRawPredict reads it.
func vertexBody(r *Request) ([]byte, error) {
	body := r.Body.Bytes()
	var err error
	if r.Op != dialect.CountTokens && gjson.GetBytes(body, "model").Exists() {
		if body, err = sjson.DeleteBytes(body, "model"); err != nil {
			return nil, fmt.Errorf("preparing the Vertex request: %w", err)
		}
	}
	if !gjson.GetBytes(body, "anthropic_version").Exists() {
		if body, err = sjson.SetBytes(body, "anthropic_version", vertexAnthropicVersion); err != nil {
			return nil, fmt.Errorf("preparing the Vertex request: %w", err)
		}
	}
	return body, nil
}

// googleStatuses are Google's error statuses as Anthropic errors.
var googleStatuses = map[string]anthropicError{
	"INVALID_ARGUMENT":    {400, "invalid_request_error"},
	"FAILED_PRECONDITION": {400, "invalid_request_error"},
	"OUT_OF_RANGE":        {400, "invalid_request_error"},
	"UNAUTHENTICATED":     {401, "authentication_error"},
	"PERMISSION_DENIED":   {403, "permission_error"},
	"NOT_FOUND":           {404, "not_found_error"},
	"RESOURCE_EXHAUSTED":  {429, "rate_limit_error"},
	"CANCELLED":           {499, "api_error"},
	"UNAVAILABLE":         {529, "overloaded_error"},
	"DEADLINE_EXCEEDED":   {504, "timeout_error"},
	"INTERNAL":            {500, "api_error"},
	"UNKNOWN":             {500, "api_error"},
}

// vertexResponse passes Anthropic's own answers (the model's errors too)
// and rewrites Google's error objects ({"error": {"code", "message",
// "status"}}, sometimes in a list) into the Anthropic envelope.
func vertexResponse(resp *http.Response, _ *Request) *http.Response {
	if resp.StatusCode < 300 {
		return resp
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	if gjson.GetBytes(raw, "type").Str == "error" {
		return replaceBody(resp, resp.StatusCode, "application/json", raw)
	}
	e := gjson.GetBytes(raw, "error")
	if !e.Exists() {
		e = gjson.GetBytes(raw, "0.error")
	}
	k, ok := googleStatuses[e.Get("status").Str]
	if !ok {
		k = bedrockError("", resp.StatusCode) // by status alone
	}
	msg := e.Get("message").Str
	if msg == "" {
		msg = strings.TrimSpace(string(raw))
	}
	return replaceBody(resp, k.status, "application/json", anthropicErrorBody(k, msg))
}

// VertexPriceModel is the catalogue's id of a Vertex model id: Vertex
// writes the version after '@' ("claude-sonnet-4-5@20250929"), the
// catalogue after '-'.
func VertexPriceModel(id string) string {
	name, version, ok := strings.Cut(id, "@")
	if !ok || version == "" || version == "latest" {
		return name
	}
	return name + "-" + version
}

// googleTokens hands out OAuth2 access tokens, each replaced
// tokenEarlyRefresh before it expires. A replacement is fetched by a
// token source made anew (the libraries' own sources cache a token until
// seconds before its end). Tokens are never logged.
type googleTokens struct {
	mu     sync.Mutex
	tok    *oauth2.Token
	fresh  func(ctx context.Context) (oauth2.TokenSource, error)
	source string // where the tokens come from, for check-config
}

// newGoogleTokens loads the credentials of a Vertex provider, reading
// and checking them without the network (check-config runs it too): the
// credentials_file, else Application Default Credentials' file
// (GOOGLE_APPLICATION_CREDENTIALS, then gcloud's), else the metadata
// server of the instance (Compute Engine, GKE, Cloud Run), which is first
// asked at the first request.
func newGoogleTokens(file string) (*googleTokens, error) {
	params := google.CredentialsParams{Scopes: []string{cloudPlatformScope}, EarlyTokenRefresh: tokenEarlyRefresh}
	if file == "" {
		file = adcFile()
	}
	if file == "" {
		ts := oauth2.ReuseTokenSourceWithExpiry(nil, google.ComputeTokenSource("", cloudPlatformScope), tokenEarlyRefresh)
		return &googleTokens{source: "the metadata server (asked at the first request)",
			fresh: func(context.Context) (oauth2.TokenSource, error) { return ts, nil }}, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	email, err := checkGoogleCredentials(data)
	if err == nil {
		_, err = google.CredentialsFromJSONWithParams(context.Background(), data, params)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return &googleTokens{source: cmp.Or(email, file), fresh: func(ctx context.Context) (oauth2.TokenSource, error) {
		creds, err := google.CredentialsFromJSONWithParams(ctx, data, params)
		if err != nil {
			return nil, err
		}
		return creds.TokenSource, nil
	}}, nil
}

// adcFile is the file of Application Default Credentials, as Google's
// libraries look for it; "" when there is none.
func adcFile() string {
	if f := os.Getenv("GOOGLE_APPLICATION_CREDENTIALS"); f != "" {
		return f
	}
	dir := os.Getenv("APPDATA")
	if runtime.GOOS != "windows" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".config")
	}
	f := filepath.Join(dir, "gcloud", "application_default_credentials.json")
	if _, err := os.Stat(f); err != nil {
		return ""
	}
	return f
}

// checkGoogleCredentials checks what Google's libraries would find wrong
// only when fetching the first token: a service account key must hold its
// account and a private key that parses. It returns the account.
func checkGoogleCredentials(data []byte) (string, error) {
	if !gjson.ValidBytes(data) {
		return "", errors.New("not a Google credentials file: not JSON")
	}
	f := gjson.GetManyBytes(data, "type", "client_email", "private_key")
	if f[0].Str != "service_account" {
		return "", nil
	}
	if f[1].Str == "" {
		return "", errors.New("the service account key has no client_email")
	}
	block, _ := pem.Decode([]byte(f[2].Str))
	if block == nil {
		return "", errors.New("the service account key's private_key is not a PEM key")
	}
	if _, err := x509.ParsePKCS8PrivateKey(block.Bytes); err != nil {
		if _, err1 := x509.ParsePKCS1PrivateKey(block.Bytes); err1 != nil {
			return "", fmt.Errorf("the service account key's private_key does not parse: %w", err)
		}
	}
	return f[1].Str, nil
}

// sign sets an access token as the request's bearer credential.
func (g *googleTokens) sign(ctx context.Context, req *http.Request, _ []byte) error {
	tok, err := g.token(ctx)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	return nil
}

// tokenFetchTimeout bounds one token request.
const tokenFetchTimeout = 10 * time.Second

// token returns a valid access token, fetching one when the one held is
// within tokenEarlyRefresh of its expiry; concurrent callers wait for one
// fetch.
func (g *googleTokens) token(ctx context.Context) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.tok != nil && (g.tok.Expiry.IsZero() || time.Until(g.tok.Expiry) > tokenEarlyRefresh) {
		return g.tok.AccessToken, nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tokenFetchTimeout)
	defer cancel()
	ts, err := g.fresh(ctx)
	if err != nil {
		return "", fmt.Errorf("Google credentials: %w", err)
	}
	tok, err := ts.Token()
	if err != nil {
		return "", fmt.Errorf("fetching a Google access token: %w", err)
	}
	g.tok = tok
	return tok.AccessToken, nil
}
