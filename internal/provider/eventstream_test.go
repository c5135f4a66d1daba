package provider

import (
	"bytes"
	"encoding/base64"
	"io"
	"strings"
	"testing"
	"time"

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
	got, err := io.ReadAll(newEventStreamSSE(io.NopCloser(bytes.NewReader(in)), &Request{}))
	want := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"text\":\"a\\nb\"}}\n\n" +
		"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"boom\"}}\n\n"
	if err != nil || string(got) != want {
		t.Fatalf("%v\n%s\nwant\n%s", err, got, want)
	}
	cut := chunk(t, `{"type":"ping"}`)
	_, err = io.ReadAll(newEventStreamSSE(io.NopCloser(bytes.NewReader(cut[:len(cut)-3])), &Request{}))
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
		got, _ := io.ReadAll(io.LimitReader(newEventStreamSSE(io.NopCloser(bytes.NewReader(in)), &Request{}), 1<<22))
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

// BenchmarkEventStreamSSE measures a Bedrock stream of 52 frames (a
// message's events) turned into server-sent events.
func BenchmarkEventStreamSSE(b *testing.B) {
	var in []byte
	in = append(in, chunk(b, `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude","content":[],"usage":{"input_tokens":300,"output_tokens":1}}}`)...)
	for range 50 {
		in = append(in, chunk(b, `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"gateway "}}`)...)
	}
	in = append(in, chunk(b, `{"type":"message_stop"}`)...)
	buf := make([]byte, 32<<10)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		r := newEventStreamSSE(io.NopCloser(bytes.NewReader(in)), &Request{})
		for {
			if _, err := r.Read(buf); err != nil {
				break
			}
		}
		r.Close()
	}
}

// FuzzEventFrameMatchesSDK: every frame eventFrameReader decodes, the
// SDK's decoder (the reference) decodes to the same headers and payload.
// It may refuse more than the SDK (bounds the SDK leaves to its reads),
// never less.
func FuzzEventFrameMatchesSDK(f *testing.F) {
	f.Add(append(chunk(f, `{"type":"ping"}`), frame(f, "exception", "throttlingException", []byte(`{"message":"x"}`))...))
	f.Add(frame(f, "event", "metadata", nil))
	f.Add([]byte{0, 0, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, in []byte) {
		mine := eventFrameReader{r: bytes.NewReader(in)}
		sdk, src := eventstream.NewDecoder(), bytes.NewReader(in)
		for i := 0; ; i++ {
			got, err := mine.next()
			if err != nil {
				return
			}
			want, err := sdk.Decode(src, nil)
			if err != nil {
				t.Fatalf("frame %d: decoded here, refused by the SDK: %v", i, err)
			}
			for _, h := range []struct {
				name string
				got  []byte
			}{{":message-type", got.messageType}, {":event-type", got.eventType}, {":exception-type", got.exceptionType},
				{":error-code", got.errorCode}, {":error-message", got.errorMessage}} {
				var w string
				for _, hv := range want.Headers {
					if hv.Name == h.name {
						if s, ok := hv.Value.Get().(string); ok {
							w = s
						}
					}
				}
				if string(h.got) != w {
					t.Fatalf("frame %d: %s %q, the SDK %q", i, h.name, h.got, w)
				}
			}
			if !bytes.Equal(got.payload, want.Payload) {
				t.Fatalf("frame %d: payload %q, the SDK %q", i, got.payload, want.Payload)
			}
		}
	})
}

// FuzzEventFrameRoundTrip: whatever the SDK's encoder writes (headers of
// every value type, any payload), eventFrameReader reads back.
func FuzzEventFrameRoundTrip(f *testing.F) {
	f.Add("event", "chunk", []byte(`{"bytes":"e30="}`), int64(7), []byte("raw"), true)
	f.Add("exception", "", []byte{}, int64(-1), []byte{}, false)
	f.Fuzz(func(t *testing.T, messageType, eventType string, payload []byte, n int64, raw []byte, flag bool) {
		if len(messageType) > 1000 || len(eventType) > 1000 || len(raw) > 1000 || len(payload) > 1<<20 {
			return
		}
		msg := eventstream.Message{Headers: eventstream.Headers{
			{Name: ":message-type", Value: eventstream.StringValue(messageType)},
			{Name: "b", Value: eventstream.BoolValue(flag)},
			{Name: "i8", Value: eventstream.Int8Value(int8(n))},
			{Name: "i16", Value: eventstream.Int16Value(int16(n))},
			{Name: "i32", Value: eventstream.Int32Value(int32(n))},
			{Name: "i64", Value: eventstream.Int64Value(n)},
			{Name: "raw", Value: eventstream.BytesValue(raw)},
			{Name: "ts", Value: eventstream.TimestampValue(time.UnixMilli(n % (1 << 40)))},
			{Name: "id", Value: eventstream.UUIDValue{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}},
			{Name: ":event-type", Value: eventstream.StringValue(eventType)},
		}, Payload: payload}
		var b bytes.Buffer
		if err := eventstream.NewEncoder().Encode(&b, msg); err != nil {
			t.Skip(err)
		}
		got, err := (&eventFrameReader{r: &b}).next()
		if err != nil {
			t.Fatalf("a frame the SDK wrote: %v", err)
		}
		if string(got.messageType) != messageType || string(got.eventType) != eventType || !bytes.Equal(got.payload, payload) {
			t.Fatalf("read back %q %q %q", got.messageType, got.eventType, got.payload)
		}
	})
}
