package provider

import (
	"net/url"
	"strings"

	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/dialect"
)

// Azure OpenAI serves the OpenAI dialects under two URL schemes:
//
//   - the v1 API, base_url https://{resource}.openai.azure.com/openai/v1:
//     {base}/chat/completions, {base}/embeddings and {base}/responses, the
//     deployment named by the body's model, as at OpenAI;
//   - the deployment API, base_url https://{resource}.openai.azure.com/openai
//     with api_version: {base}/deployments/{deployment}/chat/completions
//     (and /embeddings) and {base}/responses, with ?api-version= on each.
//
// A target's model is the deployment's name. The credential is api_key
// (sent as api-key) or entra_token (a Microsoft Entra ID bearer token).
var (
	azureType = &Type{
		Name:   "azure-openai",
		Config: config.ProviderType{BaseURL: true, Options: []string{"api_version", "entra_token"}, Check: checkAzure},
		New:    func(p config.Provider) (Provider, error) { return newAzure(p, dialect.Chat) },
	}
	azureResponsesType = &Type{
		Name: "azure-openai-responses",
		Config: config.ProviderType{BaseURL: true, Options: []string{"api_version", "entra_token"}, Check: checkAzure,
			KeepsResponses: true},
		New: func(p config.Provider) (Provider, error) { return newAzure(p, dialect.Responses) },
	}
)

func checkAzure(p *config.Provider, bad func(member, format string, args ...any)) {
	if p.EntraToken != "" && (p.APIKey != "" || len(p.APIKeys) > 0) {
		bad("entra_token", "give api_key or entra_token, not both")
	}
	if p.EntraToken == "" && p.APIKey == "" && len(p.APIKeys) == 0 {
		bad("api_key", "is required (or entra_token): Azure OpenAI refuses requests without a credential")
	}
	if azureDeploymentAPI(p.BaseURL) && p.APIVersion == "" {
		bad("api_version", "is required with a base_url ending in /openai (the deployment API), e.g. 2024-10-21; or end base_url in /openai/v1")
	}
}

// azureDeploymentAPI reports whether base_url is the deployment API's.
func azureDeploymentAPI(base string) bool {
	u, err := url.Parse(base)
	return err == nil && strings.HasSuffix(strings.TrimRight(u.Path, "/"), "/openai")
}

func newAzure(p config.Provider, d *dialect.Dialect) (Provider, error) {
	auth := func(key string) (string, string) { return "Api-Key", key }
	if p.EntraToken != "" {
		p.APIKey = p.EntraToken
		auth = func(token string) (string, string) { return "Authorization", "Bearer " + token }
	}
	deployments := azureDeploymentAPI(p.BaseURL)
	query := ""
	if p.APIVersion != "" {
		query = url.Values{"api-version": {p.APIVersion}}.Encode()
	}
	op := "/chat/completions"
	if d == dialect.Responses {
		op = "/responses"
	}
	return NewHTTP(p, HTTPSpec{
		Dialect: d,
		Auth:    auth,
		URL: func(base *url.URL, r *Request) (*url.URL, bool) {
			op := op
			switch {
			case r.Op == dialect.Compact && d == dialect.Responses:
				op += "/compact"
			case r.Op == dialect.Embed && d == dialect.Chat:
				op = "/embeddings"
			case azurePaths[r.Op] != "" && d == dialect.Chat:
				op = azurePaths[r.Op]
			case r.Op != dialect.Generate:
				return nil, false
			}
			u := *base
			path := strings.TrimRight(base.Path, "/")
			if deployments && d == dialect.Chat {
				u.Path = path + "/deployments/" + r.Model + op
				u.RawPath = strings.TrimRight(base.EscapedPath(), "/") + "/deployments/" + url.PathEscape(r.Model) + op
			} else {
				u.Path, u.RawPath = path+op, ""
			}
			u.RawQuery = query
			return &u, true
		},
	})
}

// azurePaths are the endpoints Azure OpenAI serves beside chat and
// embeddings, per deployment (it has no moderations).
var azurePaths = map[dialect.Op]string{
	dialect.Complete:       "/completions",
	dialect.GenerateImage:  "/images/generations",
	dialect.EditImage:      "/images/edits",
	dialect.Speak:          "/audio/speech",
	dialect.Transcribe:     "/audio/transcriptions",
	dialect.TranslateAudio: "/audio/translations",
}
