package h1client

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/textproto"
	"strconv"
	"strings"

	"golang.org/x/net/http/httpguts"
)

const (
	// maxHeadBytes bounds the response head, 1xx heads included.
	maxHeadBytes = 1 << 20
	// max1xx bounds the informational heads skipped before the final one.
	max1xx = 5
)

var (
	errHeadTooLarge = errors.New("h1client: response head larger than 1 MiB")
	errServerClosed = fmt.Errorf("h1client: server closed the connection before answering: %w", io.EOF)
	errTooMany1xx   = errors.New("h1client: too many 1xx informational responses")
	errUpgrade      = errors.New("h1client: unexpected 101 Switching Protocols: upgrades are not supported")
)

// src sits below the connection's bufio.Reader so the response head can be
// bounded without copying lines: while left >= 0, at most left more bytes
// are read from r.
type src struct {
	r    io.Reader
	left int64 // < 0: unbounded (body)
}

func (s *src) Read(p []byte) (int, error) {
	if s.left < 0 {
		return s.r.Read(p)
	}
	if s.left == 0 {
		return 0, errHeadTooLarge
	}
	if int64(len(p)) > s.left {
		p = p[:s.left]
	}
	n, err := s.r.Read(p)
	s.left -= int64(n)
	return n, err
}

// statusLines interns the usual status strings ("200 OK") so a standard
// status line costs no allocation.
var statusLines [500]string

func init() {
	for code := 100; code < 600; code++ {
		if text := http.StatusText(code); text != "" {
			statusLines[code-100] = strconv.Itoa(code) + " " + text
		}
	}
}

// readResponse reads a response to a request with the given method from br,
// which reads from s: 1xx heads are skipped, the final head is parsed, and
// the body is framed per RFC 9112 §6.3. The returned body holds the
// http.Response and reads from br; tying it to a connection is the caller's
// business.
func readResponse(s *src, br *bufio.Reader, tp *textproto.Reader, method string) (*body, error) {
	// src stops reading a buffer's worth past the bound (bufio reads ahead
	// into the body); the exact count of head bytes is checked after.
	buffered := int64(br.Buffered())
	limit := maxHeadBytes + int64(br.Size())
	s.left = limit
	b, err := readHead(br, tp, method)
	read := limit - s.left
	s.left = -1
	if err == nil && buffered+read-int64(br.Buffered()) > maxHeadBytes {
		return nil, errHeadTooLarge
	}
	return b, err
}

func readHead(br *bufio.Reader, tp *textproto.Reader, method string) (*body, error) {
	b := &body{br: br}
	resp := &b.resp
	for n1xx := 0; ; n1xx++ {
		line, err := readLine(br)
		if err != nil {
			return nil, headError("status line", err)
		}
		if err := parseStatusLine(line, resp); err != nil {
			return nil, err
		}
		h, err := tp.ReadMIMEHeader()
		if err != nil {
			return nil, headError("header", err)
		}
		if resp.StatusCode >= 200 {
			resp.Header = http.Header(h)
			break
		}
		if resp.StatusCode == http.StatusSwitchingProtocols {
			return nil, errUpgrade
		}
		if n1xx == max1xx {
			return nil, errTooMany1xx
		}
	}
	if err := b.frame(method); err != nil {
		return nil, err
	}
	return b, nil
}

func headError(what string, err error) error {
	if errors.Is(err, errHeadTooLarge) {
		return errHeadTooLarge
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("h1client: reading response %s: %w", what, err)
}

// readLine returns the next line, "\n" included. The slice is only valid
// until the next read from br, unless the line was longer than its buffer.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return line, err
	}
	full := append([]byte(nil), line...)
	for err == bufio.ErrBufferFull {
		line, err = br.ReadSlice('\n')
		full = append(full, line...)
	}
	return full, err
}

// parseStatusLine parses "HTTP/1.x ddd[ reason]" (with the line ending) into resp.
func parseStatusLine(line []byte, resp *http.Response) error {
	n := len(line)
	if n > 0 && line[n-1] == '\n' {
		n--
		if n > 0 && line[n-1] == '\r' {
			n--
		}
	}
	line = line[:n]
	if len(line) < 12 || string(line[:5]) != "HTTP/" || line[8] != ' ' {
		return malformedStatus(line)
	}
	switch string(line[:8]) {
	case "HTTP/1.1":
		resp.Proto, resp.ProtoMajor, resp.ProtoMinor = "HTTP/1.1", 1, 1
	case "HTTP/1.0":
		resp.Proto, resp.ProtoMajor, resp.ProtoMinor = "HTTP/1.0", 1, 0
	default:
		return fmt.Errorf("h1client: unsupported protocol version in status line %q", clip(line))
	}
	d0, d1, d2 := line[9], line[10], line[11]
	if d0 < '1' || d0 > '9' || d1 < '0' || d1 > '9' || d2 < '0' || d2 > '9' {
		return malformedStatus(line)
	}
	code := int(d0-'0')*100 + int(d1-'0')*10 + int(d2-'0')
	if len(line) > 12 {
		if line[12] != ' ' {
			return malformedStatus(line) // four digits, or no space before the reason
		}
		for _, c := range line[13:] { // reason-phrase = *( HTAB / SP / VCHAR / obs-text )
			if c < ' ' && c != '\t' || c == 0x7f {
				return malformedStatus(line)
			}
		}
	}
	resp.StatusCode = code
	status := line[9:]
	if code < 600 && statusLines[code-100] != "" && string(status) == statusLines[code-100] {
		resp.Status = statusLines[code-100]
	} else {
		resp.Status = string(status)
	}
	return nil
}

