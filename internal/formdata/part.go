package formdata

import (
	"mime"
	"net/textproto"
	"strings"
)

// kept is a part read before the wanted field, to be replayed by Body.
type kept struct {
	header textproto.MIMEHeader
	name   string
	file   bool
	value  string // a field's bytes as sent (not decoded)
	off, n int64  // a file's contents in the spool
}

// describe reads a part's Content-Disposition: its form name and whether it
// is a file (has a filename parameter, even an empty one).
func describe(h textproto.MIMEHeader) (name string, file bool, err error) {
	if len(h["Content-Disposition"]) > 1 {
		// Parsers differ on which one counts: a part must not be one field
		// here and another upstream.
		return "", false, &Error{Message: "a multipart/form-data part has more than one Content-Disposition"}
	}
	for _, p := range strings.Split(h.Get("Content-Disposition"), ";") {
		// name* (RFC 2231), which RFC 7578 forbids senders to use: Go's
		// parser takes it over name, others ignore it.
		if k, _, _ := strings.Cut(strings.TrimSpace(p), "="); strings.HasPrefix(strings.ToLower(strings.TrimSpace(k)), "name*") {
			return "", false, &Error{Message: "a multipart/form-data part names its field with name*, which forms must not use"}
		}
	}
	disp, params, perr := mime.ParseMediaType(h.Get("Content-Disposition"))
	if perr != nil || disp != "form-data" || params["name"] == "" {
		return "", false, &Error{Message: "a multipart/form-data part has no Content-Disposition: form-data with a name"}
	}
	_, file = params["filename"]
	return params["name"], file, nil
}
