package translate

import (
	"bytes"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/meter"
)

// The non-streamed Chat answer is encoded by hand, appending, rather than
// by the reflective encoder, as the streams are. Like the decoders (see
// decode.go) the hand-written encoder takes only what it is sure of: an
// answer with members of its own (Extra) or content parts goes to
// jsonx.Marshal, and so does one whose raw values the encoder refuses,
// so the bytes, and any error, are always jsonx.Marshal's.
// FuzzEncodeCompletion holds the two to the same bytes.

// encode encodes v as jsonx.Marshal does.
func encode(v any) ([]byte, error) {
	switch v := v.(type) {
	case *anthropic.MessagesRequest:
		return encodeMessagesRequest(v)
	case *openai.ChatRequest:
		return encodeChatRequest(v)
	case *openai.Completion:
		return encodeCompletion(v)
	}
	return jsonx.Marshal(v)
}

// encodeCompletion encodes c as jsonx.Marshal does.
func encodeCompletion(c *openai.Completion) ([]byte, error) {
	if b, ok := encodeWith(c, appendCompletion); ok {
		return b, nil
	}
	return jsonx.Marshal(c)
}

// encodeWith appends v with f to a pooled buffer, and returns a copy of
// the result: one allocation of the exact size, as jsonx.Marshal makes.
func encodeWith[T any](v *T, f func([]byte, *T) ([]byte, bool)) ([]byte, bool) {
	bp := encodeBuffers.Get().(*[]byte)
	defer encodeBuffers.Put(bp)
	b, ok := f((*bp)[:0], v)
	if !ok {
		return nil, false
	}
	if cap(b) <= 1<<20 { // a buffer grown for a huge body is let go
		*bp = b
	}
	return bytes.Clone(b), true
}

var encodeBuffers = sync.Pool{New: func() any { return new([]byte) }}

func appendCompletion(b []byte, c *openai.Completion) ([]byte, bool) {
	ok := true
	b = append(b, `{"id":`...)
	b = jsonx.AppendQuote(b, c.ID)
	b = append(b, `,"object":`...)
	b = jsonx.AppendQuote(b, c.Object)
	b = append(b, `,"created":`...)
	b = strconv.AppendInt(b, c.Created, 10)
	b = append(b, `,"model":`...)
	b = jsonx.AppendQuote(b, c.Model)
	b = append(b, `,"choices":[`...)
	for i := range c.Choices {
		if i > 0 {
			b = append(b, ',')
		}
		ch := &c.Choices[i]
		b = append(b, `{"index":`...)
		b = strconv.AppendInt(b, ch.Index, 10)
		b = append(b, `,"message":`...)
		if b, ok = appendChatMessage(b, &ch.Message); !ok {
			return nil, false
		}
		b = append(b, `,"logprobs":`...)
		if ch.Logprobs == nil {
			b = append(b, "null"...)
		} else if b, ok = appendRaw(b, ch.Logprobs); !ok {
			return nil, false
		}
		b = append(b, `,"finish_reason":`...)
		b = appendStringPtr(b, ch.FinishReason)
		b = append(b, '}')
	}
	b = append(b, ']')
	if c.Usage != nil { // omitzero
		b = append(b, `,"usage":`...)
		if b, ok = appendRaw(b, c.Usage); !ok {
			return nil, false
		}
	}
	b = append(b, `,"system_fingerprint":`...)
	b = appendStringPtr(b, c.SystemFingerprint)
	return append(b, '}'), true
}

