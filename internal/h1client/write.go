package h1client

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/net/http/httpguts"
)

// headPool holds the buffers request heads are built in.
var headPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// maxPooledHead keeps one huge request head from pinning its buffer forever.
const maxPooledHead = 64 << 10

func putHead(b *[]byte) {
	if cap(*b) <= maxPooledHead {
		headPool.Put(b)
	}
}

// copyPool holds the buffers non-Bytes bodies are copied through.
const copyBufSize = 8 << 10

var copyPool = sync.Pool{New: func() any { b := make([]byte, copyBufSize); return &b }}

// appendHead appends the request line and header section to b. Invalid
// header names or values fail here, before any connection is used.
func appendHead(b []byte, req *http.Request, method, uri, host string, ob *outBody, addClose bool) ([]byte, error) {
	b = append(b, method...)
	b = append(b, ' ')
	b = append(b, uri...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, host...)
	b = append(b, "\r\n"...)

	ua := defaultUserAgent
	if vv, ok := req.Header["User-Agent"]; ok { // present but empty: send none, as net/http
		ua = ""
		if len(vv) > 0 {
			ua = vv[0]
		}
	}
	if ua != "" {
		if !httpguts.ValidHeaderFieldValue(ua) {
			return b, fmt.Errorf("h1client: invalid User-Agent header value %q", ua)
		}
		b = append(b, "User-Agent: "...)
		b = append(b, textproto.TrimString(ua)...)
		b = append(b, "\r\n"...)
	}

	for k, vv := range req.Header {
		if !httpguts.ValidHeaderFieldName(k) {
			return b, fmt.Errorf("h1client: invalid header field name %q", k)
		}
		skip := false
		switch k {
		case "Host", "User-Agent", "Content-Length", "Transfer-Encoding", "Trailer":
			skip = true // written above or below from the request's own fields
		}
		for _, v := range vv {
			if !httpguts.ValidHeaderFieldValue(v) {
				return b, fmt.Errorf("h1client: invalid header field value for %q", k)
			}
			if skip {
				continue
			}
			b = append(b, k...)
			b = append(b, ": "...)
			b = append(b, textproto.TrimString(v)...)
			b = append(b, "\r\n"...)
		}
	}

	switch {
	case ob.chunked:
		b = append(b, "Transfer-Encoding: chunked\r\n"...)
		if len(req.Trailer) > 0 {
			b = append(b, "Trailer: "...)
			first := true
			for k := range req.Trailer {
				if !httpguts.ValidHeaderFieldName(k) {
					return b, fmt.Errorf("h1client: invalid trailer field name %q", k)
				}
				if !first {
					b = append(b, ',')
				}
				first = false
				b = append(b, k...)
			}
			b = append(b, "\r\n"...)
		}
	case ob.sendCL:
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, ob.length, 10)
		b = append(b, "\r\n"...)
	}
	if addClose {
		b = append(b, "Connection: close\r\n"...)
	}
	return append(b, "\r\n"...), nil
}

// writeRequest writes the head and the body. n counts the bytes the
// connection accepted; srcErr reports that err came from the body (or the
// caller's trailers), not from the connection.
func (c *conn) writeRequest(head []byte, ob *outBody, trailer http.Header) (n int64, srcErr bool, err error) {
	if ob.isBytes && ob.length > 0 {
		n, err = c.writev(head, ob.parts)
		return n, false, err
	}
	m, err := c.nc.Write(head)
	n = int64(m)
	if err != nil || ob.rc == nil || (!ob.chunked && ob.length == 0) {
		return n, false, err
	}
	bp := copyPool.Get().(*[]byte)
	defer copyPool.Put(bp)
	var w int64
	if ob.chunked {
		w, srcErr, err = c.writeChunked(*bp, ob, trailer)
	} else {
		w, srcErr, err = c.writeLength(*bp, ob)
	}
	return n + w, srcErr, err
}

// writeLength copies exactly ob.length bytes of the body.
func (c *conn) writeLength(buf []byte, ob *outBody) (n int64, srcErr bool, err error) {
	left := ob.length
	for left > 0 {
		p := buf
		if int64(len(p)) > left {
			p = p[:left]
		}
		ob.consumed = true
		m, rerr := ob.rc.Read(p)
		if m > 0 {
			w, werr := c.nc.Write(p[:m])
			n += int64(w)
			left -= int64(m)
			if werr != nil {
				return n, false, werr
			}
		}
		switch {
		case rerr == io.EOF:
			if left > 0 {
				return n, true, fmt.Errorf("h1client: Request.ContentLength=%d with Body length %d", ob.length, ob.length-left)
			}
		case rerr != nil:
			return n, true, fmt.Errorf("h1client: reading request body: %w", rerr)
		}
	}
	return n, false, nil
}

// chunkRoom is the space kept before a chunk's data for its size line, so
// that size line, data and CRLF leave in one write.
const chunkRoom = 8

// writeChunked writes the body in chunked coding, then the trailers.
func (c *conn) writeChunked(buf []byte, ob *outBody, trailer http.Header) (n int64, srcErr bool, err error) {
	data := buf[chunkRoom : len(buf)-2]
	for eof := false; !eof; {
		m := 0
		if ob.hasProbe {
			data[0] = ob.probe[0]
			ob.hasProbe = false
			m = 1
		}
		ob.consumed = true
		r, rerr := ob.rc.Read(data[m:])
		m += r
		switch {
		case rerr == io.EOF:
			eof = true
		case rerr != nil:
			return n, true, fmt.Errorf("h1client: reading request body: %w", rerr)
		}
		if m == 0 {
			continue
		}
		var hex [16]byte
		h := strconv.AppendInt(hex[:0], int64(m), 16)
		start := chunkRoom - 2 - len(h)
		copy(buf[start:], h)
		buf[chunkRoom-2], buf[chunkRoom-1] = '\r', '\n'
		buf[chunkRoom+m], buf[chunkRoom+m+1] = '\r', '\n'
		w, werr := c.nc.Write(buf[start : chunkRoom+m+2])
		n += int64(w)
		if werr != nil {
			return n, false, werr
		}
	}
	end := append(buf[:0], "0\r\n"...)
	for k, vv := range trailer {
		for _, v := range vv {
			if !httpguts.ValidHeaderFieldValue(v) {
				return n, true, fmt.Errorf("h1client: invalid trailer field value for %q", k)
			}
			end = append(end, k...)
			end = append(end, ": "...)
			end = append(end, textproto.TrimString(v)...)
			end = append(end, "\r\n"...)
		}
	}
	end = append(end, "\r\n"...)
	w, werr := c.nc.Write(end)
	return n + int64(w), false, werr
}

// peerGone reports a write error that means the server has shut the
// connection: whatever it answered before that can still be read.
func peerGone(err error) bool {
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)
}
