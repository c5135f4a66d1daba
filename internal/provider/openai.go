package provider

import (
	"strings"

	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/dialect"
)

// openAIType is any OpenAI-compatible API (OpenAI, vLLM, Ollama,
// DeepSeek, OpenRouter …): Chat Completions, embeddings, and the rest of
// OpenAI's endpoints passed through (openAIPaths), with more declared in
// endpoints (/v1/rerank).
var openAIType = &Type{
	Name: "openai",
	Config: config.ProviderType{BaseURL: true, DefaultBaseURL: "https://api.openai.com/v1",
		Endpoints: []string{"/v1/rerank"}},
	New: func(p config.Provider) (Provider, error) {
		paths := map[dialect.Op]string{dialect.Generate: "/chat/completions", dialect.Embed: "/embeddings"}
		for op, path := range openAIPaths {
			paths[op] = path
		}
		for _, e := range p.Endpoints { // validated: endpoints of package dialect's table
			paths[dialect.OpenAIEndpoint(e).Op] = strings.TrimPrefix(e, "/v1")
		}
		return NewHTTP(p, HTTPSpec{
			Dialect: dialect.Chat,
			Paths:   paths,
			Auth:    func(key string) (string, string) { return "Authorization", "Bearer " + key },
		})
	},
}

// openAIPaths are the endpoints OpenAI serves beside chat and embeddings,
// under base_url (which ends in /v1).
var openAIPaths = map[dialect.Op]string{
	dialect.Complete:       "/completions",
	dialect.Moderate:       "/moderations",
	dialect.GenerateImage:  "/images/generations",
	dialect.EditImage:      "/images/edits",
	dialect.Speak:          "/audio/speech",
	dialect.Transcribe:     "/audio/transcriptions",
	dialect.TranslateAudio: "/audio/translations",
}
