package provider

import (
	"testing"

	"github.com/tollgate/tollgate/internal/config"
)

// TestPriceModels: each cloud's model ids resolve to the price
// catalogue's (config.PriceModel, through the type's registration).
func TestPriceModels(t *testing.T) {
	for _, tc := range []struct{ typ, in, want string }{
		{"bedrock", "anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5-20250929"},
		{"bedrock", "us.anthropic.claude-opus-4-1-20250805-v1:0", "claude-opus-4-1-20250805"},
		{"bedrock", "global.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5-20251001"},
		{"bedrock", "apac.anthropic.claude-3-5-sonnet-20241022-v2:0", "claude-3-5-sonnet-20241022"},
		{"bedrock", "anthropic.claude-instant-v1", "claude-instant"},
		{"bedrock", "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5-20250929"},
		{"bedrock", "meta.llama3-70b-instruct-v1:0", "meta.llama3-70b-instruct-v1:0"},
		{"bedrock", "claude-sonnet-4-5", "claude-sonnet-4-5"},
		{"bedrock", "x.y.anthropic.claude", "x.y.anthropic.claude"},
		{"vertex", "claude-sonnet-4-5@20250929", "claude-sonnet-4-5-20250929"},
		{"vertex", "claude-opus-4-1@20250805", "claude-opus-4-1-20250805"},
		{"vertex", "claude-haiku-4-5", "claude-haiku-4-5"},
		{"vertex", "claude-3-5-haiku@latest", "claude-3-5-haiku"},
		{"anthropic", "claude-sonnet-4-5@20250929", "claude-sonnet-4-5@20250929"},
	} {
		if got := config.PriceModel(tc.typ, tc.in); got != tc.want {
			t.Errorf("%s: PriceModel(%q) = %q, want %q", tc.typ, tc.in, got, tc.want)
		}
	}
}
