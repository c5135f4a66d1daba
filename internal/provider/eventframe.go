package provider

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// eventFrame is one message of an AWS event stream, as the Bedrock relay
// reads it: the headers it uses and the payload, slices of the reader's
// buffer (valid until the next frame).
//
// The SDK's decoder (aws/protocol/eventstream) is the reference: the
// tests check, by fuzzing, that every frame decoded here is decoded the
// same by it. It is not used on the hot path because it reads the frame a
// byte at a time through interface values and allocates some forty
// objects per frame; a Bedrock stream of 52 frames cost more than twice
// the CPU of the same stream from Anthropic.
type eventFrame struct {
	messageType, eventType, exceptionType []byte
	errorCode, errorMessage               []byte
	payload                               []byte
}

// Event-stream framing: a 12-byte prelude (total length, headers length,
// prelude CRC), the headers, the payload, and the message CRC (CRC-32).
const (
	framePrelude    = 12
	frameMinLen     = framePrelude + 4
	frameMaxPayload = 16 << 20 // the SDK's own bound on what it decodes
	frameMaxHeaders = 128 << 10
)

// eventFrameReader decodes frames from r into a buffer it reuses.
type eventFrameReader struct {
	r   io.Reader
	buf []byte
}

// next reads one frame. io.EOF means the stream ended cleanly between
// frames; any other error is a broken stream.
func (d *eventFrameReader) next() (eventFrame, error) {
	var f eventFrame
	if cap(d.buf) < framePrelude {
		d.buf = make([]byte, 0, 4<<10)
	}
	pre := d.buf[:framePrelude]
	if n, err := io.ReadFull(d.r, pre); err != nil {
		if n == 0 && errors.Is(err, io.EOF) {
			return f, io.EOF
		}
		return f, fmt.Errorf("a frame's prelude: %w", err)
	}
	total, headersLen := binary.BigEndian.Uint32(pre[0:4]), binary.BigEndian.Uint32(pre[4:8])
	if crc32.ChecksumIEEE(pre[:8]) != binary.BigEndian.Uint32(pre[8:12]) {
		return f, errors.New("a frame's prelude fails its CRC check")
	}
	if total < frameMinLen || headersLen > total-frameMinLen || headersLen > frameMaxHeaders || total-frameMinLen-headersLen > frameMaxPayload {
		return f, fmt.Errorf("a frame of %d bytes with %d bytes of headers", total, headersLen)
	}
	if int(total) > cap(d.buf) {
		d.buf = append(d.buf[:framePrelude], make([]byte, int(total)-framePrelude)...)
	}
	b := d.buf[:total]
	if _, err := io.ReadFull(d.r, b[framePrelude:]); err != nil {
		return f, fmt.Errorf("a frame cut short: %w", io.ErrUnexpectedEOF)
	}
	if crc32.ChecksumIEEE(b[:total-4]) != binary.BigEndian.Uint32(b[total-4:]) {
		return f, errors.New("a frame fails its CRC check")
	}
	if err := f.headers(b[framePrelude : framePrelude+headersLen]); err != nil {
		return f, err
	}
	f.payload = b[framePrelude+headersLen : total-4]
	return f, nil
}

// headers reads the header block, keeping the values the relay uses.
func (f *eventFrame) headers(h []byte) error {
	for len(h) > 0 {
		n := int(h[0])
		if len(h) < 1+n+1 {
			return errors.New("a frame's header is cut short")
		}
		name, typ := h[1:1+n], h[1+n]
		h = h[2+n:]
		var size int
		switch typ {
		case 0, 1: // true, false
		case 2: // byte
			size = 1
		case 3: // int16
			size = 2
		case 4: // int32
			size = 4
		case 5, 8: // int64, timestamp
			size = 8
		case 9: // uuid
			size = 16
		case 6, 7: // bytes, string: a 16-bit length first
			if len(h) < 2 {
				return errors.New("a frame's header value is cut short")
			}
			vlen := int(binary.BigEndian.Uint16(h))
			if len(h) < 2+vlen {
				return errors.New("a frame's header value is cut short")
			}
			if typ == 7 {
				f.setHeader(name, h[2:2+vlen])
			}
			h = h[2+vlen:]
			continue
		default:
			return fmt.Errorf("a frame's header of unknown value type %d", typ)
		}
		if len(h) < size {
			return errors.New("a frame's header value is cut short")
		}
		h = h[size:]
	}
	return nil
}

func (f *eventFrame) setHeader(name, v []byte) {
	switch string(name) {
	case ":message-type":
		f.messageType = v
	case ":event-type":
		f.eventType = v
	case ":exception-type":
		f.exceptionType = v
	case ":error-code":
		f.errorCode = v
	case ":error-message":
		f.errorMessage = v
	}
}
