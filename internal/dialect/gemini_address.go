package dialect

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// RouteError is a URL-addressed path that names no operation the
// protocol serves: the client gets 404.
type RouteError struct{ Msg string }

func (e *RouteError) Error() string { return e.Msg }

// geminiCountFields are what a countTokens body is scanned for: its
// conversation is contents, or the contents of generateContentRequest,
// which the upstream or the count checks.
var geminiCountFields = Fields{}

// geminiAddress reads {model}:{method} (the model also as models/{model},
// as a client may repeat the collection) and, for a stream, the framing
// alt asks for: sse, or json (the default), a JSON array.
func geminiAddress(r *http.Request, rest string) (Address, error) {
	i := strings.LastIndexByte(rest, ':')
	if i < 0 {
		return Address{}, &RouteError{Msg: "no such endpoint: " + Clip(r.Method+" "+r.URL.Path) + "; expected models/{model}:generateContent, :streamGenerateContent or :countTokens"}
	}
	model, method := strings.TrimPrefix(rest[:i], "models/"), rest[i+1:]
	if model == "" || strings.Contains(model, "/") {
		return Address{}, &ScanError{Param: "model", Msg: "model: expected models/{model} in the path, got " + strconv.Quote(Clip(rest[:i]))}
	}
	a := Address{Model: model}
	switch method {
	case "generateContent":
		a.Op = Generate
	case "streamGenerateContent":
		a.Op, a.Stream = Generate, true
		switch alt := r.URL.Query().Get("alt"); alt {
		case "sse":
		case "", "json":
			a.Frame = func(t Tap) Tap { return &arrayTap{Tap: t} }
		default:
			return Address{}, &ScanError{Param: "alt", Msg: "alt: expected sse or json, got " + strconv.Quote(Clip(alt))}
		}
	case "countTokens":
		a.Op, a.Fields = CountTokens, &geminiCountFields
	default:
		return Address{}, &RouteError{Msg: "method " + strconv.Quote(Clip(method)) + " is not served by this gateway; it serves generateContent, streamGenerateContent and countTokens"}
	}
	return a, nil
}

// geminiCountRequest turns a countTokens body into the generate request
// it counts: {contents} is one already; {generateContentRequest} holds
// one, whose model the target's replaces.
func geminiCountRequest(body []byte) ([]byte, error) {
	inner := gjson.GetBytes(body, "generateContentRequest")
	if !inner.IsObject() {
		return body, nil
	}
	out := []byte(inner.Raw)
	if inner.Get("model").Exists() {
		return sjson.DeleteBytes(out, "model")
	}
	return out, nil
}
