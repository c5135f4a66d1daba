package provider

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/dialect"
)

// geminiType is the Gemini API: models/{model}:generateContent and
// :streamGenerateContent?alt=sse under base_url's /v1beta, the key in
// x-goog-api-key. Clients reach it through the translation lane.
var geminiType = &Type{
	Name:   "gemini",
	Config: config.ProviderType{BaseURL: true, DefaultBaseURL: "https://generativelanguage.googleapis.com"},
	New: func(p config.Provider) (Provider, error) {
		return NewHTTP(p, HTTPSpec{
			Dialect: dialect.Gemini,
			Auth:    func(key string) (string, string) { return "X-Goog-Api-Key", key },
			URL: func(base *url.URL, r *Request) (*url.URL, bool) {
				return geminiURL(base, "/v1beta/models/", r)
			},
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
			Dialect: dialect.Gemini,
			URL:     func(base *url.URL, r *Request) (*url.URL, bool) { return geminiURL(base, models, r) },
			Sign:    tokens.sign,
		})
	},
}

// geminiURL is a generate request's URL: the model after models, the
// method after a colon, alt=sse for a stream.
func geminiURL(base *url.URL, models string, r *Request) (*url.URL, bool) {
	if r.Op != dialect.Generate {
		return nil, false
	}
	method, query := ":generateContent", ""
	if r.Stream {
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
