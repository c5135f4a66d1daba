package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"sync"

	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/formdata"
)

// The multipart endpoints (file uploads: /v1/audio/transcriptions and
// /translations, /v1/images/edits) are passed through as streams: the
// form is read only as far as its model field (the parts before it kept
// aside by package formdata, in memory and then in a temporary file), the
// target chosen, and the form sent on with the model replaced while the
// rest of it is still arriving. Nothing holds the file in memory, and
// max_body_bytes bounds it as it bounds any body. A form read once cannot
// be sent twice: such a request makes one upstream attempt.

// formEndpoint serves a multipart endpoint.
func (g *Gateway) formEndpoint(ep dialect.Endpoint) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, x *exchange) error {
		return g.serveForm(w, r, x, ep)
	}
}

func (g *Gateway) serveForm(w http.ResponseWriter, r *http.Request, x *exchange, ep dialect.Endpoint) error {
	if r.ContentLength > g.maxBody {
		return g.tooLarge()
	}
	if enc := r.Header.Get("Content-Encoding"); enc != "" && !strings.EqualFold(enc, "identity") {
		return &Error{Status: http.StatusUnsupportedMediaType, Kind: dialect.InvalidRequest,
			Message: "content-encoding " + dialect.Clip(enc) + " is not supported on " + ep.Path + ": send the form uncompressed"}
	}
	boundary, err := formdata.BoundaryOf(r.Header.Get("Content-Type"))
	if err != nil {
		return formRefusal(err)
	}
	x.bodyRead = true
	form, err := formdata.Read(r.Context(), http.MaxBytesReader(w, r.Body, g.maxBody), boundary, "model", formdata.Limits{})
	if err != nil {
		return g.formError(x, err)
	}
	defer form.Close()
	model, _ := form.Field("model")
	if model == "" {
		return &Error{Status: http.StatusBadRequest, Kind: dialect.InvalidRequest, Param: "model", Message: "model: field required"}
	}
	x.model = dialect.Clip(model)
	m := x.gen.routes.Lookup([]byte(model))
	if m == nil {
		return unknownModel(x.model, nil)
	}
	x.routed, x.canonical = m.Name, m.Name
	if err := x.allow(m); err != nil {
		return err
	}
	c := call{w: w, r: r, x: x, m: m, op: ep.Op, ep: &ep, form: form}
	if err := g.checkPassTargets(&c, ep.Path); err != nil {
		return err
	}
	if err := g.admit(&c); err != nil {
		return err
	}
	return g.forward(&c)
}

// formRefusal is the client's 400 for a malformed form.
func formRefusal(err error) error {
	var bad *formdata.Error
	if errors.As(err, &bad) {
		return &Error{Status: http.StatusBadRequest, Kind: dialect.InvalidRequest, Param: bad.Param, Message: bad.Message}
	}
	return err
}

// formError answers a form that could not be read: too large, malformed,
// its client gone, the spill file not written (the gateway's failure), or
// the client's body failing to arrive.
func (g *Gateway) formError(x *exchange, err error) error {
	var mbe *http.MaxBytesError
	var bad *formdata.Error
	var pe *fs.PathError
	switch {
	case errors.As(err, &mbe):
		return g.tooLarge()
	case errors.As(err, &bad):
		return formRefusal(err)
	case x.ctx.Err() != nil || errors.Is(err, context.Canceled):
		x.clientGone = true
		return fmt.Errorf("client went away while its form was read: %w", err)
	case errors.As(err, &pe):
		return &Error{Status: http.StatusInternalServerError, Kind: dialect.Internal, Message: "internal error keeping the form aside", Err: err}
	}
	return &Error{Status: http.StatusBadRequest, Kind: dialect.InvalidRequest, Message: "reading request body failed", Err: err}
}

// upload is a form's body on its way to the upstream. It keeps the error
// reading the client's form met (too large, malformed, the client gone):
// the attempt then failed by the client's doing, not the upstream's, and
// is answered as such, with no verdict on the target.
// The transport may still be reading it when the upstream's answer has
// arrived: the error is kept under a lock.
type upload struct {
	r   io.Reader
	mu  sync.Mutex
	err error
}

func (u *upload) Read(p []byte) (int, error) {
	n, err := u.r.Read(p)
	if err != nil && err != io.EOF {
		u.mu.Lock()
		if u.err == nil {
			u.err = err
		}
		u.mu.Unlock()
	}
	return n, err
}

// failed is the error reading the client's form met, nil for none.
func (u *upload) failed() error {
	if u == nil {
		return nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.err
}
