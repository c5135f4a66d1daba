package provider

import (
	"bytes"
	"encoding/base64"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
)

// frame encodes one event-stream message as Bedrock sends it.
func frame(t testing.TB, messageType, kind string, payload []byte) []byte {
	t.Helper()
	name := ":event-type"
	if messageType == "exception" {
		name = ":exception-type"
	}
	var b bytes.Buffer
	if err := eventstream.NewEncoder().Encode(&b, eventstream.Message{Headers: eventstream.Headers{
		{Name: name, Value: eventstream.StringValue(kind)},
		{Name: ":content-type", Value: eventstream.StringValue("application/json")},
		{Name: ":message-type", Value: eventstream.StringValue(messageType)},
	}, Payload: payload}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func chunk(t testing.TB, event string) []byte {
	return frame(t, "event", "chunk", []byte(`{"bytes":"`+base64.StdEncoding.EncodeToString([]byte(event))+`"}`))
}

// TestEventStreamSSE: chunks become events named by their type, with their
// bytes as data (JSON over several lines compacted to one); other events
// are skipped; an exception ends the stream as an error event; a stream
// cut inside a frame is an error.
func TestEventStreamSSE(t *testing.T) {
	in := bytes.Join([][]byte{
		chunk(t, `{"type":"message_start","message":{"id":"m"}}`),
		frame(t, "event", "metadata", []byte(`{}`)),
		chunk(t, "{\"type\":\"content_block_delta\",\n \"delta\":{\"text\":\"a\\nb\"}}"),
		frame(t, "exception", "internalServerException", []byte(`{"message":"boom"}`)),
		chunk(t, `{"type":"never_read"}`),
	}, nil)
	got, err := io.ReadAll(newEventStreamSSE(io.NopCloser(bytes.NewReader(in))))
	want := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"text\":\"a\\nb\"}}\n\n" +
		"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"boom\"}}\n\n"
	if err != nil || string(got) != want {
		t.Fatalf("%v\n%s\nwant\n%s", err, got, want)
	}
	cut := chunk(t, `{"type":"ping"}`)
	_, err = io.ReadAll(newEventStreamSSE(io.NopCloser(bytes.NewReader(cut[:len(cut)-3]))))
	if err == nil || !strings.Contains(err.Error(), "bedrock event stream") {
		t.Fatalf("a frame cut short: %v", err)
	}
}

// FuzzEventStreamSSE: whatever bytes arrive, the reader ends (EOF or an
// error), never panics, and what it yields is well-formed server-sent
// events: "event:" and "data:" lines, each event ended by a blank line.
func FuzzEventStreamSSE(f *testing.F) {
	f.Add(chunk(f, `{"type":"message_start"}`))
	f.Add(append(chunk(f, `{"type":"ping"}`), frame(f, "exception", "throttlingException", []byte(`{"message":"x"}`))...))
	f.Add(frame(f, "event", "chunk", []byte(`{"bytes":"!!"}`)))
	f.Add(chunk(f, "{\"type\":\"a\nb\"}"))
	f.Add([]byte{0, 0, 0, 16, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, in []byte) {
		got, _ := io.ReadAll(io.LimitReader(newEventStreamSSE(io.NopCloser(bytes.NewReader(in))), 1<<22))
		s := string(got)
		if s == "" {
			return
		}
		if !strings.HasSuffix(s, "\n\n") {
			t.Fatalf("an event not ended: %q", s)
		}
		for _, ev := range strings.Split(strings.TrimSuffix(s, "\n\n"), "\n\n") {
			lines := strings.Split(ev, "\n")
			if len(lines) > 2 || !strings.HasPrefix(lines[len(lines)-1], "data: ") || len(lines) == 2 && !strings.HasPrefix(lines[0], "event: ") {
				t.Fatalf("malformed event %q", ev)
			}
			if strings.Contains(ev, "\r") {
				t.Fatalf("a carriage return in %q", ev)
			}
		}
	})
}
