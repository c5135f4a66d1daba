package translate

import (
	"math"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/jsonx"
)

// Hand-written encoders of the Messages request and answer (see
// encode.go): what has members of its own (Extra) or a block source goes
// to jsonx.Marshal.

// encodeMessagesRequest encodes v as jsonx.Marshal does.
func encodeMessagesRequest(v *anthropic.MessagesRequest) ([]byte, error) {
	if b, ok := encodeWith(v, appendMessagesRequest); ok {
		return b, nil
	}
	return jsonx.Marshal(v)
}

// encodeMessagesResponse encodes v as jsonx.Marshal does.
func encodeMessagesResponse(v *anthropic.Response) ([]byte, error) {
	if b, ok := encodeWith(v, appendMessagesResponse); ok {
		return b, nil
	}
	return jsonx.Marshal(v)
}

func appendMessagesRequest(b []byte, v *anthropic.MessagesRequest) ([]byte, bool) {
	if len(v.Extra) > 0 {
		return nil, false
	}
	ok := true
	b = append(b, `{"model":`...)
	b = jsonx.AppendQuote(b, v.Model)
	b = append(b, `,"max_tokens":`...)
	b = strconv.AppendInt(b, v.MaxTokens, 10)
	if !v.System.IsZero() {
		b = append(b, `,"system":`...)
		if b, ok = appendContent(b, &v.System); !ok {
			return nil, false
		}
	}
	b = append(b, `,"messages":[`...)
	for i := range v.Messages {
		if i > 0 {
			b = append(b, ',')
		}
		m := &v.Messages[i]
		if len(m.Extra) > 0 {
			return nil, false
		}
		b = append(b, `{"role":`...)
		b = jsonx.AppendQuote(b, m.Role)
		b = append(b, `,"content":`...)
		if b, ok = appendContent(b, &m.Content); !ok {
			return nil, false
		}
		if b, ok = appendRawMember(b, "cache_control", m.CacheControl); !ok {
			return nil, false
		}
		b = append(b, '}')
	}
	b = append(b, ']')
	if len(v.StopSequences) > 0 {
		b = append(b, `,"stop_sequences":`...)
		b = appendStrings(b, v.StopSequences)
	}
	if v.Stream {
		b = append(b, `,"stream":true`...)
	}
	if b, ok = appendFloatMember(b, "temperature", v.Temperature); !ok {
		return nil, false
	}
	if b, ok = appendFloatMember(b, "top_p", v.TopP); !ok {
		return nil, false
	}
	if v.TopK != nil {
		b = append(b, `,"top_k":`...)
		b = strconv.AppendInt(b, *v.TopK, 10)
	}
	if v.Metadata != nil && v.Metadata.UserID != "" { // {} is empty: omitted
		b = append(b, `,"metadata":{"user_id":`...)
		b = jsonx.AppendQuote(b, v.Metadata.UserID)
		b = append(b, '}')
	}
	if len(v.Tools) > 0 {
		b = append(b, `,"tools":[`...)
		for i := range v.Tools {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = appendTool(b, &v.Tools[i]); !ok {
				return nil, false
			}
		}
		b = append(b, ']')
	}
	if tc := v.ToolChoice; tc != nil {
		b = append(b, `,"tool_choice":{"type":`...)
		b = jsonx.AppendQuote(b, tc.Type)
		b = appendStringMember(b, "name", tc.Name)
		if tc.DisableParallelToolUse {
			b = append(b, `,"disable_parallel_tool_use":true`...)
		}
		b = append(b, '}')
	}
	if t := v.Thinking; t != nil {
		if len(t.Extra) > 0 {
			return nil, false
		}
		b = append(b, `,"thinking":{"type":`...)
		b = jsonx.AppendQuote(b, t.Type)
		if t.BudgetTokens != 0 {
			b = append(b, `,"budget_tokens":`...)
			b = strconv.AppendInt(b, t.BudgetTokens, 10)
		}
		b = append(b, '}')
	}
	if oc := v.OutputConfig; oc != nil {
		if len(oc.Extra) > 0 {
			return nil, false
		}
		if oc.Effort != "" || oc.Format != nil { // {} is empty: omitted
			b = append(b, `,"output_config":{`...)
			first := len(b)
			b = appendStringMember(b, "effort", oc.Effort)
			if b, ok = appendRawMember(b, "format", oc.Format); !ok {
				return nil, false
			}
			if b[first] == ',' {
				b = append(b[:first], b[first+1:]...)
			}
			b = append(b, '}')
		}
	}
	if b, ok = appendRawMember(b, "output_format", v.OutputFormat); !ok {
		return nil, false
	}
	b = appendStringMember(b, "service_tier", v.ServiceTier)
	if b, ok = appendRawMember(b, "mcp_servers", v.MCPServers); !ok {
		return nil, false
	}
	if b, ok = appendRawMember(b, "container", v.Container); !ok {
		return nil, false
	}
	if b, ok = appendRawMember(b, "context_management", v.ContextMgmt); !ok {
		return nil, false
	}
	if b, ok = appendRawMember(b, "cache_control", v.CacheControl); !ok {
		return nil, false
	}
	b = appendStringMember(b, "inference_geo", v.InferenceGeo)
	return append(b, '}'), true
}

