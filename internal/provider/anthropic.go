package provider

import (
	"net/http"

	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/dialect"
)

// anthropicType is the Anthropic Messages API.
var anthropicType = &Type{
	Name:   "anthropic",
	Config: config.ProviderType{BaseURL: true, DefaultBaseURL: "https://api.anthropic.com"},
	New: func(p config.Provider) (Provider, error) {
		return NewHTTP(p, HTTPSpec{
			Dialect: dialect.Messages,
			Paths:   map[dialect.Op]string{dialect.Generate: "/v1/messages", dialect.CountTokens: "/v1/messages/count_tokens"},
			Auth:    func(key string) (string, string) { return "X-Api-Key", key },
			Header:  anthropicDefaults,
		})
	},
}

// defaultAnthropicVersion is sent when the client gave none (a client of
// another protocol on the translation lane); clients of /v1/messages send
// their own.
var defaultAnthropicVersion = []string{"2023-06-01"}

func anthropicDefaults(h http.Header) {
	if len(h["Anthropic-Version"]) == 0 {
		h["Anthropic-Version"] = defaultAnthropicVersion
	}
}