// appendChatMessage appends a message without members of its own.
func appendChatMessage(b []byte, m *openai.ChatMessage) ([]byte, bool) {
	if len(m.Extra) > 0 {
		return nil, false
	}
	ok := true
	b = append(b, `{"role":`...)
	b = jsonx.AppendQuote(b, m.Role)
	b = append(b, `,"content":`...)
	switch {
	case m.Content.IsString:
		b = jsonx.AppendQuote(b, m.Content.Text)
	case m.Content.Parts != nil:
		b = append(b, '[')
		for i := range m.Content.Parts {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = appendPart(b, &m.Content.Parts[i]); !ok {
				return nil, false
			}
		}
		b = append(b, ']')
	default:
		b = append(b, "null"...)
	}
	b = appendStringMember(b, "name", m.Name)
	if len(m.ToolCalls) > 0 {
		b = append(b, `,"tool_calls":[`...)
		for i := range m.ToolCalls {
			if i > 0 {
				b = append(b, ',')
			}
			tc := &m.ToolCalls[i]
			b = append(b, `{"id":`...)
			b = jsonx.AppendQuote(b, tc.ID)
			b = append(b, `,"type":`...)
			b = jsonx.AppendQuote(b, tc.Type)
			b = append(b, `,"function":`...)
			b = appendFunctionCall(b, &tc.Function)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = appendStringMember(b, "tool_call_id", m.ToolCallID)
	if m.FunctionCall != nil {
		b = append(b, `,"function_call":`...)
		b = appendFunctionCall(b, m.FunctionCall)
	}
	if m.Refusal != nil {
		b = appendStringMember(b, "refusal", *m.Refusal)
	}
	b = appendStringMember(b, "reasoning_content", m.ReasoningContent)
	b = appendStringMember(b, "reasoning", m.Reasoning)
	if len(m.ThinkingBlocks) > 0 {
		b = append(b, `,"thinking_blocks":[`...)
		for i := range m.ThinkingBlocks {
			if i > 0 {
				b = append(b, ',')
			}
			tb := &m.ThinkingBlocks[i]
			b = append(b, `{"type":`...)
			b = jsonx.AppendQuote(b, tb.Type)
			b = appendStringMember(b, "thinking", tb.Thinking)
			b = appendStringMember(b, "signature", tb.Signature)
			b = appendStringMember(b, "data", tb.Data)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = appendStringMember(b, "reasoning_signature", m.ReasoningSig)
	return append(b, '}'), true
}

func appendFunctionCall(b []byte, f *openai.FunctionCall) []byte {
	b = append(b, `{"name":`...)
	b = jsonx.AppendQuote(b, f.Name)
	b = append(b, `,"arguments":`...)
	b = jsonx.AppendQuote(b, f.Arguments)
	return append(b, '}')
}

// appendStringMember appends ,"name":s unless s is empty (omitempty).
func appendStringMember(b []byte, name, s string) []byte {
	if s == "" {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return jsonx.AppendQuote(b, s)
}

// appendStringPtr appends s, or null.
func appendStringPtr(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return jsonx.AppendQuote(b, *s)
}

// appendRaw appends a raw value as jsonx.Marshal writes one: compacted
// and checked by an encoder of the same options.
func appendRaw(b []byte, v jsontext.Value) ([]byte, bool) {
	if string(v) == "null" {
		return append(b, v...), true
	}
	e := rawEncoders.Get().(*rawEncoder)
	defer rawEncoders.Put(e)
	e.buf.Reset()
	e.enc.Reset(&e.buf, jsontext.AllowInvalidUTF8(true))
	if err := e.enc.WriteValue(v); err != nil {
		return nil, false
	}
	out := e.buf.Bytes()
	out = out[:len(out)-1] // the newline after a top-level value
	b = append(b, out...)
	if e.buf.Cap() > 64<<10 {
		e.buf = bytes.Buffer{}
	}
	return b, true
}

type rawEncoder struct {
	buf bytes.Buffer
	enc jsontext.Encoder
}

var rawEncoders = sync.Pool{New: func() any { return new(rawEncoder) }}

// encodeOpenAIUsage is jsonx.Marshal(openAIUsage(u)), appended by hand:
// integers only, it cannot fail.
func encodeOpenAIUsage(u meter.Usage) []byte {
	return appendOpenAIUsage(make([]byte, 0, 160), openAIUsage(u))
}

func appendOpenAIUsage(b []byte, u *openai.Usage) []byte {
	b = append(b, `{"prompt_tokens":`...)
	b = strconv.AppendInt(b, u.PromptTokens, 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, u.CompletionTokens, 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, u.TotalTokens, 10)
	if d := u.PromptTokensDetails; d != nil {
		b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
		b = strconv.AppendInt(b, d.CachedTokens, 10)
		if d.CacheWriteTokens != 0 {
			b = append(b, `,"cache_write_tokens":`...)
			b = strconv.AppendInt(b, d.CacheWriteTokens, 10)
		}
		b = append(b, '}')
	}
	if d := u.CompletionTokensDetails; d != nil {
		b = append(b, `,"completion_tokens_details":{"reasoning_tokens":`...)
		b = strconv.AppendInt(b, d.ReasoningTokens, 10)
		b = append(b, '}')
	}
	return append(b, '}')
}

// appendPart appends a content part without members of its own.
func appendPart(b []byte, p *openai.Part) ([]byte, bool) {
	if len(p.Extra) > 0 {
		return nil, false
	}
	ok := true
	b = append(b, `{"type":`...)
	b = jsonx.AppendQuote(b, p.Type)
	b = appendStringMember(b, "text", p.Text)
	b = appendStringMember(b, "refusal", p.Refusal)
	if u := p.ImageURL; u != nil {
		b = append(b, `,"image_url":{"url":`...)
		b = jsonx.AppendQuote(b, u.URL)
		b = appendStringMember(b, "detail", u.Detail)
		b = append(b, '}')
	}
	if f := p.File; f != nil && (f.FileData != "" || f.FileID != "" || f.Filename != "") { // {} is empty: omitted
		b = append(b, `,"file":{`...)
		first := len(b)
		b = appendStringMember(b, "file_data", f.FileData)
		b = appendStringMember(b, "file_id", f.FileID)
		b = appendStringMember(b, "filename", f.Filename)
		b = append(b[:first], b[first+1:]...) // the leading comma
		b = append(b, '}')
	}
	if b, ok = appendRawMember(b, "input_audio", p.InputAudio); !ok {
		return nil, false
	}
	if b, ok = appendRawMember(b, "cache_control", p.CacheControl); !ok {
		return nil, false
	}
	return append(b, '}'), true
}

// encodeChatRequest encodes v as jsonx.Marshal does.
func encodeChatRequest(v *openai.ChatRequest) ([]byte, error) {
	if b, ok := encodeWith(v, appendChatRequest); ok {
		return b, nil
	}
	return jsonx.Marshal(v)
}

func appendChatRequest(b []byte, v *openai.ChatRequest) ([]byte, bool) {
	if len(v.Extra) > 0 {
		return nil, false
	}
	ok := true
	b = append(b, `{"model":`...)
	b = jsonx.AppendQuote(b, v.Model)
	b = append(b, `,"messages":[`...)
	for i := range v.Messages {
		if i > 0 {
			b = append(b, ',')
		}
		if b, ok = appendChatMessage(b, &v.Messages[i]); !ok {
			return nil, false
		}
	}
	b = append(b, ']')
	b = appendIntMember(b, "max_tokens", v.MaxTokens)
	b = appendIntMember(b, "max_completion_tokens", v.MaxCompletionTokens)
	if v.Stream {
		b = append(b, `,"stream":true`...)
	}
	if v.StreamOptions != nil {
		b = append(b, `,"stream_options":{"include_usage":`...)
		b = strconv.AppendBool(b, v.StreamOptions.IncludeUsage)
		b = append(b, '}')
	}
	if b, ok = appendFloatMember(b, "temperature", v.Temperature); !ok {
		return nil, false
	}
	if b, ok = appendFloatMember(b, "top_p", v.TopP); !ok {
		return nil, false
	}
	b = appendIntMember(b, "top_k", v.TopK)
	if v.Stop.Set {
		b = append(b, `,"stop":`...)
		b = appendStrings(b, v.Stop.Values)
	}
	b = appendIntMember(b, "n", v.N)
	b = appendBoolMember(b, "logprobs", v.Logprobs)
	b = appendIntMember(b, "top_logprobs", v.TopLogprobs)
	b = appendStringMember(b, "user", v.User)
	b = appendStringMember(b, "prompt_cache_key", v.PromptCacheKey)
	b = appendStringMember(b, "safety_identifier", v.SafetyIdentifier)
	if len(v.Tools) > 0 {
		b = append(b, `,"tools":[`...)
		for i := range v.Tools {
			if i > 0 {
				b = append(b, ',')
			}
			t := &v.Tools[i]
			if len(t.Extra) > 0 {
				return nil, false
			}
			b = append(b, `{"type":`...)
			b = jsonx.AppendQuote(b, t.Type)
			if f := &t.Function; f.Name != "" || f.Description != "" || f.Parameters != nil || f.Strict != nil { // omitzero
				b = append(b, `,"function":`...)
				if b, ok = appendFunction(b, f); !ok {
					return nil, false
				}
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if b, ok = appendRawMember(b, "tool_choice", v.ToolChoice); !ok {
		return nil, false
	}
	b = appendBoolMember(b, "parallel_tool_calls", v.ParallelToolCalls)
	if len(v.Functions) > 0 {
		b = append(b, `,"functions":[`...)
		for i := range v.Functions {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = appendFunction(b, &v.Functions[i]); !ok {
				return nil, false
			}
		}
		b = append(b, ']')
	}
	if b, ok = appendRawMember(b, "function_call", v.FunctionCall); !ok {
		return nil, false
	}
	b = appendStringMember(b, "reasoning_effort", v.ReasoningEffort)
	if b, ok = appendRawMember(b, "response_format", v.ResponseFormat); !ok {
		return nil, false
	}
	if len(v.Modalities) > 0 {
		b = append(b, `,"modalities":`...)
		b = appendStrings(b, v.Modalities)
	}
	if b, ok = appendRawMember(b, "audio", v.Audio); !ok {
		return nil, false
	}
	if b, ok = appendRawMember(b, "thinking", v.Thinking); !ok {
		return nil, false
	}
	if b, ok = appendRawMember(b, "reasoning", v.Reasoning); !ok {
		return nil, false
	}
	b = appendBoolMember(b, "enable_thinking", v.EnableThinking)
	return append(b, '}'), true
}

func appendFunction(b []byte, f *openai.Function) ([]byte, bool) {
	ok := true
	b = append(b, `{"name":`...)
	b = jsonx.AppendQuote(b, f.Name)
	b = appendStringMember(b, "description", f.Description)
	if b, ok = appendRawMember(b, "parameters", f.Parameters); !ok {
		return nil, false
	}
	b = appendBoolMember(b, "strict", f.Strict)
	return append(b, '}'), true
}

// appendStrings appends an array of strings ([] for none).
func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonx.AppendQuote(b, s)
	}
	return append(b, ']')
}

// appendIntMember appends ,"name":v unless v is nil (omitempty).
func appendIntMember(b []byte, name string, v *int64) []byte {
	if v == nil {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return strconv.AppendInt(b, *v, 10)
}
