package upstreamtest

import (
	"encoding/json"
	"net/http"
	"strings"
)

// SpeechAudio is the audio the fake speech endpoint answers: bytes that
// are not JSON, as an MP3 is not.
var SpeechAudio = []byte("ID3\x04\x00\x00\x00\x00\x00\x00\xff\xfb\x90\x64 not json {\"usage\":1}")

// OpenAIEndpoints answers OpenAI's endpoints beside chat and embeddings
// as OpenAI does (and /rerank as Cohere does, or as Jina does for a
// model named jina-*), each with the usage its answers carry. Paths are
// matched on their end, so any base path works.
func OpenAIEndpoints(r Received) Reply {
	var req map[string]any
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(r.Body, &req); err != nil {
			return openAIBadRequest("We could not parse the JSON body of your request.")
		}
	}
	str := func(k string) string { s, _ := req[k].(string); return s }
	reply := func(v any) Reply {
		b, _ := json.Marshal(v)
		return Reply{Body: b}
	}
	switch {
	case strings.HasSuffix(r.Path, "/completions") && !strings.HasSuffix(r.Path, "/chat/completions") && req["stream"] == true:
		chunk := func(text string, finish any) []byte {
			b, _ := json.Marshal(map[string]any{"id": "cmpl-2", "object": "text_completion", "created": 1764000000, "model": str("model"),
				"choices": []any{map[string]any{"text": text, "index": 0, "logprobs": nil, "finish_reason": finish}}})
			return append(append([]byte("data: "), b...), "\n\n"...)
		}
		events := [][]byte{chunk(" hello", nil), chunk(" world", nil), chunk("", "length")}
		if opts, _ := req["stream_options"].(map[string]any); opts["include_usage"] == true {
			b, _ := json.Marshal(map[string]any{"id": "cmpl-2", "object": "text_completion", "created": 1764000000, "model": str("model"),
				"choices": []any{}, "usage": map[string]any{"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}})
			events = append(events, append(append([]byte("data: "), b...), "\n\n"...))
		}
		return Reply{Events: append(events, []byte("data: [DONE]\n\n"))}
	case strings.HasSuffix(r.Path, "/completions") && !strings.HasSuffix(r.Path, "/chat/completions"):
		return reply(map[string]any{"id": "cmpl-1", "object": "text_completion", "created": 1764000000, "model": str("model"),
			"choices": []any{map[string]any{"text": " world", "index": 0, "logprobs": nil, "finish_reason": "length"}},
			"usage":   map[string]any{"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12}})
	case strings.HasSuffix(r.Path, "/moderations"):
		return reply(map[string]any{"id": "modr-1", "model": str("model"),
			"results": []any{map[string]any{"flagged": false, "categories": map[string]bool{"violence": false},
				"category_scores": map[string]float64{"violence": 0.0001}}}})
	case strings.HasSuffix(r.Path, "/images/generations") && req["stream"] == true:
		if _, ok := req["stream_options"]; ok {
			return openAIBadRequest("Unknown parameter: 'stream_options'.")
		}
		return Reply{Events: [][]byte{
			[]byte("event: image_generation.partial_image\ndata: {\"type\":\"image_generation.partial_image\",\"b64_json\":\"cGFydA==\",\"partial_image_index\":0}\n\n"),
			[]byte("event: image_generation.completed\ndata: {\"type\":\"image_generation.completed\",\"b64_json\":\"aW1hZ2U=\",\"usage\":{\"input_tokens\":50,\"output_tokens\":4160,\"total_tokens\":4210}}\n\n"),
		}}
	case strings.HasSuffix(r.Path, "/images/generations"):
		n := 1
		if v, ok := req["n"].(float64); ok {
			n = int(v)
		}
		data := make([]any, n)
		for i := range data {
			data[i] = map[string]any{"b64_json": "aW1hZ2U=", "revised_prompt": "a picture"}
		}
		out := map[string]any{"created": 1764000000, "data": data}
		if strings.HasPrefix(str("model"), "gpt-image") {
			out["usage"] = map[string]any{"input_tokens": 50, "output_tokens": 4160, "total_tokens": 4210,
				"input_tokens_details": map[string]any{"text_tokens": 50, "image_tokens": 0}}
		}
		return reply(out)
	case strings.HasSuffix(r.Path, "/audio/speech"):
		if str("input") == "" || str("voice") == "" {
			return openAIBadRequest("input and voice are required")
		}
		return Reply{Body: SpeechAudio, Header: http.Header{"Content-Type": {"audio/mpeg"}}}
	case strings.HasSuffix(r.Path, "/rerank"):
		docs, _ := req["documents"].([]any)
		results := make([]any, len(docs))
		for i := range docs {
			results[i] = map[string]any{"index": len(docs) - 1 - i, "relevance_score": 1 / float64(i+1)}
		}
		if strings.HasPrefix(str("model"), "jina") {
			return reply(map[string]any{"model": str("model"), "results": results, "usage": map[string]any{"total_tokens": 42}})
		}
		return reply(map[string]any{"id": "rr-1", "results": results, "meta": map[string]any{"billed_units": map[string]any{"search_units": 1}}})
	}
	return Reply{Status: 404, Body: []byte(`{"error":{"message":"Invalid URL (POST ` + r.Path + `)","type":"invalid_request_error","param":null,"code":null}}`)}
}
