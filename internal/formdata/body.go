package formdata

import (
	"bytes"
	"errors"
	"io"
	"mime/multipart"
	"net/textproto"
	"strings"
)

// Body returns the whole form to send upstream, re-encoded with a new
// boundary (Boundary), with the value of every non-file field named name
// replaced by value. Parts kept aside are replayed from memory or disk, the
// rest streamed from the client's body as the returned reader is read. Part
// headers are kept as sent (a replaced field loses its
// Content-Transfer-Encoding); file contents are copied untouched.
//
// Body may be called once and its reader read once; Len then tells the
// reader's length when the client's body had already been read whole.
func (f *Form) Body(name, value string) io.Reader {
	if f.used {
		return errReader{errors.New("formdata: Body called twice")}
	}
	f.used = true
	if f.done && f.pending == nil {
		f.length = f.encodedLen(name, value)
	}
	b := &body{f: f, name: name, value: value}
	b.mw = multipart.NewWriter(&b.out)
	b.mw.SetBoundary(f.boundary)
	return b
}

// Boundary is the re-encoded body's boundary.
func (f *Form) Boundary() string { return f.boundary }

// ContentType is the re-encoded body's Content-Type.
func (f *Form) ContentType() string { return "multipart/form-data; boundary=" + f.boundary }

// Len is the length of the reader Body returned, -1 when unknown (the
// client's body has not been read to its end, or Body was not called yet).
func (f *Form) Len() int64 { return f.length }

// encodedLen is the length of the body Body(name, value) produces from the
// kept parts alone: their headers encoded as the writer does, plus contents.
func (f *Form) encodedLen(name, value string) int64 {
	var c counter
	mw := multipart.NewWriter(&c)
	mw.SetBoundary(f.boundary)
	for _, k := range f.kept {
		h, content := f.replay(k, name, value)
		mw.CreatePart(h)
		if k.file {
			c += counter(k.n)
		} else {
			c += counter(len(content))
		}
	}
	mw.Close()
	return int64(c)
}

// replay gives the header and, for a field, the contents a kept part is
// sent with.
func (f *Form) replay(k kept, name, value string) (textproto.MIMEHeader, string) {
	if !k.file && k.name == name {
		return replaced(k.header), value
	}
	return k.header, k.value
}

// replaced is a field's header for a new value: the value is sent as it is.
func replaced(h textproto.MIMEHeader) textproto.MIMEHeader {
	if h.Get("Content-Transfer-Encoding") == "" {
		return h
	}
	c := make(textproto.MIMEHeader, len(h))
	for k, v := range h {
		c[k] = v
	}
	c.Del("Content-Transfer-Encoding")
	return c
}

type counter int64

func (c *counter) Write(p []byte) (int, error) { *c += counter(len(p)); return len(p), nil }

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// body produces the re-encoded form as it is read. The writer's framing
// (boundaries and part headers) goes through out; contents are read straight
// into the caller's buffer, which is what the writer's part writer would pass
// on unchanged.
type body struct {
	f           *Form
	name, value string
	mw          *multipart.Writer
	out         bytes.Buffer
	next        int       // the next kept part to replay
	cur         io.Reader // the current part's contents
	live        bool      // cur is the client's body, not a part kept aside
	err         error
}

func (b *body) Read(p []byte) (int, error) {
	for {
		if b.out.Len() > 0 {
			return b.out.Read(p)
		}
		if b.cur != nil {
			n, err := b.cur.Read(p)
			if err == io.EOF {
				b.cur = nil
				err = nil
			} else if err != nil {
				b.cur = nil
				b.err = err // the spill file's
				if b.live {
					b.err = b.f.src.classify(err)
				}
			}
			if n > 0 || err != nil {
				return n, b.err
			}
			continue
		}
		if b.err != nil {
			return 0, b.err
		}
		b.err = b.step()
	}
}

// step starts the next part, or ends the body (b.err becomes io.EOF once
// the closing boundary is in out).
func (b *body) step() error {
	if b.next < len(b.f.kept) {
		k := b.f.kept[b.next]
		b.next++
		b.live = false
		h, content := b.f.replay(k, b.name, b.value)
		b.mw.CreatePart(h)
		if k.file {
			b.cur = b.f.spool.section(k.off, k.n)
		} else {
			b.cur = strings.NewReader(content)
		}
		return nil
	}
	p := b.f.pending
	b.f.pending = nil
	if p == nil {
		var err error
		if p, err = b.f.next(); err != nil {
			return err
		}
	}
	if p == nil {
		b.mw.Close()
		return io.EOF
	}
	name, file, err := describe(p.Header)
	if err != nil {
		return err
	}
	if file && name == b.name {
		return fileNamed(name)
	}
	b.cur, b.live = p, true
	h := p.Header
	if !file && name == b.name {
		h = replaced(h)
		// The client's value is skipped when the next part is opened.
		b.cur, b.live = strings.NewReader(b.value), false
	}
	b.mw.CreatePart(h)
	return nil
}
