package storedresponses

import (
	"bytes"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/store"
)

// inputItems is a request's input as an array of items: a string is one
// user message.
func inputItems(in gjson.Result) []byte {
	switch {
	case in.Type == gjson.String:
		return append(append([]byte{'['}, dialect.UserInputItem([]byte(in.Raw))...), ']')
	case in.IsArray():
		return []byte(in.Raw)
	}
	return []byte("[]")
}

// conversation is the input items that led to the last response of
// chain (the inputs and outputs of those before it, then its input),
// followed by the arrays in more.
func conversation(chain []store.Response, more ...[]byte) []byte {
	parts := make([][]byte, 0, 2*len(chain)+len(more))
	for i, r := range chain {
		parts = append(parts, r.Input)
		if i < len(chain)-1 {
			parts = append(parts, output(r))
		}
	}
	return joinArrays(append(parts, more...)...)
}

// output is a stored response's output items.
func output(r store.Response) []byte { return []byte(gjson.GetBytes(r.Response, "output").Raw) }

// joinArrays concatenates JSON arrays.
func joinArrays(arrays ...[]byte) []byte {
	out := []byte{'['}
	for _, a := range arrays {
		a = bytes.TrimSpace(a)
		if len(a) < 2 || a[0] != '[' {
			continue
		}
		inner := bytes.TrimSpace(a[1 : len(a)-1])
		if len(inner) == 0 {
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, inner...)
	}
	return append(out, ']')
}
