package gateway_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
)

// bedrockChunk is Bedrock's event-stream frame for one Anthropic event.
func bedrockChunk(t *testing.T, event string) []byte {
	t.Helper()
	var b bytes.Buffer
	err := eventstream.NewEncoder().Encode(&b, eventstream.Message{
		Headers: eventstream.Headers{
			{Name: ":event-type", Value: eventstream.StringValue("chunk")},
			{Name: ":content-type", Value: eventstream.StringValue("application/json")},
			{Name: ":message-type", Value: eventstream.StringValue("event")},
		},
		Payload: []byte(`{"bytes":"` + base64.StdEncoding.EncodeToString([]byte(event)) + `"}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// bedrockYAML configures one Bedrock provider (static keys) at endpoint,
// serving model claude-x.
func bedrockYAML(endpoint string) string {
	return `
providers:
  - { name: aws, type: bedrock, region: us-east-1, access_key_id: AKIDTOLLGATETEST, secret_access_key: bedrock-test-secret, endpoint: "` + endpoint + `" }
models:
  - { name: claude-x, targets: [ { provider: aws, model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0" } ] }
`
}

// TestBedrockStreamFrameByFrame: each Bedrock frame reaches the client
// as soon as it has arrived whole, while the upstream has not sent the
// next. The upstream sends frame k+1 only once the client has seen event
// k, so a relay that waits for more bytes before handing on what it has
// never gets them.
func TestBedrockStreamFrameByFrame(t *testing.T) {
	events := []string{
		`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude","content":[],"stop_reason":null,"usage":{"input_tokens":7,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
	}
	for i := range 4 {
		events = append(events, fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"part%d "}}`, i))
	}
	events = append(events, `{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":4}}`,
		`{"type":"message_stop"}`)

	seen := make(chan struct{}) // the client saw the last frame's event
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		for _, ev := range events {
			w.Write(bedrockChunk(t, ev))
			rc.Flush()
			select {
			case <-seen:
			case <-r.Context().Done():
				return
			}
		}
	}))
	t.Cleanup(up.Close)
	e := newEnvYAML(t, bedrockYAML(up.URL))
	t.Cleanup(up.CloseClientConnections) // first: a stuck relay lets go

	type result struct {
		event string
		err   error
	}
	got := make(chan result)
	done := make(chan struct{})
	defer close(done)
	go func() {
		send := func(r result) bool {
			select {
			case got <- r:
				return true
			case <-done:
				return false
			}
		}
		req, _ := http.NewRequest("POST", e.gw.URL+"/v1/messages", strings.NewReader(`{"model":"claude-x","max_tokens":16,"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
		for _, h := range anthropicAuth {
			k, v, _ := strings.Cut(h, ":")
			req.Header.Set(k, strings.TrimSpace(v))
		}
		resp, err := e.gw.Client().Do(req)
		if err != nil {
			send(result{err: err})
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			send(result{err: fmt.Errorf("status %d", resp.StatusCode)})
			return
		}
		br := bufio.NewReader(resp.Body)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				send(result{err: err})
				return
			}
			if data, ok := strings.CutPrefix(line, "data: "); ok && !strings.Contains(data, `"type":"ping"`) {
				if !send(result{event: strings.TrimSpace(data)}) {
					return
				}
			}
		}
	}()

	// A failure guard only: a relay that holds events back never delivers.
	guard := time.NewTimer(20 * time.Second)
	defer guard.Stop()
	for k, want := range events {
		select {
		case r := <-got:
			if r.err != nil {
				t.Fatalf("before event %d: %v", k, r.err)
			}
			if r.event != want {
				t.Fatalf("event %d = %s, want %s", k, r.event, want)
			}
		case <-guard.C:
			t.Fatalf("event %d did not reach the client while the upstream waited to send frame %d", k, k+1)
		}
		select {
		case seen <- struct{}{}:
		case <-guard.C:
			t.Fatalf("the upstream did not wait for event %d", k)
		}
	}
}
