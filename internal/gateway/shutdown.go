package gateway

import (
	"context"
	"errors"
	"net/http"

	"github.com/tollgate/tollgate/internal/dialect"
)

// ErrShuttingDown is the cause with which a server cancels the requests
// still in flight when its drain time is over (http.Server.BaseContext
// made with context.WithCancelCause): each then ends with a proper error,
// a stream with its protocol's error event, and is logged, instead of
// having its connection closed under it.
var ErrShuttingDown = errors.New("the gateway is shutting down")

// shuttingDown reports whether r was cancelled by the server's shutdown,
// not by its client.
func shuttingDown(r *http.Request) bool {
	return errors.Is(context.Cause(r.Context()), ErrShuttingDown)
}

// shuttingDown is shuttingDown for the exchange's request.
func (x *exchange) shuttingDown() bool {
	return x.ctx != nil && errors.Is(context.Cause(x.ctx), ErrShuttingDown)
}

// shutdownError is what the client of a request cut by the shutdown gets:
// a 503 it may retry (on another replica, or once this one is back).
func shutdownError(err error) error {
	return &Error{Status: http.StatusServiceUnavailable, Kind: dialect.Unavailable, Err: err,
		Message: "the gateway is shutting down and ended this request after its drain time; retry it"}
}
