package gateway

import (
	"net/http"
	"time"
)

// clientWriteTimeout bounds each write to the client. A client that has
// stopped reading (its buffers full) is let go after it, rather than
// holding a handler, an upstream connection and their buffers for as long
// as it likes.
const clientWriteTimeout = 30 * time.Second

// writeDeadline sets the deadline of the next write to the client: the
// write timeout from now, and never past the upstream exchange's total.
// Writers that cannot take deadlines (tests' recorders) are left as they are.
func (x *exchange) writeDeadline(rc *http.ResponseController) {
	d := time.Now().Add(clientWriteTimeout)
	if !x.writeBy.IsZero() && x.writeBy.Before(d) {
		d = x.writeBy
	}
	rc.SetWriteDeadline(d)
}
