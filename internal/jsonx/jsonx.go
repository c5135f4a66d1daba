// Package jsonx is tollgate's one door to typed JSON encoding: the JSON v2
// implementation (strict about duplicate names and invalid UTF-8, no HTML
// escaping). When encoding/json/v2 becomes stable only this file changes.
//
// Pass-through bytes never go through here: they are read with gjson and
// edited with byte splices so that they reach the upstream unchanged.
package jsonx

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Value is raw, already-encoded JSON kept as it is.
type Value = jsontext.Value

// Marshal encodes v compactly, with map keys in sorted order. Invalid
// UTF-8 in a string (text an upstream sent, say) becomes U+FFFD: what
// tollgate writes is always valid JSON, and an encoding never fails on it.
func Marshal(v any) ([]byte, error) {
	return json.Marshal(v, json.Deterministic(true), jsontext.AllowInvalidUTF8(true))
}

// Unmarshal decodes data into v, rejecting duplicate names and invalid UTF-8.
func Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

// AppendQuote appends s as a JSON string. Invalid UTF-8 bytes become
// U+FFFD, one for each byte, as Marshal does: the same text quoted either
// way reads the same.
func AppendQuote(dst []byte, s string) []byte {
	out, _ := jsontext.AppendQuote(dst, s) // invalid UTF-8 is replaced, and reported
	return out
}

// UnmarshalStrict is Unmarshal that also rejects members v has no field
// for: for requests tollgate itself defines, where a misspelt field must
// fail rather than be ignored.
func UnmarshalStrict(data []byte, v any) error {
	return json.Unmarshal(data, v, json.RejectUnknownMembers(true))
}
