package ledger_test

import (
	"testing"

	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/ledger"
	"github.com/tollgate/tollgate/internal/outcome"
	"github.com/tollgate/tollgate/internal/store"
)

func TestEndpoint(t *testing.T) {
	for path, want := range map[string]string{
		"/v1/messages":                     "/v1/messages",
		"/v1/messages/count_tokens":        "/v1/messages/count_tokens",
		"/v1/chat/completions":             "/v1/chat/completions",
		"/v1/responses":                    "/v1/responses",
		"/v1/responses/input_tokens":       "/v1/responses/input_tokens",
		"/v1/responses/compact":            "/v1/responses/compact",
		"/v1/embeddings":                   "/v1/embeddings",
		"/v1/models":                       "/v1/models",
		"/v1/models/claude":                "/v1/models/{id}",
		"/v1/models/org/model":             "/v1/models/{id}",
		"/v1/models/":                      "/v1/models/{id}",
		"/v1/responses/resp_1":             "/v1/responses/{id}",
		"/v1/responses/resp_1/input_items": "/v1/responses/{id}/input_items",
		// No endpoint: the path as called.
		"/v1/responses/":         "/v1/responses/",
		"/v1/responses/resp_1/":  "/v1/responses/resp_1/",
		"/v1/responses/resp_1/x": "/v1/responses/resp_1/x",
		"/v1/messages/":          "/v1/messages/",
		"/v1/files":              "/v1/files",
		"/":                      "/",
		"/v1beta/models/gemini-2.5-pro:generateContent": "/v1beta/models/{model}:generateContent",
		"/v1beta/models/a/b:streamGenerateContent":      "/v1beta/models/{model}:streamGenerateContent",
		"/v1/models/gemini-2.5-pro:countTokens":         "/v1/models/{model}:countTokens",
		"/v1beta/models/gemini-2.5-pro:embedContent":    "/v1beta/models/{id}",
		"/v1beta/models":                "/v1beta/models",
		"/v1beta/models/gemini-2.5-pro": "/v1beta/models/{id}",
	} {
		if got := ledger.Endpoint(path); got != want {
			t.Errorf("Endpoint(%q) = %q, want %q", path, got, want)
		}
	}
}

// Every endpoint a dialect serves runs a model, so its records must be
// usage: a new one missing from the store's list would be left out of the
// usage sums.
func TestDialectEndpointsAreUsage(t *testing.T) {
	for _, d := range dialect.All() {
		for _, ep := range d.Endpoints {
			if e := ledger.Endpoint(ep.Path); e != ep.Path || !store.IsInferenceEndpoint(e) {
				t.Errorf("%s %s: recorded as %q, usage %v", d.Name, ep.Path, e, store.IsInferenceEndpoint(e))
			}
		}
	}
	// A URL-addressed dialect's operations, under each of its routes.
	for _, d := range dialect.All() {
		for _, rt := range d.Addressed {
			for _, op := range []string{"generateContent", "streamGenerateContent", "countTokens"} {
				if e := ledger.Endpoint(rt + "/m:" + op); !store.IsInferenceEndpoint(e) {
					t.Errorf("%s %s: recorded as %q, not usage", d.Name, rt, e)
				}
			}
		}
	}
	for _, e := range []string{"/v1/models", "/v1/models/{id}", "/v1beta/models", "/v1beta/models/{id}", "/v1/responses/{id}", "/v1/responses/{id}/input_items", "/v1/files", ""} {
		if store.IsInferenceEndpoint(e) {
			t.Errorf("%q counts as usage", e)
		}
	}
}

// A record keeps the name the client sent, the configured model it names
// (also one the key may not use, which the gateway routes nowhere), and
// the endpoint.
func TestRowNamesAndEndpoint(t *testing.T) {
	for _, o := range []outcome.Request{
		{ID: "req_alias", Path: "/v1/chat/completions", Model: "e", Routed: "echo", Canonical: "echo", Status: 200},
		{ID: "req_forbidden", Path: "/v1/messages", Model: "free", Canonical: "free", Status: 404},
		{ID: "req_invented", Path: "/v1/messages", Model: "gpt-9", Status: 404},
		{ID: "req_list", Method: "GET", Path: "/v1/models", Status: 200},
	} {
		r := ledger.Row(&o)
		if r.Model != o.Model || r.CanonicalModel != o.Canonical || r.Endpoint != ledger.Endpoint(o.Path) {
			t.Errorf("%s: model %q, canonical %q, endpoint %q", o.ID, r.Model, r.CanonicalModel, r.Endpoint)
		}
	}
}

// A record holds the cache saving when it is known, negative too, and
// null when it is not, as the cost.
func TestRowCacheSavings(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    outcome.Request
		want *int64
	}{
		{"reads saved", outcome.Request{Savings: 2_700_000, SavingsKnown: true, ReadSavings: 2_700_000}, ptr(2_700_000)},
		{"writes cost more", outcome.Request{Savings: -750_000, SavingsKnown: true, WritePremium: 750_000}, ptr(-750_000)},
		{"nothing cached", outcome.Request{SavingsKnown: true}, ptr(0)},
		{"unpriced", outcome.Request{Savings: 0, SavingsKnown: false}, nil},
	} {
		r := ledger.Row(&tc.o)
		if (r.CacheSavingsNano == nil) != (tc.want == nil) || tc.want != nil && *r.CacheSavingsNano != *tc.want {
			t.Errorf("%s: saving %v, want %v", tc.name, r.CacheSavingsNano, tc.want)
		}
	}
}

func ptr(n int64) *int64 { return &n }

// A record names the user, team and agent session of its request.
func TestRowAttribution(t *testing.T) {
	o := outcome.Request{ID: "req_1", Path: "/v1/messages", KeyID: "key_1", UserID: "usr_a", TeamID: "team_1", SessionID: "sess-1"}
	r := ledger.Row(&o)
	if r.KeyID != "key_1" || r.UserID != "usr_a" || r.TeamID != "team_1" || r.SessionID != "sess-1" {
		t.Errorf("attribution: key %q, user %q, team %q, session %q", r.KeyID, r.UserID, r.TeamID, r.SessionID)
	}
}
