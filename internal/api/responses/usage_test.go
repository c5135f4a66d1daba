package responses

import (
	"testing"

	"github.com/tollgate/tollgate/internal/meter"
)

func TestSetUsage(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want meter.Usage
	}{
		// input_tokens includes cached tokens: they must not be billed twice.
		{"cached tokens moved out of input", `{"input_tokens":1000,"input_tokens_details":{"cached_tokens":800},"output_tokens":50,"output_tokens_details":{"reasoning_tokens":30},"total_tokens":1050}`,
			meter.Usage{Input: 200, CacheRead: 800, Output: 50, Reasoning: 30}},
		{"never negative", `{"input_tokens":5,"input_tokens_details":{"cached_tokens":800},"output_tokens":1}`,
			meter.Usage{CacheRead: 800, Output: 1}},
		{"not an object", `null`, meter.Usage{Input: 99, CacheWrite1h: 7}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := meter.Usage{Input: 99, CacheWrite1h: 7}
			SetUsage(&u, tc.in)
			if u != tc.want {
				t.Errorf("SetUsage(%s) = %+v, want %+v", tc.in, u, tc.want)
			}
		})
	}
}
