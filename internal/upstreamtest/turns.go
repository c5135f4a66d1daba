package upstreamtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/tidwall/gjson"
)

// Turn is one scripted model answer, written in whichever provider's wire
// format the request came in: Anthropic Messages, Chat Completions,
// Responses or Gemini, whole or streamed. It lets one test script a model
// once and serve it behind every kind of upstream.
type Turn struct {
	// Thinking is reasoning text and Signature what seals it: a Messages
	// thinking block's signature, a Responses reasoning item's
	// encrypted_content, a Gemini thoughtSignature (on the first function
	// call, else on the first text part). Chat Completions has neither.
	Thinking, Signature string
	// Text is the answer's text, one delta per element when streamed.
	Text  []string
	Calls []Call
	Usage Usage
	// Model is the model the answer names; default "scripted-model".
	Model string
}

// Call is a function call. ID may be empty (Gemini's often are); the
// other formats need one and get "call_" plus the call's position.
type Call struct {
	ID, Name string
	Args     string // a JSON object
}

// Usage is a turn's token counts. Input counts the whole prompt, Cached
// included; Output the visible answer, Reasoning excluded.
type Usage struct {
	Input, Cached, Output, Reasoning int
}

// Streamed reports whether r asks for a streamed answer: a Gemini
// streamGenerateContent, or "stream":true in the other protocols.
func Streamed(r Received) bool {
	return strings.HasSuffix(r.Path, ":streamGenerateContent") || gjson.GetBytes(r.Body, "stream").Bool()
}

// Dialect guesses the protocol of a request from its path.
func Dialect(r Received) string {
	switch {
	case strings.Contains(r.Path, ":generateContent") || strings.Contains(r.Path, ":streamGenerateContent"):
		return "gemini"
	case strings.HasSuffix(r.Path, "/messages"):
		return "messages"
	case strings.HasSuffix(r.Path, "/chat/completions"):
		return "chat"
	case strings.HasSuffix(r.Path, "/responses"):
		return "responses"
	}
	return ""
}

// Reply writes t in the format r asked in (Dialect), whole or streamed
// as r asked (Streamed). A Gemini stream is SSE with alt=sse and a JSON
// array without it, as Google serves it.
func (t Turn) Reply(r Received) Reply {
	stream := Streamed(r)
	switch Dialect(r) {
	case "gemini":
		if stream && !strings.Contains(r.Query, "alt=sse") {
			return Reply{Body: []byte("[" + strings.Join(t.geminiChunks(), ",\r\n") + "]")}
		}
		return t.Gemini(stream)
	case "messages":
		return t.Messages(stream)
	case "chat":
		return t.Chat(stream)
	case "responses":
		return t.Responses(stream)
	}
	return Reply{Status: 404, Body: []byte(fmt.Sprintf(`{"error":"no scripted protocol at %s"}`, r.Path))}
}

func (t Turn) model() string {
	if t.Model == "" {
		return "scripted-model"
	}
	return t.Model
}

func (c Call) id(i int) string {
	if c.ID == "" {
		return fmt.Sprintf("call_%d", i)
	}
	return c.ID
}

func turnJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func turnEvent(name string, v any) []byte {
	if name == "" {
		return []byte("data: " + turnJSON(v) + "\n\n")
	}
	return []byte("event: " + name + "\ndata: " + turnJSON(v) + "\n\n")
}

// wire is a JSON object written with its members in the providers' order
// (type first, a thinking block's text before its signature), so that a
// test can look for a block byte for byte as the provider sent it.
type wire map[string]any

// memberRank orders the members that lead an object; others follow
// sorted by name.
var memberRank = map[string]int{"type": 1, "id": 2, "object": 3, "role": 4, "model": 5, "index": 6, "name": 7, "call_id": 8,
	"thinking": 9, "text": 10, "signature": 11, "content": 12}

