package openai

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
		// prompt_tokens includes cached tokens: they must not be billed twice.
		{"cached tokens moved out of input", `{"prompt_tokens":1000,"completion_tokens":50,"total_tokens":1050,"prompt_tokens_details":{"cached_tokens":800}}`,
			meter.Usage{Input: 200, CacheRead: 800, Output: 50}},
		{"reasoning", `{"prompt_tokens":10,"completion_tokens":500,"completion_tokens_details":{"reasoning_tokens":450}}`,
			meter.Usage{Input: 10, Output: 500, Reasoning: 450}},
		{"compatible cache writes", `{"prompt_tokens":100,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":20,"cache_write_tokens":30}}`,
			meter.Usage{Input: 50, CacheRead: 20, CacheWrite5m: 30, Output: 1}},
		{"compatible cache creation", `{"prompt_tokens":100,"completion_tokens":1,"prompt_tokens_details":{"cache_creation_tokens":30}}`,
			meter.Usage{Input: 70, CacheWrite5m: 30, Output: 1}},
		{"never negative", `{"prompt_tokens":5,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":800}}`,
			meter.Usage{Input: 0, CacheRead: 800, Output: 1}},
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

func TestSetUsageAllocs(t *testing.T) {
	in := `{"prompt_tokens":1000,"completion_tokens":50,"total_tokens":1050,"prompt_tokens_details":{"cached_tokens":800}}`
	var u meter.Usage
	if n := testing.AllocsPerRun(100, func() { SetUsage(&u, in) }); n != 0 {
		t.Errorf("SetUsage allocates %v times per call, want 0", n)
	}
}
