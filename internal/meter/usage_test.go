package meter

import "testing"

func TestMergeAnthropic(t *testing.T) {
	tests := []struct {
		name  string
		start Usage
		in    string
		want  Usage
	}{
		{"basic", Usage{}, `{"input_tokens":15,"output_tokens":20,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}`,
			Usage{Input: 15, Output: 20}},
		// Anthropic input_tokens excludes cache tokens: nothing is subtracted.
		{"cache write without breakdown is 5m", Usage{}, `{"input_tokens":3,"cache_creation_input_tokens":12304,"cache_read_input_tokens":0,"output_tokens":550}`,
			Usage{Input: 3, CacheWrite5m: 12304, Output: 550}},
		{"cache breakdown", Usage{}, `{"input_tokens":3,"cache_creation_input_tokens":300,"cache_creation":{"ephemeral_5m_input_tokens":100,"ephemeral_1h_input_tokens":200},"cache_read_input_tokens":40,"output_tokens":5}`,
			Usage{Input: 3, CacheWrite5m: 100, CacheWrite1h: 200, CacheRead: 40, Output: 5}},
		// message_delta counts are cumulative and partial: assign present fields only.
		{"delta assigns output only", Usage{Input: 472, CacheRead: 10, Output: 2}, `{"output_tokens":503}`,
			Usage{Input: 472, CacheRead: 10, Output: 503}},
		{"delta with full usage overrides", Usage{Input: 1, Output: 1}, `{"input_tokens":9,"cache_read_input_tokens":4,"output_tokens":7}`,
			Usage{Input: 9, CacheRead: 4, Output: 7}},
		{"thinking tokens", Usage{}, `{"input_tokens":1,"output_tokens":90,"output_tokens_details":{"thinking_tokens":60}}`,
			Usage{Input: 1, Output: 90, Reasoning: 60}},
		{"not an object", Usage{Input: 5}, `null`, Usage{Input: 5}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := tc.start
			u.MergeAnthropic(tc.in)
			if u != tc.want {
				t.Errorf("MergeAnthropic(%s) = %+v, want %+v", tc.in, u, tc.want)
			}
		})
	}
}

func TestSetOpenAI(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Usage
	}{
		// prompt_tokens includes cached tokens: they must not be billed twice.
		{"cached tokens moved out of input", `{"prompt_tokens":1000,"completion_tokens":50,"total_tokens":1050,"prompt_tokens_details":{"cached_tokens":800}}`,
			Usage{Input: 200, CacheRead: 800, Output: 50}},
		{"reasoning", `{"prompt_tokens":10,"completion_tokens":500,"completion_tokens_details":{"reasoning_tokens":450}}`,
			Usage{Input: 10, Output: 500, Reasoning: 450}},
		{"compatible cache writes", `{"prompt_tokens":100,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":20,"cache_write_tokens":30}}`,
			Usage{Input: 50, CacheRead: 20, CacheWrite5m: 30, Output: 1}},
		{"never negative", `{"prompt_tokens":5,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":800}}`,
			Usage{Input: 0, CacheRead: 800, Output: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := Usage{Input: 99, CacheWrite1h: 7}
			u.SetOpenAI(tc.in)
			if u != tc.want {
				t.Errorf("SetOpenAI(%s) = %+v, want %+v", tc.in, u, tc.want)
			}
		})
	}
}

func TestUsageAllocs(t *testing.T) {
	in := string(`{"input_tokens":3,"cache_creation_input_tokens":300,"cache_creation":{"ephemeral_5m_input_tokens":100,"ephemeral_1h_input_tokens":200},"cache_read_input_tokens":40,"output_tokens":5}`)
	oai := string(`{"prompt_tokens":1000,"completion_tokens":50,"total_tokens":1050,"prompt_tokens_details":{"cached_tokens":800}}`)
	var u Usage
	if n := testing.AllocsPerRun(100, func() { u.MergeAnthropic(in); u.SetOpenAI(oai) }); n != 0 {
		t.Errorf("usage extraction allocates %v times per call, want 0", n)
	}
}

func TestSetGemini(t *testing.T) {
	var u Usage
	u.SetGemini(`{"promptTokenCount":1200,"cachedContentTokenCount":1000,"candidatesTokenCount":40,"thoughtsTokenCount":300,"toolUsePromptTokenCount":5,"totalTokenCount":1545}`)
	if want := (Usage{Input: 205, CacheRead: 1000, Output: 340, Reasoning: 300}); u != want {
		t.Errorf("got %+v, want %+v", u, want)
	}
	u.SetGemini(`{"promptTokenCount":7}`)
	if u != (Usage{Input: 7}) {
		t.Errorf("a first chunk's usage: %+v", u)
	}
	u.SetGemini(`not json`)
	if u != (Usage{Input: 7}) {
		t.Errorf("garbage changed the usage: %+v", u)
	}
}