func (w wire) MarshalJSON() ([]byte, error) {
	keys := make([]string, 0, len(w))
	for k := range w {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		ri, rj := memberRank[keys[i]], memberRank[keys[j]]
		switch {
		case ri != 0 && rj != 0:
			return ri < rj
		case ri != 0 || rj != 0:
			return ri != 0
		}
		return keys[i] < keys[j]
	})
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(w[k])
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Messages writes t as an Anthropic Messages answer.
func (t Turn) Messages(stream bool) Reply {
	var blocks []wire
	if t.Thinking != "" || t.Signature != "" {
		blocks = append(blocks, wire{"type": "thinking", "thinking": t.Thinking, "signature": t.Signature})
	}
	if len(t.Text) > 0 {
		blocks = append(blocks, wire{"type": "text", "text": strings.Join(t.Text, "")})
	}
	for i, c := range t.Calls {
		blocks = append(blocks, wire{"type": "tool_use", "id": c.id(i), "name": c.Name, "input": json.RawMessage(c.Args)})
	}
	stop := "end_turn"
	if len(t.Calls) > 0 {
		stop = "tool_use"
	}
	u := t.Usage
	usage := wire{"input_tokens": u.Input - u.Cached, "cache_creation_input_tokens": 0, "cache_read_input_tokens": u.Cached,
		"output_tokens": u.Output + u.Reasoning, "service_tier": "standard"}
	msg := wire{"id": "msg_01Scripted", "type": "message", "role": "assistant", "model": t.model(), "content": blocks,
		"stop_reason": stop, "stop_sequence": nil, "usage": usage}
	if !stream {
		return Reply{Body: []byte(turnJSON(msg))}
	}
	start := wire{"id": "msg_01Scripted", "type": "message", "role": "assistant", "model": t.model(), "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": wire{"input_tokens": u.Input - u.Cached, "cache_creation_input_tokens": 0,
			"cache_read_input_tokens": u.Cached, "output_tokens": 1}}
	ev := [][]byte{turnEvent("message_start", wire{"type": "message_start", "message": start}), turnEvent("ping", wire{"type": "ping"})}
	delta := func(i int, d wire) {
		ev = append(ev, turnEvent("content_block_delta", wire{"type": "content_block_delta", "index": i, "delta": d}))
	}
	for i, b := range blocks {
		var first wire
		switch b["type"] {
		case "thinking":
			first = wire{"type": "thinking", "thinking": "", "signature": ""}
		case "text":
			first = wire{"type": "text", "text": ""}
		case "tool_use":
			first = wire{"type": "tool_use", "id": b["id"], "name": b["name"], "input": wire{}}
		}
		ev = append(ev, turnEvent("content_block_start", wire{"type": "content_block_start", "index": i, "content_block": first}))
		switch b["type"] {
		case "thinking":
			delta(i, wire{"type": "thinking_delta", "thinking": t.Thinking})
			delta(i, wire{"type": "signature_delta", "signature": t.Signature})
		case "text":
			for _, s := range t.Text {
				delta(i, wire{"type": "text_delta", "text": s})
			}
		case "tool_use":
			// Arguments arrive in two pieces, as Claude streams them.
			args := string(b["input"].(json.RawMessage))
			half := len(args) / 2
			delta(i, wire{"type": "input_json_delta", "partial_json": args[:half]})
			delta(i, wire{"type": "input_json_delta", "partial_json": args[half:]})
		}
		ev = append(ev, turnEvent("content_block_stop", wire{"type": "content_block_stop", "index": i}))
	}
	ev = append(ev,
		turnEvent("message_delta", wire{"type": "message_delta", "delta": wire{"stop_reason": stop, "stop_sequence": nil},
			"usage": wire{"input_tokens": u.Input - u.Cached, "cache_creation_input_tokens": 0, "cache_read_input_tokens": u.Cached, "output_tokens": u.Output + u.Reasoning}}),
		turnEvent("message_stop", wire{"type": "message_stop"}))
	return Reply{Events: ev}
}

