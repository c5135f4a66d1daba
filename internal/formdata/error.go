package formdata

import (
	"context"
	"errors"
	"io"
	"mime"
)

// Error is a malformed form: the gateway answers 400 with Param and Message.
type Error struct{ Param, Message string }

func (e *Error) Error() string {
	if e.Param == "" {
		return e.Message
	}
	return e.Message + " (" + e.Param + ")"
}

// BoundaryOf returns the boundary of a multipart/form-data content type, or
// an *Error when contentType is another type or has no boundary.
func BoundaryOf(contentType string) (string, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/form-data" {
		return "", &Error{Message: "the request body must be multipart/form-data"}
	}
	b := params["boundary"]
	if b == "" {
		return "", &Error{Message: "the multipart/form-data content type has no boundary"}
	}
	return b, nil
}

// source is the client's body as mime/multipart reads it. It remembers the
// first error the body itself returned, so that an error out of multipart can
// be told apart: the body's own (returned as it is, e.g. the caller's
// *http.MaxBytesError) or a malformed form (an *Error).
type source struct {
	ctx context.Context
	r   io.Reader
	err error
}

func (s *source) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if err := s.ctx.Err(); err != nil {
		s.err = err
		return 0, err
	}
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF {
		s.err = err
	}
	return n, err
}

// classify turns an error out of mime/multipart into the one to return.
func (s *source) classify(err error) error {
	if s.err != nil {
		return s.err
	}
	var fe *Error
	if errors.As(err, &fe) {
		return fe
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return &Error{Message: "the multipart/form-data body ends before its closing boundary"}
	}
	return &Error{Message: "malformed multipart/form-data body: " + err.Error()}
}