func appendTool(b []byte, t *anthropic.Tool) ([]byte, bool) {
	if len(t.Extra) > 0 {
		return nil, false
	}
	ok := true
	b = append(b, '{')
	first := len(b)
	b = appendStringMember(b, "type", t.Type)
	b = append(b, `,"name":`...)
	b = jsonx.AppendQuote(b, t.Name)
	b = append(b[:first], b[first+1:]...) // the leading comma
	b = appendStringMember(b, "description", t.Description)
	if b, ok = appendRawMember(b, "input_schema", t.InputSchema); !ok {
		return nil, false
	}
	b = appendBoolMember(b, "strict", t.Strict)
	if b, ok = appendRawMember(b, "cache_control", t.CacheControl); !ok {
		return nil, false
	}
	if t.DeferLoading {
		b = append(b, `,"defer_loading":true`...)
	}
	if b, ok = appendRawMember(b, "input_examples", t.InputExamples); !ok {
		return nil, false
	}
	if len(t.AllowedCallers) > 0 {
		b = append(b, `,"allowed_callers":`...)
		b = appendStrings(b, t.AllowedCallers)
	}
	b = appendBoolMember(b, "eager_input_streaming", t.EagerInputStreaming)
	return append(b, '}'), true
}

// appendContent is anthropic.Content.MarshalJSONTo.
func appendContent(b []byte, c *anthropic.Content) ([]byte, bool) {
	switch {
	case c.Raw != nil:
		return appendRaw(b, c.Raw)
	case c.FromString && len(c.Blocks) == 1 && c.Blocks[0].Type == "text":
		return jsonx.AppendQuote(b, c.Blocks[0].Text), true
	}
	return appendBlockList(b, c.Blocks)
}

func appendBlockList(b []byte, bs []anthropic.Block) ([]byte, bool) {
	ok := true
	b = append(b, '[')
	for i := range bs {
		if i > 0 {
			b = append(b, ',')
		}
		if b, ok = appendBlock(b, &bs[i]); !ok {
			return nil, false
		}
	}
	return append(b, ']'), true
}

