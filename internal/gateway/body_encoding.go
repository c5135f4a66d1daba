package gateway

import (
	"compress/gzip"
	"io"
	"net/http"
	"strings"

	"github.com/tollgate/tollgate/internal/dialect"
)

// decodedBody is r's body as the gateway reads it: a gzip body (some HTTP
// clients compress what they send) decompressed, bounded to maxBody after
// decompression as well as before, so a small bomb cannot fill memory.
// Other content codings are refused with 415.
func decodedBody(w http.ResponseWriter, r *http.Request, maxBody int64) (io.Reader, bool, error) {
	raw := http.MaxBytesReader(w, r.Body, maxBody)
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
		return raw, false, nil
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(raw)
		if err != nil {
			return nil, true, &Error{Status: http.StatusBadRequest, Kind: dialect.InvalidRequest,
				Message: "request body: content-encoding is gzip but the body is not gzip data", Err: err}
		}
		return http.MaxBytesReader(w, zr, maxBody), true, nil
	default:
		return nil, false, &Error{Status: http.StatusUnsupportedMediaType, Kind: dialect.InvalidRequest,
			Message: "content-encoding " + dialect.Clip(enc) + " is not supported; send the body uncompressed or as gzip"}
	}
}
