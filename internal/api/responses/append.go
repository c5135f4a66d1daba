package responses

import (
	"math"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/jsonx"
)

// The Append methods encode a response and its parts without reflection:
// the gateway writes a response object once per answer and an item twice
// per streamed item, and reflection was a third of a translated answer's
// cost. They write exactly what jsonx.Marshal writes for the same value
// (a test and a fuzz target compare the two), so either may be used.

// AppendJSON appends r as JSON.
func (r *Response) AppendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = jsonx.AppendQuote(b, r.ID)
	b = append(b, `,"object":`...)
	b = jsonx.AppendQuote(b, r.Object)
	b = append(b, `,"created_at":`...)
	b = strconv.AppendInt(b, r.CreatedAt, 10)
	b = append(b, `,"status":`...)
	b = jsonx.AppendQuote(b, r.Status)
	if r.CompletedAt != nil {
		b = append(b, `,"completed_at":`...)
		b = strconv.AppendInt(b, *r.CompletedAt, 10)
	}
	b = append(b, `,"error":`...)
	if e := r.Error; e != nil {
		b = append(b, `{"code":`...)
		b = jsonx.AppendQuote(b, e.Code)
		b = append(b, `,"message":`...)
		b = jsonx.AppendQuote(b, e.Message)
		b = append(b, '}')
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"incomplete_details":`...)
	if d := r.IncompleteDetails; d != nil {
		b = append(b, `{"reason":`...)
		b = jsonx.AppendQuote(b, d.Reason)
		b = append(b, '}')
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"instructions":`...)
	b = appendStringPtr(b, r.Instructions)
	b = append(b, `,"max_output_tokens":`...)
	if r.MaxOutputTokens != nil {
		b = strconv.AppendInt(b, *r.MaxOutputTokens, 10)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"model":`...)
	b = jsonx.AppendQuote(b, r.Model)
	b = appendList(append(b, `,"output":`...), r.Output, (*Item).AppendJSON)
	b = append(b, `,"parallel_tool_calls":`...)
	b = strconv.AppendBool(b, r.ParallelToolCalls)
	b = append(b, `,"previous_response_id":`...)
	b = appendStringPtr(b, r.PreviousResponseID)
	b = append(b, `,"reasoning":`...)
	if r.Reasoning != nil {
		b = r.Reasoning.appendJSON(b)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"store":`...)
	b = strconv.AppendBool(b, r.Store)
	b = append(b, `,"temperature":`...)
	b = appendFloat(b, r.Temperature)
	if r.Text != nil { // omitempty: left out when it encodes as {}
		m := len(b)
		b = r.Text.appendJSON(append(b, `,"text":`...))
		if string(b[len(b)-2:]) == "{}" {
			b = b[:m]
		}
	}
	b = append(b, `,"tool_choice":`...)
	b = appendRaw(b, r.ToolChoice)
	b = append(b, `,"tools":`...)
	b = appendTools(b, r.Tools)
	b = append(b, `,"top_p":`...)
	b = appendFloat(b, r.TopP)
	b = append(b, `,"truncation":`...)
	b = jsonx.AppendQuote(b, r.Truncation)
	b = append(b, `,"usage":`...)
	if u := r.Usage; u != nil {
		b = append(b, `{"input_tokens":`...)
		b = strconv.AppendInt(b, u.InputTokens, 10)
		b = append(b, `,"input_tokens_details":{"cached_tokens":`...)
		b = strconv.AppendInt(b, u.InputTokensDetails.CachedTokens, 10)
		if u.InputTokensDetails.CacheWriteTokens != 0 {
			b = append(b, `,"cache_write_tokens":`...)
			b = strconv.AppendInt(b, u.InputTokensDetails.CacheWriteTokens, 10)
		}
		b = append(b, `},"output_tokens":`...)
		b = strconv.AppendInt(b, u.OutputTokens, 10)
		b = append(b, `,"output_tokens_details":{"reasoning_tokens":`...)
		b = strconv.AppendInt(b, u.OutputTokensDetails.ReasoningTokens, 10)
		b = append(b, `},"total_tokens":`...)
		b = strconv.AppendInt(b, u.TotalTokens, 10)
		b = append(b, '}')
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"user":`...)
	b = appendStringPtr(b, r.User)
	b = append(b, `,"metadata":`...)
	b = appendRaw(b, r.Metadata)
	return append(b, '}')
}

// AppendJSON appends it as JSON.
func (it *Item) AppendJSON(b []byte) []byte {
	n := len(b)
	b = append(b, '{')
	b = member(b, n, "type", it.Type)
	b = member(b, n, "id", it.ID)
	b = member(b, n, "status", it.Status)
	b = member(b, n, "role", it.Role)
	if !it.Content.IsZero() {
		b = it.Content.appendJSON(key(b, n, "content"))
	}
	b = member(b, n, "phase", it.Phase)
	b = member(b, n, "call_id", it.CallID)
	b = member(b, n, "name", it.Name)
	b = member(b, n, "namespace", it.Namespace)
	if it.Arguments != nil {
		b = jsonx.AppendQuote(key(b, n, "arguments"), *it.Arguments)
	}
	if it.Input != nil {
		b = jsonx.AppendQuote(key(b, n, "input"), *it.Input)
	}
	if !it.Output.IsZero() {
		b = it.Output.appendJSON(key(b, n, "output"))
	}
	if it.Summary != nil {
		b = appendParts(key(b, n, "summary"), it.Summary)
	}
	if it.EncryptedContent != nil {
		b = member(b, n, "encrypted_content", *it.EncryptedContent)
	}
	return appendExtra(b, n, it.Extra)
}

func (c *Content) appendJSON(b []byte) []byte {
	switch {
	case c.IsString:
		return jsonx.AppendQuote(b, c.Text)
	case c.Null:
		return append(b, "null"...)
	default:
		return appendParts(b, c.Parts)
	}
}

func appendParts(b []byte, parts []Part) []byte { return appendList(b, parts, (*Part).appendJSON) }

func appendTools(b []byte, tools []Tool) []byte { return appendList(b, tools, (*Tool).appendJSON) }

// appendList appends the elements of s as a JSON array.
func appendList[T any](b []byte, s []T, f func(*T, []byte) []byte) []byte {
	b = append(b, '[')
	for i := range s {
		if i > 0 {
			b = append(b, ',')
		}
		b = f(&s[i], b)
	}
	return append(b, ']')
}

func (p *Part) appendJSON(b []byte) []byte {
	n := len(b)
	b = append(b, `{"type":`...)
	b = jsonx.AppendQuote(b, p.Type)
	b = member(b, n, "text", p.Text)
	b = member(b, n, "refusal", p.Refusal)
	b = member(b, n, "image_url", p.ImageURL)
	b = member(b, n, "file_id", p.FileID)
	b = member(b, n, "file_data", p.FileData)
	b = member(b, n, "file_url", p.FileURL)
	b = member(b, n, "filename", p.Filename)
	b = member(b, n, "detail", p.Detail)
	if len(p.Annot) > 0 {
		b = appendRaw(key(b, n, "annotations"), p.Annot)
	}
	return appendExtra(b, n, p.Extra)
}

func (t *Tool) appendJSON(b []byte) []byte {
	n := len(b)
	b = append(b, `{"type":`...)
	b = jsonx.AppendQuote(b, t.Type)
	b = member(b, n, "name", t.Name)
	b = member(b, n, "description", t.Description)
	if len(t.Parameters) > 0 {
		b = appendRaw(key(b, n, "parameters"), t.Parameters)
	}
	if t.Strict != nil {
		b = strconv.AppendBool(key(b, n, "strict"), *t.Strict)
	}
	if len(t.Format) > 0 {
		b = appendRaw(key(b, n, "format"), t.Format)
	}
	if len(t.Tools) > 0 {
		b = appendTools(key(b, n, "tools"), t.Tools)
	}
	return appendExtra(b, n, t.Extra)
}

func (r *Reasoning) appendJSON(b []byte) []byte {
	n := len(b)
	b = append(b, '{')
	b = member(b, n, "effort", r.Effort)
	b = member(b, n, "summary", r.Summary)
	b = member(b, n, "generate_summary", r.GenerateSummary)
	return appendExtra(b, n, r.Extra)
}

func (t *Text) appendJSON(b []byte) []byte {
	n := len(b)
	b = append(b, '{')
	if f := t.Format; f != nil {
		b = key(b, n, "format")
		m := len(b)
		b = append(b, `{"type":`...)
		b = jsonx.AppendQuote(b, f.Type)
		b = member(b, m, "name", f.Name)
		if len(f.Schema) > 0 {
			b = appendRaw(key(b, m, "schema"), f.Schema)
		}
		if f.Strict != nil {
			b = strconv.AppendBool(key(b, m, "strict"), *f.Strict)
		}
		b = member(b, m, "description", f.Description)
		b = append(b, '}')
	}
	b = member(b, n, "verbosity", t.Verbosity)
	return appendExtra(b, n, t.Extra)
}

// key appends an object member's name, after a comma unless it is the
// first member of the object that starts at b[start].
func key(b []byte, start int, name string) []byte {
	if len(b) > start+1 {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, name...)
	return append(b, `":`...)
}

// member appends a string member that is left out when empty.
func member(b []byte, start int, name, v string) []byte {
	if v == "" {
		return b
	}
	return jsonx.AppendQuote(key(b, start, name), v)
}

func appendStringPtr(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return jsonx.AppendQuote(b, *s)
}

// appendExtra appends the members kept in extra (an object) and closes
// the object that starts at b[start].
func appendExtra(b []byte, start int, extra jsontext.Value) []byte {
	if len(extra) > 0 {
		m := len(b)
		b = appendRaw(b, extra) // {…}: its members follow the named ones
		inner := b[m+1 : len(b)-1]
		if len(inner) == 0 {
			b = b[:m]
		} else if m > start+1 {
			b[m] = ','
			b = b[:len(b)-1]
		} else {
			b = append(b[:m], inner...)
		}
	}
	return append(b, '}')
}

// appendRaw appends an already-encoded value without its whitespace, as
// the encoder writes one.
func appendRaw(b []byte, v jsontext.Value) []byte {
	if len(v) == 0 {
		return append(b, "null"...) // an absent value is written as null
	}
	if !hasSpace(v) {
		return append(b, v...)
	}
	m := len(b)
	b = append(b, v...)
	c := jsontext.Value(b[m:])
	if err := c.Compact(); err != nil {
		return append(b[:m], "null"...) // not reached: raw values were decoded before
	}
	return append(b[:m], c...)
}

// appendFloat appends f as the encoder does (ECMAScript's number format).
func appendFloat(b []byte, f float64) []byte {
	if a := math.Abs(f); a == 0 || a >= 1e-6 && a < 1e21 {
		return strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	v, err := jsonx.Marshal(f)
	if err != nil { // NaN or ±Inf, which no decoded number is
		return append(b, '0')
	}
	return append(b, v...)
}

// hasSpace reports whether v holds a whitespace byte, in a string or not:
// a value without one is already compact.
func hasSpace(v []byte) bool {
	for _, c := range v {
		if c <= ' ' {
			return true
		}
	}
	return false
}
