package provider

import (
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/dialect"
)

// openAIType is any OpenAI-compatible Chat Completions API (OpenAI,
// vLLM, Ollama, DeepSeek, OpenRouter …).
var openAIType = &Type{
	Name:   "openai",
	Config: config.ProviderType{BaseURL: true, DefaultBaseURL: "https://api.openai.com/v1"},
	New: func(p config.Provider) (Provider, error) {
		return NewHTTP(p, HTTPSpec{
			Dialect: dialect.Chat,
			Paths:   map[dialect.Op]string{dialect.Generate: "/chat/completions", dialect.Embed: "/embeddings"},
			Auth:    func(key string) (string, string) { return "Authorization", "Bearer " + key },
		})
	},
}
