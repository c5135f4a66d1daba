package anthropic

import (
	"testing"

	"github.com/tollgate/tollgate/internal/meter"
)

func TestMergeUsage(t *testing.T) {
	tests := []struct {
		name  string
		start meter.Usage
		in    string
		want  meter.Usage
	}{
		{"basic", meter.Usage{}, `{"input_tokens":15,"output_tokens":20,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}`,
			meter.Usage{Input: 15, Output: 20}},
		// input_tokens excludes cache tokens: nothing is subtracted.
		{"cache write without breakdown is 5m", meter.Usage{}, `{"input_tokens":3,"cache_creation_input_tokens":12304,"cache_read_input_tokens":0,"output_tokens":550}`,
			meter.Usage{Input: 3, CacheWrite5m: 12304, Output: 550}},
		{"cache breakdown", meter.Usage{}, `{"input_tokens":3,"cache_creation_input_tokens":300,"cache_creation":{"ephemeral_5m_input_tokens":100,"ephemeral_1h_input_tokens":200},"cache_read_input_tokens":40,"output_tokens":5}`,
			meter.Usage{Input: 3, CacheWrite5m: 100, CacheWrite1h: 200, CacheRead: 40, Output: 5}},
		{"breakdown short of the total", meter.Usage{}, `{"cache_creation_input_tokens":500,"cache_creation":{"ephemeral_5m_input_tokens":100,"ephemeral_1h_input_tokens":200}}`,
			meter.Usage{CacheWrite5m: 300, CacheWrite1h: 200}},
		// message_delta counts are cumulative and partial: assign present fields only.
		{"delta assigns output only", meter.Usage{Input: 472, CacheRead: 10, Output: 2}, `{"output_tokens":503}`,
			meter.Usage{Input: 472, CacheRead: 10, Output: 503}},
		{"delta with full usage overrides", meter.Usage{Input: 1, Output: 1}, `{"input_tokens":9,"cache_read_input_tokens":4,"output_tokens":7}`,
			meter.Usage{Input: 9, CacheRead: 4, Output: 7}},
		{"thinking tokens", meter.Usage{}, `{"input_tokens":1,"output_tokens":90,"output_tokens_details":{"thinking_tokens":60}}`,
			meter.Usage{Input: 1, Output: 90, Reasoning: 60}},
		{"not an object", meter.Usage{Input: 5}, `null`, meter.Usage{Input: 5}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := tc.start
			MergeUsage(&u, tc.in)
			if u != tc.want {
				t.Errorf("MergeUsage(%s) = %+v, want %+v", tc.in, u, tc.want)
			}
		})
	}
}

// A stream's usage is message_start's, then each message_delta's counts
// over it; other events carry none.
func TestMergeEventUsage(t *testing.T) {
	var u meter.Usage
	for _, ev := range []struct{ name, data string }{
		{"message_start", `{"type":"message_start","message":{"usage":{"input_tokens":472,"cache_read_input_tokens":10,"output_tokens":1}}}`},
		{"content_block_delta", `{"type":"content_block_delta","usage":{"output_tokens":999}}`},
		{"message_delta", `{"type":"message_delta","usage":{"output_tokens":503}}`},
	} {
		MergeEventUsage(&u, ev.name, ev.data)
	}
	if want := (meter.Usage{Input: 472, CacheRead: 10, Output: 503}); u != want {
		t.Errorf("got %+v, want %+v", u, want)
	}
}

func TestMergeUsageAllocs(t *testing.T) {
	in := `{"input_tokens":3,"cache_creation_input_tokens":300,"cache_creation":{"ephemeral_5m_input_tokens":100,"ephemeral_1h_input_tokens":200},"cache_read_input_tokens":40,"output_tokens":5}`
	var u meter.Usage
	if n := testing.AllocsPerRun(100, func() { MergeUsage(&u, in) }); n != 0 {
		t.Errorf("MergeUsage allocates %v times per call, want 0", n)
	}
}
