package gateway

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/tokens"
)

// TestEstimateSampleHoldsText: the sample reaches past a stream's opening
// events to its text, so a client that leaves a Responses stream (whose
// first two events repeat the whole response object) is not billed for
// nothing; and a first event larger than the whole sample still gives an
// estimate, at a fixed rate.
func TestEstimateSampleHoldsText(t *testing.T) {
	obj := `{"id":"resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b","object":"response","created_at":1741476542,"status":"in_progress","background":false,"error":null,"incomplete_details":null,"instructions":null,"max_output_tokens":null,"max_tool_calls":null,"model":"gpt-4.1-2025-04-14","output":[],"parallel_tool_calls":true,"previous_response_id":null,"prompt_cache_key":null,"reasoning":{"effort":null,"summary":null},"safety_identifier":null,"service_tier":"auto","store":true,"temperature":1.0,"text":{"format":{"type":"text"},"verbosity":"medium"},"tool_choice":"auto","tools":[],"top_logprobs":0,"top_p":1.0,"truncation":"disabled","usage":null,"user":null,"metadata":{}}`
	var r relayed
	defer r.release()
	r.add([]byte("event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":" + obj + "}\n\n"))
	r.add([]byte("event: response.in_progress\ndata: {\"type\":\"response.in_progress\",\"sequence_number\":1,\"response\":" + obj + "}\n\n"))
	var text strings.Builder
	for i := range 300 {
		w := fmt.Sprintf(" word%d", i%10)
		text.WriteString(w)
		r.add(fmt.Appendf(nil, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":%d,\"item_id\":\"msg_67ccd2bf17f0819081ff3bb2cf6508e60bb6a6b452d3795b\",\"output_index\":0,\"content_index\":0,\"delta\":%q,\"logprobs\":[]}\n\n", i+2, w))
	}
	var c tokens.Counter
	c.Add(text.String())
	want := int64(c.Tokens())
	got := r.outputTokens(context.Background(), dialect.Responses.Generated)
	if got < want/2 || got > want*2 {
		t.Errorf("estimated %d output tokens for %d tokens of text relayed", got, want)
	}

	var big relayed
	defer big.release()
	big.add([]byte("event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"instructions\":\"" + strings.Repeat("x", 2*sampleBytes) + "\"}}\n\n"))
	big.add([]byte("event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"hello world\"}\n\n"))
	if got := big.outputTokens(context.Background(), dialect.Responses.Generated); got <= 0 || got > big.bytes {
		t.Errorf("a first event larger than the sample: estimated %d tokens for %d bytes", got, big.bytes)
	}
}