// appendBlock is anthropic.Block.MarshalJSONTo.
func appendBlock(b []byte, v *anthropic.Block) ([]byte, bool) {
	if len(v.Extra) > 0 || v.Source != nil {
		return nil, false
	}
	ok := true
	emptyText := v.Type == "text" && v.Text == ""
	emptyThinking := v.Type == "thinking" && v.Thinking == ""
	b = append(b, `{"type":`...)
	b = jsonx.AppendQuote(b, v.Type)
	b = appendStringMember(b, "text", v.Text)
	if b, ok = appendRawMember(b, "citations", v.Citations); !ok {
		return nil, false
	}
	b = appendStringMember(b, "title", v.Title)
	b = appendStringMember(b, "id", v.ID)
	b = appendStringMember(b, "name", v.Name)
	if b, ok = appendRawMember(b, "input", v.Input); !ok {
		return nil, false
	}
	b = appendStringMember(b, "tool_use_id", v.ToolUseID)
	if v.Content != nil {
		n := len(b)
		b = append(b, `,"content":`...)
		at := len(b)
		if b, ok = appendContent(b, v.Content); !ok {
			return nil, false
		}
		switch string(b[at:]) {
		case `[]`, `""`, `{}`, `null`: // empty: omitted
			b = b[:n]
		}
	}
	if v.IsError {
		b = append(b, `,"is_error":true`...)
	}
	b = appendStringMember(b, "thinking", v.Thinking)
	b = appendStringMember(b, "signature", v.Signature)
	b = appendStringMember(b, "data", v.Data)
	if b, ok = appendRawMember(b, "cache_control", v.CacheControl); !ok {
		return nil, false
	}
	// The text or thinking of a block that must carry one comes last, as
	// the struct that Block.MarshalJSONTo adds it with puts it.
	switch {
	case emptyText:
		b = append(b, `,"text":""`...)
	case emptyThinking:
		b = append(b, `,"thinking":""`...)
	}
	return append(b, '}'), true
}

func appendMessagesResponse(b []byte, v *anthropic.Response) ([]byte, bool) {
	ok := true
	b = append(b, `{"id":`...)
	b = jsonx.AppendQuote(b, v.ID)
	b = append(b, `,"type":`...)
	b = jsonx.AppendQuote(b, v.Type)
	b = append(b, `,"role":`...)
	b = jsonx.AppendQuote(b, v.Role)
	b = append(b, `,"model":`...)
	b = jsonx.AppendQuote(b, v.Model)
	b = append(b, `,"content":`...)
	if b, ok = appendBlockList(b, v.Content); !ok {
		return nil, false
	}
	b = append(b, `,"stop_reason":`...)
	b = appendStringPtr(b, v.StopReason)
	b = append(b, `,"stop_sequence":`...)
	b = appendStringPtr(b, v.StopSequence)
	b = append(b, `,"usage":`...)
	if v.Usage == nil {
		b = append(b, "null"...)
	} else if b, ok = appendRaw(b, v.Usage); !ok {
		return nil, false
	}
	return append(b, '}'), true
}

// appendRawMember appends ,"name":v unless v is nil (omitzero).
func appendRawMember(b []byte, name string, v jsontext.Value) ([]byte, bool) {
	if v == nil {
		return b, true
	}
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return appendRaw(b, v)
}

// appendBoolMember appends ,"name":v unless v is nil (omitempty).
func appendBoolMember(b []byte, name string, v *bool) []byte {
	if v == nil {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return strconv.AppendBool(b, *v)
}

// appendFloatMember appends ,"name":v unless v is nil (omitempty), in
// the encoder's own spelling of numbers.
func appendFloatMember(b []byte, name string, v *float64) ([]byte, bool) {
	if v == nil {
		return b, true
	}
	if math.IsNaN(*v) || math.IsInf(*v, 0) { // no JSON number: an error
		return nil, false
	}
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	e := rawEncoders.Get().(*rawEncoder)
	defer rawEncoders.Put(e)
	e.buf.Reset()
	e.enc.Reset(&e.buf, jsontext.AllowInvalidUTF8(true))
	if err := e.enc.WriteToken(jsontext.Float(*v)); err != nil {
		return nil, false
	}
	out := e.buf.Bytes()
	return append(b, out[:len(out)-1]...), true
}
