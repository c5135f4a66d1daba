package provider

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/embeddings"
)

// geminiType is the Gemini API: models/{model}:generateContent and
// :streamGenerateContent?alt=sse under base_url's /v1beta, the key in
// x-goog-api-key. Gemini clients reach it on the pass-through lane, the
// others through the translation lane.
var geminiType = &Type{
	Name:   "gemini",
	Config: config.ProviderType{BaseURL: true, DefaultBaseURL: "https://generativelanguage.googleapis.com"},
	New: func(p config.Provider) (Provider, error) {
		return NewHTTP(p, HTTPSpec{
			Dialect: dialect.Gemini,
			Auth:    func(key string) (string, string) { return "X-Goog-Api-Key", key },
			URL: func(base *url.URL, r *Request) (*url.URL, bool) {
				return geminiURL(base, "/v1beta/models/", ":batchEmbedContents", r)
			},
			Embeddings: func(string) *embeddings.Wire { return embeddings.Gemini },
			Body:       geminiCountBody,
		})
	},
}

// vertexGeminiType is Gemini on Vertex AI: publishers/google/models/…
// with Vertex's OAuth2 access tokens (vertex.go).
var vertexGeminiType = &Type{
	Name: "vertex-gemini",
	Config: config.ProviderType{
		NoKeys:  true,
		Options: []string{"project", "region", "credentials_file", "endpoint"},
		Check:   checkVertex,
	},
	New: func(p config.Provider) (Provider, error) {
		tokens, err := newGoogleTokens(p.CredentialsFile)
		if err != nil {
			return nil, fmt.Errorf("provider %q: Google credentials: %w", p.Name, err)
		}
		p.BaseURL = vertexEndpoint(p)
		models := "/v1/projects/" + url.PathEscape(p.Project) + "/locations/" + url.PathEscape(p.Region) + "/publishers/google/models/"
		return NewHTTP(p, HTTPSpec{
			Dialect:     dialect.Gemini,
			URL:         func(base *url.URL, r *Request) (*url.URL, bool) { return geminiURL(base, models, ":predict", r) },
			Embeddings:  embeddings.VertexWire,
			Body:        vertexGeminiCountBody,
			Sign:        tokens.sign,
			Credentials: tokens.source,
		})
	},
}

// geminiURL is a request's URL: the model after models, the
// method after a colon, alt=sse for a stream. embed is the method that
// makes embeddings: the Gemini API's batchEmbedContents, or Vertex AI's
// predict (its text-embedding models take instances).
func geminiURL(base *url.URL, models, embed string, r *Request) (*url.URL, bool) {
	method, query := ":generateContent", ""
	switch {
	case r.Op == dialect.CountTokens:
		method = ":countTokens"
	case r.Op == dialect.Embed:
		method = embed
	case r.Op != dialect.Generate:
		return nil, false
	case r.Stream:
		method, query = ":streamGenerateContent", "alt=sse"
	}
	model := strings.TrimPrefix(r.Model, "models/")
	u, err := url.Parse(strings.TrimRight(base.String(), "/") + models + url.PathEscape(model) + method)
	if err != nil {
		return nil, false
	}
	u.RawQuery = query
	return u, true
}

// geminiCountBody is the Gemini API's countTokens body: the whole
// generate request (system instruction, tools and all) as
// generateContentRequest, which names its model. A Gemini client's count
// body that is already so wrapped gets the target's model in it. Other
// bodies pass.
func geminiCountBody(r *Request) ([]byte, error) {
	body := r.Body.Bytes()
	if r.Op != dialect.CountTokens {
		return body, nil
	}
	model := "models/" + strings.TrimPrefix(r.Model, "models/")
	if gjson.GetBytes(body, "generateContentRequest").IsObject() {
		out, err := sjson.SetBytes(body, "generateContentRequest.model", model)
		if err != nil {
			return nil, fmt.Errorf("preparing the Gemini countTokens request: %w", err)
		}
		return out, nil
	}
	inner, err := sjson.SetBytes(body, "model", model)
	if err != nil {
		return nil, fmt.Errorf("preparing the Gemini countTokens request: %w", err)
	}
	out := make([]byte, 0, len(inner)+28)
	out = append(out, `{"generateContentRequest":`...)
	out = append(out, inner...)
	return append(out, '}'), nil
}

// vertexGeminiCountBody is Vertex AI's countTokens body: the generate
// request's members, less toolConfig, which Vertex's count does not take
// (a Gemini client's generateContentRequest is unwrapped, less its model,
// which the URL names).
func vertexGeminiCountBody(r *Request) ([]byte, error) {
	body := r.Body.Bytes()
	if r.Op != dialect.CountTokens {
		return body, nil
	}
	if inner := gjson.GetBytes(body, "generateContentRequest"); inner.IsObject() {
		b, err := sjson.DeleteBytes([]byte(inner.Raw), "model")
		if err != nil {
			return nil, fmt.Errorf("preparing the Vertex AI countTokens request: %w", err)
		}
		body = b
	}
	if !gjson.GetBytes(body, "toolConfig").Exists() {
		return body, nil
	}
	out, err := sjson.DeleteBytes(body, "toolConfig")
	if err != nil {
		return nil, fmt.Errorf("preparing the Vertex AI countTokens request: %w", err)
	}
	return out, nil
}
