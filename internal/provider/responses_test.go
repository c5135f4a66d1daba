package provider

import (
	"testing"

	"github.com/tollgate/tollgate/internal/config"
)

// forward_unknown_response_ids is an option of the types whose upstream
// keeps responses, and of no other.
func TestForwardUnknownResponseIDsConfig(t *testing.T) {
	checkProviderConfigs(t, []providerConfigCase{
		{`{ name: a, type: openai, api_key: k, forward_unknown_response_ids: true }`,
			"providers[0].forward_unknown_response_ids: is not an option of type openai"},
		{`{ name: a, type: anthropic, api_key: k, forward_unknown_response_ids: true }`,
			"providers[0].forward_unknown_response_ids: is not an option of type anthropic"},
	})
	for _, p := range []string{
		`{ name: a, type: openai-responses, api_key: k, forward_unknown_response_ids: true }`,
		`{ name: a, type: azure-openai-responses, base_url: "https://r.openai.azure.com/openai/v1", api_key: k, forward_unknown_response_ids: true }`,
	} {
		cfg, err := config.Parse([]byte("providers: ["+p+"]\nmodels: [ { name: m, targets: [ { provider: a, model: x } ] } ]\n"), func(string) (string, bool) { return "", false })
		if err != nil || !cfg.Providers[0].ForwardUnknownResponseIDs {
			t.Errorf("%s: %v", p, err)
		}
	}
}
