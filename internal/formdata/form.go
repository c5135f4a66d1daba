// Package formdata passes a multipart/form-data request body through to an
// upstream with one field's value replaced, without holding the body in
// memory. The field that chooses the upstream (e.g. "model") may come after
// a large file part, so the parts read before it are kept aside, in memory up
// to a bound and then in a temporary file, and replayed ahead of the rest of
// the body, which is streamed from the client as the upstream reads it.
package formdata

import (
	"context"
	"io"
	"mime/multipart"
	"mime/quotedprintable"
	"strings"
)

// Limits bound what Read keeps aside. A zero value takes the default given.
type Limits struct {
	Memory   int64  // bytes of parts kept in memory before spilling to a file (default 1 MiB)
	Dir      string // directory for the spill file ("" = os.TempDir())
	MaxField int64  // the largest non-file field value accepted (default 64 KiB); larger is an *Error
	MaxParts int    // the most parts a body may have (default 1000); more is an *Error
}

func (l Limits) withDefaults() Limits {
	if l.Memory <= 0 {
		l.Memory = 1 << 20
	}
	if l.MaxField <= 0 {
		l.MaxField = 64 << 10
	}
	if l.MaxParts <= 0 {
		l.MaxParts = 1000
	}
	return l
}

// Form is a multipart/form-data request body being read up to the field the caller needs.
type Form struct {
	lim      Limits
	src      *source
	mr       *multipart.Reader
	boundary string // the re-encoded body's

	kept    []kept
	fields  [][2]string
	spool   spool
	parts   int
	pending *multipart.Part // the part after the wanted field, opened but not read
	done    bool            // the client's body has been read to its end
	used    bool            // Body was called
	length  int64
}

// Read reads body (a multipart/form-data stream with that boundary) until the
// field named want has been read whole (or the body ends). The parts before
// it are kept aside (Limits). Field(want) then holds its value.
//
// A malformed body, a non-file field over MaxField or too many parts is an
// *Error. An error reading body is returned as it is, and so is ctx's error
// when ctx ends while the body is read (here or later through Body), and an
// error writing the spill file. On error nothing is left on disk.
func Read(ctx context.Context, body io.Reader, boundary string, want string, lim Limits) (*Form, error) {
	lim = lim.withDefaults()
	src := &source{ctx: ctx, r: body}
	f := &Form{
		lim:      lim,
		src:      src,
		mr:       multipart.NewReader(src, boundary),
		boundary: multipart.NewWriter(io.Discard).Boundary(),
		spool:    spool{limit: lim.Memory, dir: lim.Dir},
		length:   -1,
	}
	if err := f.read(want); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func (f *Form) read(want string) error {
	buf := make([]byte, 32<<10)
	for {
		p, err := f.next()
		if err != nil || p == nil {
			return err
		}
		name, file, err := describe(p.Header)
		if err != nil {
			return err
		}
		k := kept{header: p.Header, name: name, file: file}
		if file && name == want {
			return fileNamed(name)
		}
		if file {
			k.off = f.spool.size
			k.n, err = io.CopyBuffer(&f.spool, p, buf)
			if f.spool.err != nil {
				return f.spool.err // the server's disk, not the client's form
			}
			if err != nil {
				return f.src.classify(err)
			}
			f.kept = append(f.kept, k)
			continue
		}
		raw, err := io.ReadAll(io.LimitReader(p, f.lim.MaxField+1))
		if err != nil {
			return f.src.classify(err)
		}
		if int64(len(raw)) > f.lim.MaxField {
			return &Error{Param: name, Message: "a form field is too long"}
		}
		k.value = string(raw)
		value, err := decode(p, k.value)
		if err != nil {
			return &Error{Param: name, Message: "a form field's quoted-printable value is malformed"}
		}
		f.kept = append(f.kept, k)
		f.fields = append(f.fields, [2]string{name, value})
		if name == want {
			// Look one part ahead: when the body ends here, its whole
			// length is known and the upstream gets a Content-Length.
			p, err := f.next()
			f.pending = p
			return err
		}
	}
}

// fileNamed refuses a file part named as the field Read wants (the
// field replaced): the upstream would take the file's contents for it.
func fileNamed(name string) error {
	return &Error{Param: name, Message: name + ": must be a form field, not a file"}
}

// next opens the client's next part, nil at the end of the body.
func (f *Form) next() (*multipart.Part, error) {
	if f.done {
		return nil, nil
	}
	// NextRawPart: contents are passed on as they were sent, with any
	// Content-Transfer-Encoding left as it is.
	p, err := f.mr.NextRawPart()
	if err == io.EOF {
		f.done = true
		return nil, nil
	}
	if err != nil {
		return nil, f.src.classify(err)
	}
	f.parts++
	if f.parts > f.lim.MaxParts {
		return nil, &Error{Message: "the form has too many parts"}
	}
	return p, nil
}

// decode returns a field's value as the client meant it.
func decode(p *multipart.Part, raw string) (string, error) {
	if !strings.EqualFold(p.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
		return raw, nil
	}
	b, err := io.ReadAll(quotedprintable.NewReader(strings.NewReader(raw)))
	return string(b), err
}

// Field returns a small (non-file) field read so far.
func (f *Form) Field(name string) (string, bool) {
	for _, kv := range f.fields {
		if kv[0] == name {
			return kv[1], true
		}
	}
	return "", false
}

// Fields lists the non-file fields read so far, in order, as (name, value).
func (f *Form) Fields() [][2]string { return f.fields }

// Close removes the spill file (if any). Safe to call more than once. The
// reader from Body must not be read after Close.
func (f *Form) Close() error { return f.spool.close() }
