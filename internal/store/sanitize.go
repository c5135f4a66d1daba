package store

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxFieldBytes bounds each text field of a stored ledger record: most
// come from the client (the model as sent, the user agent) or pass through
// from an upstream (error text), and none is worth more than a line.
const MaxFieldBytes = 256

// MaxAttemptsBytes bounds a record's attempts JSON.
const MaxAttemptsBytes = 4096

// clipMarker ends a value that was cut to fit.
const clipMarker = "…"

// SanitizeRequest returns rec as it is stored: every text field valid
// UTF-8 without NUL (invalid bytes and NUL become U+FFFD) and at most
// MaxFieldBytes long (longer values are cut on a rune boundary and end
// with "…"); the attempts a JSON array of at most MaxAttemptsBytes;
// latencies finite; the status within the column's range. Both databases
// take any sanitised record, so one odd request can never block the
// ledger. A clean record is returned unchanged, without allocating, and
// SanitizeRequest(SanitizeRequest(r)) == SanitizeRequest(r).
func SanitizeRequest(rec Request) Request {
	for _, f := range []*string{&rec.ID, &rec.KeyID, &rec.ClientProtocol, &rec.Endpoint, &rec.Model, &rec.CanonicalModel, &rec.Provider,
		&rec.UpstreamModel, &rec.Lane, &rec.ErrorType, &rec.ClientIP, &rec.UserAgent, &rec.UserID, &rec.TeamID, &rec.SessionID, &rec.Unit} {
		*f = cleanField(*f)
	}
	rec.Attempts = cleanAttempts(rec.Attempts)
	for _, f := range []*float64{&rec.LatencyMS, &rec.TTFBMS, &rec.UpstreamMS, &rec.OverheadMS} {
		if math.IsNaN(*f) || math.IsInf(*f, 0) {
			*f = 0 // SQLite stores NaN as NULL, and JSON (the spill file) has neither
		}
	}
	rec.Status = min(max(rec.Status, math.MinInt32), math.MaxInt32) // an INTEGER column
	return rec
}

// cleanField makes s storable as a ledger field: valid text, clipped to
// MaxFieldBytes. Filters pass through it too, so a filter matches the
// records written with the same value.
func cleanField(s string) string { return clip(cleanText(s), MaxFieldBytes) }

// cleanText makes s valid UTF-8 without NUL, the text PostgreSQL accepts:
// each run of invalid bytes, and each NUL, becomes U+FFFD.
func cleanText(s string) string {
	if isCleanText(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}

func isCleanText(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == 0 || c >= utf8.RuneSelf {
			return strings.IndexByte(s, 0) < 0 && utf8.ValidString(s)
		}
	}
	return true
}

// cleanBytes is cleanText for a value held as bytes (a JSON document).
func cleanBytes(b []byte) string { return cleanText(string(b)) }

// clip cuts valid text s to at most n bytes, on a rune boundary, ending it
// with clipMarker when it was cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len(clipMarker)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + clipMarker
}

// cleanAttempts keeps the attempts a JSON array (the admin API serves it
// as JSON as it is) whose strings are at most MaxFieldBytes long, within
// MaxAttemptsBytes. Text that is not a JSON array is kept, clipped, as the
// error of one attempt; past MaxAttemptsBytes, the last attempts are
// summed up in one.
func cleanAttempts(s string) string {
	if s == "" || s == "[]" {
		return s
	}
	s = cleanText(s)
	isArray := isJSONArray(s)
	if isArray && len(s) <= MaxFieldBytes {
		return s // no string in it can be too long
	}
	var elems []json.RawMessage
	if !isArray || json.Unmarshal([]byte(s), &elems) != nil {
		return `[{"target":"","status":0,"error":` + quote(clip(s, MaxFieldBytes)) + `,"ms":0}]`
	}
	clipped := make([][]byte, len(elems))
	size := 1 // the brackets and commas
	for i, e := range elems {
		clipped[i] = clipJSON(e)
		size += len(clipped[i]) + 1
	}
	// The room a closing summary needs, when not every attempt fits.
	summaryRoom := 96
	if size <= MaxAttemptsBytes {
		summaryRoom = 0
	}
	out := make([]byte, 0, min(size, MaxAttemptsBytes))
	out = append(out, '[')
	kept := 0
	for _, ce := range clipped {
		if len(out)+len(ce)+1+summaryRoom > MaxAttemptsBytes {
			break
		}
		if kept > 0 {
			out = append(out, ',')
		}
		out = append(out, ce...)
		kept++
	}
	if left := len(elems) - kept; left > 0 {
		if kept > 0 {
			out = append(out, ',')
		}
		out = append(out, `{"target":"","status":0,"error":`...)
		out = append(out, quote(clipMarker+" "+strconv.Itoa(left)+" more attempts not recorded")...)
		out = append(out, `,"ms":0}`...)
	}
	return string(append(out, ']'))
}

// isJSONArray reports whether s is valid JSON holding an array.
func isJSONArray(s string) bool {
	t := strings.TrimLeft(s, " \t\r\n")
	return strings.HasPrefix(t, "[") && json.Valid([]byte(t))
}

// clipJSON shortens one JSON value: a string is clipped to MaxFieldBytes,
// an object has its string values clipped (keys kept in order), and
// anything else longer than MaxFieldBytes becomes null.
func clipJSON(v json.RawMessage) []byte {
	v = bytes.TrimSpace(v)
	var str string
	switch {
	case len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &str) == nil:
		return []byte(quote(clip(cleanText(str), MaxFieldBytes)))
	case len(v) > 0 && v[0] == '{':
		return clipObject(v)
	case len(v) > MaxFieldBytes:
		return []byte("null")
	}
	return v
}

func clipObject(obj json.RawMessage) []byte {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return []byte("null")
	}
	out := []byte{'{'}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return []byte("null")
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return []byte("null")
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		key, _ := kt.(string)
		out = append(out, quote(clip(cleanText(key), MaxFieldBytes))...)
		out = append(out, ':')
		if len(v) > 0 && v[0] == '{' {
			v = json.RawMessage("null") // no nesting: attempts are flat
		}
		out = append(out, clipJSON(v)...)
	}
	return append(out, '}')
}

// quote renders s as a JSON string.
func quote(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}
