package provider

import (
	"cmp"
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// TestAzureURLs: both of Azure's URL schemes, both dialects, and both
// credentials, as the requests arrive.
func TestAzureURLs(t *testing.T) {
	srv := upstreamtest.New(func(upstreamtest.Received) upstreamtest.Reply { return upstreamtest.Reply{Body: []byte(`{}`)} })
	defer srv.Close()
	for _, tc := range []struct {
		name, typ, base, version, key, entra string
		op                                   dialect.Op // Generate when 0
		wantPath, wantQuery                  string
		wantHeader, wantValue                string
	}{
		{"v1 chat", "azure-openai", "/openai/v1", "", "az-key", "", 0, "/openai/v1/chat/completions", "", "Api-Key", "az-key"},
		{"v1 preview", "azure-openai", "/openai/v1", "preview", "az-key", "", 0, "/openai/v1/chat/completions", "api-version=preview", "Api-Key", "az-key"},
		{"deployment chat", "azure-openai", "/openai", "2024-10-21", "az-key", "", 0, "/openai/deployments/gpt 4o/chat/completions", "api-version=2024-10-21", "Api-Key", "az-key"},
		{"deployment responses", "azure-openai-responses", "/openai", "2025-04-01-preview", "", "entra-token", 0, "/openai/responses", "api-version=2025-04-01-preview", "Authorization", "Bearer entra-token"},
		{"v1 responses", "azure-openai-responses", "/openai/v1/", "", "az-key", "", 0, "/openai/v1/responses", "", "Api-Key", "az-key"},
		{"v1 compact", "azure-openai-responses", "/openai/v1", "", "az-key", "", dialect.Compact, "/openai/v1/responses/compact", "", "Api-Key", "az-key"},
		{"deployment compact", "azure-openai-responses", "/openai", "2025-04-01-preview", "az-key", "", dialect.Compact, "/openai/responses/compact", "api-version=2025-04-01-preview", "Api-Key", "az-key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(config.Provider{Name: "az", Type: tc.typ, BaseURL: srv.URL + tc.base, APIKey: tc.key,
				CloudOptions: config.CloudOptions{APIVersion: tc.version, EntraToken: tc.entra},
				Timeouts:     config.Timeouts{Connect: time.Second, FirstByte: time.Second, Idle: time.Second}})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := p.Do(context.Background(), &Request{Op: cmp.Or(tc.op, dialect.Generate), Model: "gpt 4o", Body: Body{[]byte(`{"model":"gpt 4o"}`)},
				Header: http.Header{}})
			if err != nil {
				t.Fatal(err)
			}
			readAll(t, resp)
			got := srv.Last()
			if got.Path != tc.wantPath || got.Header.Get(tc.wantHeader) != tc.wantValue {
				t.Errorf("got %s %v", got.Path, got.Header)
			}
			if got.Header.Get("Authorization") != "" && tc.entra == "" {
				t.Errorf("an Authorization header beside api-key")
			}
			if q := got.Query; q != tc.wantQuery {
				t.Errorf("query %q, want %q", q, tc.wantQuery)
			}
		})
	}
}

func TestAzureConfig(t *testing.T) {
	checkProviderConfigs(t, []providerConfigCase{
		{`{ name: a, type: azure-openai, base_url: "https://r.openai.azure.com/openai" , api_key: k }`, "providers[0].api_version: is required"},
		{`{ name: a, type: azure-openai, base_url: "https://r.openai.azure.com/openai/v1" }`, "providers[0].api_key: is required (or entra_token)"},
		{`{ name: a, type: azure-openai, base_url: "https://r.openai.azure.com/openai/v1", api_key: k, entra_token: t }`, "providers[0].entra_token: give api_key or entra_token, not both"},
		{`{ name: a, type: azure-openai, api_key: k }`, "providers[0].base_url: is required"},
		{`{ name: a, type: azure-openai-responses, base_url: "https://r.openai.azure.com/openai/v1", api_key: k, region: eastus }`, "providers[0].region: is not an option of type azure-openai-responses"},
	})
}
