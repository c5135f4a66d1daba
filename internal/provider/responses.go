package provider

import (
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/dialect"
)

// responsesType is the OpenAI Responses API (or a server that speaks it):
// base_url ends before /responses, as https://api.openai.com/v1.
var responsesType = &Type{
	Name:   "openai-responses",
	Config: config.ProviderType{BaseURL: true, DefaultBaseURL: "https://api.openai.com/v1", KeepsResponses: true},
	New: func(p config.Provider) (Provider, error) {
		return NewHTTP(p, HTTPSpec{
			Dialect: dialect.Responses,
			Paths:   map[dialect.Op]string{dialect.Generate: "/responses", dialect.CountTokens: "/responses/input_tokens", dialect.Compact: "/responses/compact"},
			Auth:    func(key string) (string, string) { return "Authorization", "Bearer " + key },
		})
	},
}