func (t Turn) chatUsage() wire {
	u := t.Usage
	return wire{"prompt_tokens": u.Input, "completion_tokens": u.Output + u.Reasoning, "total_tokens": u.Input + u.Output + u.Reasoning,
		"prompt_tokens_details":     wire{"cached_tokens": u.Cached, "audio_tokens": 0},
		"completion_tokens_details": wire{"reasoning_tokens": u.Reasoning, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}}
}

// Chat writes t as a Chat Completions answer (without its thinking,
// which Chat Completions has no field for).
func (t Turn) Chat(stream bool) Reply {
	finish := "stop"
	if len(t.Calls) > 0 {
		finish = "tool_calls"
	}
	var calls []wire
	for i, c := range t.Calls {
		calls = append(calls, wire{"id": c.id(i), "type": "function", "function": wire{"name": c.Name, "arguments": c.Args}})
	}
	if !stream {
		msg := wire{"role": "assistant", "content": nil, "refusal": nil, "annotations": []any{}}
		if len(t.Text) > 0 {
			msg["content"] = strings.Join(t.Text, "")
		}
		if calls != nil {
			msg["tool_calls"] = calls
		}
		return Reply{Body: []byte(turnJSON(wire{"id": "chatcmpl-Scripted", "object": "chat.completion", "created": 1767225600, "model": t.model(),
			"choices": []wire{{"index": 0, "message": msg, "logprobs": nil, "finish_reason": finish}}, "usage": t.chatUsage(),
			"service_tier": "default", "system_fingerprint": "fp_scripted"}))}
	}
	chunk := func(delta wire, finish any) []byte {
		return turnEvent("", wire{"id": "chatcmpl-Scripted", "object": "chat.completion.chunk", "created": 1767225600, "model": t.model(),
			"system_fingerprint": "fp_scripted", "choices": []wire{{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}, "usage": nil})
	}
	ev := [][]byte{chunk(wire{"role": "assistant", "content": "", "refusal": nil}, nil)}
	for _, s := range t.Text {
		ev = append(ev, chunk(wire{"content": s}, nil))
	}
	for i, c := range t.Calls {
		ev = append(ev,
			chunk(wire{"tool_calls": []wire{{"index": i, "id": c.id(i), "type": "function", "function": wire{"name": c.Name, "arguments": ""}}}}, nil),
			chunk(wire{"tool_calls": []wire{{"index": i, "function": wire{"arguments": c.Args}}}}, nil))
	}
	ev = append(ev, chunk(wire{}, finish),
		turnEvent("", wire{"id": "chatcmpl-Scripted", "object": "chat.completion.chunk", "created": 1767225600, "model": t.model(),
			"system_fingerprint": "fp_scripted", "choices": []any{}, "usage": t.chatUsage()}),
		[]byte("data: [DONE]\n\n"))
	return Reply{Events: ev}
}

// Responses writes t as a Responses answer: a reasoning item (its summary
// the thinking, its encrypted_content the signature), a message, then
// the function calls.
func (t Turn) Responses(stream bool) Reply {
	var items []wire
	if t.Thinking != "" || t.Signature != "" {
		items = append(items, wire{"type": "reasoning", "id": "rs_scripted", "summary": []wire{{"type": "summary_text", "text": t.Thinking}},
			"encrypted_content": t.Signature})
	}
	if len(t.Text) > 0 {
		items = append(items, wire{"type": "message", "id": "msg_scripted", "status": "completed", "role": "assistant",
			"content": []wire{{"type": "output_text", "text": strings.Join(t.Text, ""), "annotations": []any{}, "logprobs": []any{}}}})
	}
	for i, c := range t.Calls {
		items = append(items, wire{"type": "function_call", "id": fmt.Sprintf("fc_scripted%d", i), "status": "completed",
			"call_id": c.id(i), "name": c.Name, "arguments": c.Args})
	}
	u := t.Usage
	usage := wire{"input_tokens": u.Input, "input_tokens_details": wire{"cached_tokens": u.Cached},
		"output_tokens": u.Output + u.Reasoning, "output_tokens_details": wire{"reasoning_tokens": u.Reasoning},
		"total_tokens": u.Input + u.Output + u.Reasoning}
	response := func(status string, output []wire, usage any) wire {
		if output == nil {
			output = []wire{}
		}
		return wire{"id": "resp_scripted", "object": "response", "created_at": 1767225600, "status": status, "model": t.model(),
			"output": output, "usage": usage, "error": nil, "incomplete_details": nil, "parallel_tool_calls": true, "store": false}
	}
	if !stream {
		return Reply{Body: []byte(turnJSON(response("completed", items, usage)))}
	}
	seq := 0
	var ev [][]byte
	emit := func(v wire) {
		v["sequence_number"] = seq
		seq++
		ev = append(ev, turnEvent(v["type"].(string), v))
	}
	emit(wire{"type": "response.created", "response": response("in_progress", nil, nil)})
	emit(wire{"type": "response.in_progress", "response": response("in_progress", nil, nil)})
	for i, it := range items {
		switch it["type"] {
		case "reasoning":
			emit(wire{"type": "response.output_item.added", "output_index": i, "item": wire{"type": "reasoning", "id": it["id"], "summary": []any{}}})
			emit(wire{"type": "response.reasoning_summary_part.added", "output_index": i, "item_id": it["id"], "summary_index": 0, "part": wire{"type": "summary_text", "text": ""}})
			emit(wire{"type": "response.reasoning_summary_text.delta", "output_index": i, "item_id": it["id"], "summary_index": 0, "delta": t.Thinking})
			emit(wire{"type": "response.reasoning_summary_text.done", "output_index": i, "item_id": it["id"], "summary_index": 0, "text": t.Thinking})
			emit(wire{"type": "response.reasoning_summary_part.done", "output_index": i, "item_id": it["id"], "summary_index": 0, "part": wire{"type": "summary_text", "text": t.Thinking}})
		case "message":
			emit(wire{"type": "response.output_item.added", "output_index": i, "item": wire{"type": "message", "id": it["id"], "status": "in_progress", "role": "assistant", "content": []any{}}})
			emit(wire{"type": "response.content_part.added", "output_index": i, "item_id": it["id"], "content_index": 0, "part": wire{"type": "output_text", "text": "", "annotations": []any{}}})
			for _, s := range t.Text {
				emit(wire{"type": "response.output_text.delta", "output_index": i, "item_id": it["id"], "content_index": 0, "delta": s, "logprobs": []any{}})
			}
			all := strings.Join(t.Text, "")
			emit(wire{"type": "response.output_text.done", "output_index": i, "item_id": it["id"], "content_index": 0, "text": all, "logprobs": []any{}})
			emit(wire{"type": "response.content_part.done", "output_index": i, "item_id": it["id"], "content_index": 0, "part": wire{"type": "output_text", "text": all, "annotations": []any{}}})
		case "function_call":
			emit(wire{"type": "response.output_item.added", "output_index": i, "item": wire{"type": "function_call", "id": it["id"], "status": "in_progress",
				"call_id": it["call_id"], "name": it["name"], "arguments": ""}})
			emit(wire{"type": "response.function_call_arguments.delta", "output_index": i, "item_id": it["id"], "delta": it["arguments"]})
			emit(wire{"type": "response.function_call_arguments.done", "output_index": i, "item_id": it["id"], "arguments": it["arguments"]})
		}
		emit(wire{"type": "response.output_item.done", "output_index": i, "item": it})
	}
	emit(wire{"type": "response.completed", "response": response("completed", items, usage)})
	return Reply{Events: ev}
}

// geminiChunks are t's Gemini answer in stream chunks: the thought, the
// text deltas, then the calls with the finish reason and the usage.
func (t Turn) geminiChunks() []string {
	u := t.Usage
	usage := wire{"promptTokenCount": u.Input, "candidatesTokenCount": u.Output, "totalTokenCount": u.Input + u.Output + u.Reasoning,
		"promptTokensDetails": []wire{{"modality": "TEXT", "tokenCount": u.Input}}}
	if u.Cached > 0 {
		usage["cachedContentTokenCount"] = u.Cached
	}
	if u.Reasoning > 0 {
		usage["thoughtsTokenCount"] = u.Reasoning
	}
	chunk := func(parts []wire, last bool) string {
		cand := wire{"content": wire{"parts": parts, "role": "model"}, "index": 0}
		c := wire{"candidates": []wire{cand}, "usageMetadata": wire{"promptTokenCount": u.Input, "totalTokenCount": u.Input}, "modelVersion": t.model(), "responseId": "scripted-1"}
		if last {
			cand["finishReason"] = "STOP"
			c["usageMetadata"] = usage
		}
		return turnJSON(c)
	}
	signed := false
	var chunks []string
	if t.Thinking != "" {
		chunks = append(chunks, chunk([]wire{{"text": t.Thinking, "thought": true}}, false))
	}
	for i, s := range t.Text {
		p := wire{"text": s}
		if !signed && len(t.Calls) == 0 && t.Signature != "" {
			p["thoughtSignature"], signed = t.Signature, true
		}
		chunks = append(chunks, chunk([]wire{p}, i == len(t.Text)-1 && len(t.Calls) == 0))
	}
	if len(t.Calls) > 0 {
		var parts []wire
		for _, c := range t.Calls {
			fc := wire{"name": c.Name, "args": json.RawMessage(c.Args)}
			if c.ID != "" {
				fc["id"] = c.ID
			}
			p := wire{"functionCall": fc}
			if !signed && t.Signature != "" {
				p["thoughtSignature"], signed = t.Signature, true
			}
			parts = append(parts, p)
		}
		chunks = append(chunks, chunk(parts, true))
	}
	if len(chunks) == 0 || (len(t.Calls) == 0 && len(t.Text) == 0) {
		chunks = append(chunks, chunk([]wire{{"text": ""}}, true))
	}
	return chunks
}

// Gemini writes t as a Gemini generateContent answer, or as its
// streamGenerateContent?alt=sse events.
func (t Turn) Gemini(stream bool) Reply {
	chunks := t.geminiChunks()
	if stream {
		ev := make([][]byte, len(chunks))
		for i, c := range chunks {
			ev[i] = []byte("data: " + c + "\r\n\r\n")
		}
		return Reply{Events: ev}
	}
	var parts []json.RawMessage
	for _, c := range chunks {
		for _, p := range gjson.Get(c, "candidates.0.content.parts").Array() {
			parts = append(parts, json.RawMessage(p.Raw))
		}
	}
	last := chunks[len(chunks)-1]
	return Reply{Body: []byte(turnJSON(wire{"candidates": []wire{{"content": wire{"parts": parts, "role": "model"}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": json.RawMessage(gjson.Get(last, "usageMetadata").Raw), "modelVersion": t.model(), "responseId": "scripted-1"}))}
}

// ErrorReply is the provider's own error answer for an HTTP status, in
// the format r was sent in: a Messages error, an OpenAI error object, or
// Google's envelope.
func ErrorReply(r Received, status int, message string) Reply {
	switch Dialect(r) {
	case "messages":
		typ := map[int]string{400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error", 429: "rate_limit_error", 529: "overloaded_error"}[status]
		if typ == "" {
			typ = "api_error"
		}
		return Reply{Status: status, Body: []byte(turnJSON(wire{"type": "error", "error": wire{"type": typ, "message": message}, "request_id": "req_scripted"}))}
	case "chat", "responses":
		typ := map[int]string{400: "invalid_request_error", 401: "invalid_request_error", 404: "invalid_request_error", 429: "rate_limit_exceeded"}[status]
		if typ == "" {
			typ = "server_error"
		}
		return Reply{Status: status, Body: []byte(turnJSON(wire{"error": wire{"message": message, "type": typ, "param": nil, "code": typ}}))}
	}
	st := map[int]string{400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE"}[status]
	if st == "" {
		st = "INTERNAL"
	}
	return Reply{Status: status, Body: []byte(turnJSON(wire{"error": wire{"code": status, "message": message, "status": st}}))}
}
