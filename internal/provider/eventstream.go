package provider

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"unsafe"

	"github.com/tidwall/gjson"
	"github.com/tollgate/tollgate/internal/scrub"
)

// unsafeString views b as a string without copying; b must not change
// while the string is used.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// unsafeBytes views s as bytes without copying; they must not be written.
func unsafeBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// eventStreamSSE reads an AWS event stream (application/vnd.amazon.eventstream:
// binary frames, each CRC-checked: eventframe.go) whose chunk events
// carry Anthropic stream events base64-encoded, and yields those events as
// server-sent events, their payloads the upstream's bytes. An exception
// frame becomes the Anthropic error event and ends the stream; a frame
// that does not decode (a bad CRC, a cut connection) is a read error.
type eventStreamSSE struct {
	src    io.ReadCloser
	br     *bufio.Reader
	frames eventFrameReader
	event  []byte // a chunk's decoded event, reused
	out    []byte // SSE bytes not yet read
	off    int
	err    error        // returned once out is drained
	log    *slog.Logger // gets an exception's text (not the request: its body would stay)
	id     string       // the request's id
}

func newEventStreamSSE(src io.ReadCloser, r *Request) io.ReadCloser {
	e := eventStreamPool.Get().(*eventStreamSSE)
	e.src, e.log, e.id = src, r.logger(), r.ID
	e.br.Reset(src)
	e.frames.r = e.br
	return &pooledStream{e}
}

// pooledStream is one stream's hold on a pooled reader: closing it gives
// the reader back, once; reading after that fails.
type pooledStream struct{ e *eventStreamSSE }

func (p *pooledStream) Read(b []byte) (int, error) {
	if p.e == nil {
		return 0, errReadAfterClose
	}
	return p.e.Read(b)
}

func (p *pooledStream) Close() error {
	if p.e == nil {
		return nil
	}
	e := p.e
	p.e = nil
	return e.close()
}

var errReadAfterClose = errors.New("bedrock event stream: read after close")

// Read returns the events of one frame at least, and of every further
// frame that has arrived whole: never waiting for a frame while it holds
// an event, and handing the relay many events at once when they came
// together.
func (e *eventStreamSSE) Read(p []byte) (int, error) {
	for e.off >= len(e.out) {
		if e.err != nil {
			return 0, e.err
		}
		e.out, e.off = e.out[:0], 0
		e.err = e.next()
		for e.err == nil && len(e.out) < len(p) && e.frameBuffered() {
			e.err = e.next()
		}
	}
	n := copy(p, e.out[e.off:])
	e.off += n
	return n, nil
}

// frameBuffered reports whether a whole frame is in the buffer, so that
// decoding it cannot block. It never reads: Peek would wait for the
// upstream when fewer than four bytes are buffered, holding back the
// events already decoded until the next frame arrives.
func (e *eventStreamSSE) frameBuffered() bool {
	n := e.br.Buffered()
	if n < 4 {
		return false
	}
	head, _ := e.br.Peek(4) // buffered: returns at once
	return int(binary.BigEndian.Uint32(head)) <= n
}

// close closes the upstream's body and gives the reader, with its
// buffers, back to the pool.
func (e *eventStreamSSE) close() error {
	err := e.src.Close()
	e.src, e.off, e.err, e.log, e.id = nil, 0, nil, nil, ""
	e.br.Reset(nil)
	if cap(e.out) > 64<<10 || cap(e.frames.buf) > 64<<10 || cap(e.event) > 64<<10 {
		return err // an outsized stream: its buffers go to the collector
	}
	e.out, e.event = e.out[:0], e.event[:0]
	eventStreamPool.Put(e)
	return err
}

// eventStreamPool keeps readers with their buffers between streams.
var eventStreamPool = sync.Pool{New: func() any { return &eventStreamSSE{br: bufio.NewReaderSize(nil, 16<<10)} }}

// ErrEventStream marks an event stream that could not be decoded.
var ErrEventStream = errors.New("bedrock event stream")

// next decodes one frame into e.out; io.EOF at the end of the stream.
func (e *eventStreamSSE) next() error {
	f, err := e.frames.next()
	if err != nil {
		if err == io.EOF {
			return io.EOF // between frames: the stream's end
		}
		return fmt.Errorf("%w: %w", ErrEventStream, err)
	}
	switch string(f.messageType) {
	case "event":
		if string(f.eventType) != "chunk" {
			return nil // no other event type carries model output
		}
		// The payload is read in place: the frame's buffer lives until
		// the next frame, and the event is decoded out of it now.
		b64 := gjson.Get(unsafeString(f.payload), "bytes")
		if b64.Type != gjson.String {
			return fmt.Errorf("%w: a chunk without bytes", ErrEventStream)
		}
		ev, err := base64.StdEncoding.AppendDecode(e.event[:0], unsafeBytes(b64.Str))
		if err != nil {
			return fmt.Errorf("%w: a chunk's bytes are not base64: %w", ErrEventStream, err)
		}
		e.event = ev
		e.out = appendSSE(e.out, gjson.Get(unsafeString(ev), "type").Str, ev)
		return nil
	case "exception":
		message := gjson.GetBytes(f.payload, "message").Str
		if message == "" {
			message = gjson.GetBytes(f.payload, "Message").Str
		}
		e.out = appendSSE(e.out, "error", e.errorBody(bedrockError(string(f.exceptionType), 0), message))
		return io.EOF
	case "error":
		e.out = appendSSE(e.out, "error", e.errorBody(bedrockError(string(f.errorCode), 0), string(f.errorMessage)))
		return io.EOF
	}
	return fmt.Errorf("%w: a frame of message type %q", ErrEventStream, f.messageType)
}

// errorBody is the error event of an exception inside a stream: its
// message scrubbed of the account's identifiers or, for a refused
// credential, not relayed at all (the client must not take it for its
// own key's fault). The log gets the original.
func (e *eventStreamSSE) errorBody(k anthropicError, message string) []byte {
	out := scrub.String(message)
	if k.status == http.StatusUnauthorized || k.status == http.StatusForbidden {
		k, out = anthropicError{http.StatusBadGateway, "api_error"}, "the gateway could not authenticate to the upstream provider"
	}
	if out != message {
		e.log.LogAttrs(context.Background(), slog.LevelWarn, "upstream stream error not relayed as it is",
			slog.String("request_id", e.id), slog.String("upstream_error", message))
	}
	return anthropicErrorBody(k, out)
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
