package provider

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/tidwall/gjson"
)

// eventStreamSSE reads an AWS event stream (application/vnd.amazon.eventstream:
// binary frames, each CRC-checked by the SDK's decoder) whose chunk events
// carry Anthropic stream events base64-encoded, and yields those events as
// server-sent events, their payloads the upstream's bytes. An exception
// frame becomes the Anthropic error event and ends the stream; a frame
// that does not decode (a bad CRC, a cut connection) is a read error.
type eventStreamSSE struct {
	src     io.ReadCloser
	dec     *eventstream.Decoder
	payload []byte // the decoder's payload buffer, reused
	event   []byte // a chunk's decoded event, reused
	out     []byte // SSE bytes not yet read
	off     int
	err     error // returned once out is drained
}

func newEventStreamSSE(src io.ReadCloser) *eventStreamSSE {
	return &eventStreamSSE{src: src, dec: eventstream.NewDecoder()}
}

func (e *eventStreamSSE) Read(p []byte) (int, error) {
	for e.off >= len(e.out) {
		if e.err != nil {
			return 0, e.err
		}
		e.out, e.off = e.out[:0], 0
		e.err = e.next()
	}
	n := copy(p, e.out[e.off:])
	e.off += n
	return n, nil
}

func (e *eventStreamSSE) Close() error { return e.src.Close() }

// ErrEventStream marks an event stream that could not be decoded.
var ErrEventStream = errors.New("bedrock event stream")

// next decodes one frame into e.out; io.EOF at the end of the stream.
func (e *eventStreamSSE) next() error {
	msg, err := e.dec.Decode(e.src, e.payload[:0])
	if err != nil {
		if errors.Is(err, io.EOF) {
			return io.EOF // between frames: the stream's end
		}
		return fmt.Errorf("%w: %w", ErrEventStream, err)
	}
	if cap(msg.Payload) > cap(e.payload) {
		e.payload = msg.Payload[:0]
	}
	switch headerString(msg.Headers, ":message-type") {
	case "event":
		if headerString(msg.Headers, ":event-type") != "chunk" {
			return nil // no other event type carries model output
		}
		b64 := gjson.GetBytes(msg.Payload, "bytes")
		if b64.Type != gjson.String {
			return fmt.Errorf("%w: a chunk without bytes", ErrEventStream)
		}
		ev, err := base64.StdEncoding.AppendDecode(e.event[:0], []byte(b64.Str))
		if err != nil {
			return fmt.Errorf("%w: a chunk's bytes are not base64: %w", ErrEventStream, err)
		}
		e.event = ev
		e.out = appendSSE(e.out, gjson.GetBytes(ev, "type").Str, ev)
		return nil
	case "exception":
		kind := headerString(msg.Headers, ":exception-type")
		message := gjson.GetBytes(msg.Payload, "message").Str
		if message == "" {
			message = gjson.GetBytes(msg.Payload, "Message").Str
		}
		e.out = appendSSE(e.out, "error", anthropicErrorBody(bedrockError(kind, 0), message))
		return io.EOF
	case "error":
		code, message := headerString(msg.Headers, ":error-code"), headerString(msg.Headers, ":error-message")
		e.out = appendSSE(e.out, "error", anthropicErrorBody(bedrockError(code, 0), message))
		return io.EOF
	}
	return fmt.Errorf("%w: a frame of message type %q", ErrEventStream, headerString(msg.Headers, ":message-type"))
}

func headerString(h eventstream.Headers, name string) string {
	if v := h.Get(name); v != nil {
		if s, ok := v.Get().(string); ok {
			return s
		}
	}
	return ""
}

// appendSSE appends one server-sent event. The data must be one line:
// JSON that spans lines is compacted, which changes only its whitespace.
func appendSSE(out []byte, event string, data []byte) []byte {
	if bytes.ContainsAny(data, "\r\n") {
		var c bytes.Buffer
		if json.Compact(&c, data) == nil {
			data = c.Bytes()
		} else {
			data = bytes.ReplaceAll(bytes.ReplaceAll(data, []byte("\r"), nil), []byte("\n"), nil)
		}
	}
	if event != "" && !strings.ContainsAny(event, "\r\n") {
		out = append(append(append(out, "event: "...), event...), '\n')
	}
	out = append(append(append(out, "data: "...), data...), "\n\n"...)
	return out
}
