package gateway

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/tollgate/tollgate/internal/dialect"
)

// Error is an error the gateway answers itself. Message is what the client
// sees; Err is the cause, for the log only (it may hold internals).
type Error struct {
	Status  int
	Kind    dialect.Kind
	Message string
	Param   string      // the request field at fault, if any (OpenAI "param")
	Code    string      // overrides the kind's machine-readable code
	Header  http.Header // extra response headers (Allow, Retry-After, …)
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

func newError(status int, k dialect.Kind, msg string) *Error {
	return &Error{Status: status, Kind: k, Message: msg}
}

// scanRefusal is a dialect.ScanError (a client's bad body or parameter)
// as the 400 the client gets; other errors are returned as they are.
func scanRefusal(err error) error {
	var se *dialect.ScanError
	if errors.As(err, &se) {
		return &Error{Status: http.StatusBadRequest, Kind: dialect.InvalidRequest, Param: se.Param, Message: se.Msg}
	}
	return err
}

// writeError renders e in the envelope of the client's dialect, with
// tollgate's request id in the dialect's request-id header (no upstream
// answered).
func writeError(w http.ResponseWriter, d *dialect.Dialect, requestID string, e *Error) {
	h := w.Header()
	for k, v := range e.Header {
		h[k] = v
	}
	h[d.RequestIDHeader] = []string{requestID}
	body := d.Error(dialect.Error{Kind: e.Kind, Message: e.Message, Param: e.Param, Code: e.Code, RequestID: requestID,
		RetryAfter: retryAfter(h)})
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(e.Status)
	w.Write(body)
}