func malformedStatus(line []byte) error {
	return fmt.Errorf("h1client: malformed status line %q", clip(line))
}

// clip keeps error messages short when a server sends garbage.
func clip(b []byte) []byte {
	if len(b) > 64 {
		return b[:64]
	}
	return b
}

// frame decides how the body is delimited (RFC 9112 §6.3) and whether the
// connection may carry another exchange after it.
func (b *body) frame(method string) error {
	resp := &b.resp
	h := resp.Header
	http11 := resp.ProtoMinor == 1

	connHdr := h["Connection"]
	hasClose := httpguts.HeaderValuesContainsToken(connHdr, "close")
	keepAlive := !hasClose
	if !http11 {
		keepAlive = keepAlive && httpguts.HeaderValuesContainsToken(connHdr, "keep-alive")
	} else if hasClose {
		delete(h, "Connection") // as net/http: the close is reflected in resp.Close
	}
	b.reuse = keepAlive

	te, hasTE := h["Transfer-Encoding"]
	chunked, otherTE := false, false
	if hasTE {
		delete(h, "Transfer-Encoding")
		if http11 {
			if codings := teCodings(te); len(codings) > 0 && strings.EqualFold(codings[len(codings)-1], "chunked") {
				chunked = true
				if len(codings) == 1 {
					b.te[0] = "chunked"
					resp.TransferEncoding = b.te[:1:1]
				} else {
					resp.TransferEncoding = codings
				}
			} else {
				otherTE = true
				resp.TransferEncoding = codings
			}
		} else {
			// An HTTP/1.0 message with Transfer-Encoding has faulty framing
			// (RFC 9112 §6.1): ignore the field, close after the message.
			b.reuse = false
		}
	}

	cl := int64(-1)
	if cls := h["Content-Length"]; len(cls) > 0 {
		first := textproto.TrimString(cls[0])
		for _, v := range cls[1:] {
			if textproto.TrimString(v) != first {
				return fmt.Errorf("h1client: response has differing Content-Length values %q", cls)
			}
		}
		n, ok := parseContentLength(first)
		if !ok {
			return fmt.Errorf("h1client: invalid Content-Length %q", clip([]byte(first)))
		}
		if len(cls) > 1 {
			h["Content-Length"] = cls[:1:1]
			cls[0] = first
		}
		cl = n
	}

	code := resp.StatusCode
	switch {
	case method == http.MethodHead:
		resp.ContentLength = cl
		b.kind = kindNone
	case code == http.StatusNoContent || code == http.StatusNotModified:
		resp.ContentLength = 0
		b.kind = kindNone
	case chunked:
		if cl >= 0 {
			delete(h, "Content-Length") // Transfer-Encoding wins; a smuggling smell, so no reuse
			b.reuse = false
		}
		resp.ContentLength = -1
		b.kind = kindChunked
		b.cr = httputil.NewChunkedReader(b.br)
	case otherTE:
		delete(h, "Content-Length")
		resp.ContentLength = -1
		b.kind = kindEOF
	case cl == 0:
		resp.ContentLength = 0
		b.kind = kindNone
	case cl > 0:
		resp.ContentLength = cl
		b.kind = kindCL
		b.remain = cl
	default:
		resp.ContentLength = -1
		b.kind = kindEOF
	}
	if b.kind == kindEOF {
		b.reuse = false
	}
	resp.Close = !b.reuse
	return nil
}

// teCodings splits Transfer-Encoding field values into their codings.
func teCodings(vv []string) []string {
	var out []string
	for _, v := range vv {
		for part := range strings.SplitSeq(v, ",") {
			if part = textproto.TrimString(part); part != "" {
				out = append(out, strings.ToLower(part))
			}
		}
	}
	return out
}

func parseContentLength(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// discardTrailers reads the trailer section after the last chunk up to its
// empty line. Trailers are not reported.
func discardTrailers(br *bufio.Reader) error {
	total := 0
	partial := false // the previous read ended mid-line
	for {
		line, err := br.ReadSlice('\n')
		total += len(line)
		if total > maxHeadBytes {
			return errHeadTooLarge
		}
		switch err {
		case nil:
		case bufio.ErrBufferFull:
			partial = true
			continue
		case io.EOF:
			return io.ErrUnexpectedEOF
		default:
			return err
		}
		if !partial && (len(line) == 1 || len(line) == 2 && line[0] == '\r') {
			return nil
		}
		partial = false
	}
}
