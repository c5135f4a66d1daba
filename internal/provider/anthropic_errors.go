package provider

import (
	"bytes"
	"io"
	"net/http"
	"strconv"

	"github.com/tollgate/tollgate/internal/jsonx"
)

// Clouds that carry the Anthropic dialect answer some errors in their own
// shapes (Bedrock's exceptions, Google's status objects). Their providers
// rewrite them into the Anthropic envelope, which the dialect's clients
// and the translation lane read.

// anthropicError is an error as an Anthropic client gets it: the status
// and the error type.
type anthropicError struct {
	status int
	typ    string
}

// anthropicErrorBody is the Anthropic error envelope.
func anthropicErrorBody(k anthropicError, message string) []byte {
	if message == "" {
		message = http.StatusText(k.status)
	}
	b := append([]byte(`{"type":"error","error":{"type":`), strconv.Quote(k.typ)...)
	b = append(b, `,"message":`...)
	b = jsonx.AppendQuote(b, message)
	return append(b, "}}"...)
}

// replaceBody gives resp a new status and whole body, and its content
// type unless that is "".
func replaceBody(resp *http.Response, status int, contentType string, body []byte) *http.Response {
	resp.StatusCode, resp.Status = status, strconv.Itoa(status)+" "+http.StatusText(status)
	if contentType != "" {
		resp.Header.Set("Content-Type", contentType)
	}
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	resp.ContentLength = int64(len(body))
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp
}
