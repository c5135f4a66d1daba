// Package protocol_test adds a third wire protocol to tollgate from a test
// package alone, to show that a protocol and a provider are data plus
// registrations: no file of the gateway changes for it.
//
// The "line protocol" is a toy. A client POSTs /v1/line with
//
//	{"model": "m", "prompt": ["one line", "another"], "stream": false, "max_lines": 5}
//
// and gets {"text": "…", "tokens": {"in": N, "out": M}}, or, streamed,
// events "line" ({"text": "…"}) and a final "end" ({"tokens": {…}}).
// Errors are {"problem": {"kind": "…", "message": "…"}}; the request id is
// in Line-Request-Id; rate limits in Line-Limit-*. An upstream of type
// "line" speaks the same protocol at /line with the key in Line-Key.
package protocol_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/meter"
	"github.com/tollgate/tollgate/internal/provider"
	"github.com/tollgate/tollgate/internal/sse"
	"github.com/tollgate/tollgate/internal/tokens"
	"github.com/tollgate/tollgate/internal/translate"
)

// line is the line protocol's entry in the dialect table.
var line = &dialect.Dialect{
	Name:      "line",
	Endpoints: []dialect.Endpoint{{Path: "/v1/line", Op: dialect.Generate}},
	Claims:    func(r *http.Request) bool { return r.Header.Get("Line-Version") != "" },
	Fields:    dialect.Fields{Conversation: "prompt", MaxOutput: []string{"max_lines"}},
	// No header of the client's reaches the upstream but the common ones.
	RequestIDHeader: "Line-Request-Id",
	Error: func(e dialect.Error) []byte {
		b, _ := json.Marshal(map[string]any{"problem": map[string]any{"kind": e.Kind.String(), "message": e.Message, "field": e.Param}})
		return b
	},
	RateLimit: dialect.RateLimitHeaders{
		Requests: [3]string{"Line-Limit-Requests", "Line-Remaining-Requests", "Line-Reset-Requests"},
		Tokens:   [3]string{"Line-Limit-Tokens", "Line-Remaining-Tokens", "Line-Reset-Tokens"},
		Reset:    func(at, now time.Time) string { return fmt.Sprint(int(at.Sub(now).Seconds() + 1)) },
		Prefix:   "Line-Limit-",
	},
	ModelList: func(ids []string, _ time.Time) any { return map[string]any{"lines_models": ids} },
	Model:     func(id string, _ time.Time) any { return map[string]any{"line_model": id} },
	Usage:     func(u *meter.Usage, body []byte) { *u = lineUsage(gjson.GetBytes(body, "tokens")) },
	NewTap:    func(bool) dialect.Tap { return &lineTap{} },
	Generated: []string{"text"},
	CountPrompt: func(c *tokens.Counter, body []byte) {
		for _, l := range gjson.GetBytes(body, "prompt").Array() {
			c.Add(l.String())
		}
	},
}

func lineUsage(t gjson.Result) meter.Usage {
	return meter.Usage{Input: t.Get("in").Int(), Output: t.Get("out").Int()}
}

// lineTap reads the usage of a line stream and notices its end.
type lineTap struct {
	f    sse.Fields
	u    meter.Usage
	done bool
}

func (t *lineTap) Feed(ev []byte) []byte {
	t.f.Parse(ev)
	if string(t.f.Name) == "end" {
		t.u, t.done = lineUsage(gjson.GetBytes(t.f.Data, "tokens")), true
	}
	return ev
}

func (t *lineTap) StartError(ev []byte) (int, []byte, bool) {
	t.f.Parse(ev)
	if string(t.f.Name) != "problem" {
		return 0, nil, false
	}
	return 502, append([]byte(nil), t.f.Data...), true
}

func (t *lineTap) Close(eof bool, msg string) ([]byte, bool) {
	if t.done {
		return nil, true
	}
	b, _ := json.Marshal(map[string]any{"problem": map[string]any{"kind": "api_error", "message": msg}})
	return sse.AppendEvent(nil, "problem", b), false
}

func (t *lineTap) Usage() meter.Usage { return t.u }

// lineType is the provider type of line upstreams.
var lineType = &provider.Type{
	Name:   "line",
	Config: config.ProviderType{BaseURL: true},
	New: func(p config.Provider) (provider.Provider, error) {
		return provider.NewHTTP(p, provider.HTTPSpec{
			Dialect: line,
			Paths:   map[dialect.Op]string{dialect.Generate: "/line"},
			Auth:    func(key string) (string, string) { return "Line-Key", key },
		})
	},
}

// lineToChat translates line clients for Chat Completions upstreams.
var lineToChat = &dialect.Translator{
	Request: func(_ context.Context, body []byte, t translate.Target) ([]byte, *translate.Plan, error) {
		var in struct {
			Model    string   `json:"model"`
			Prompt   []string `json:"prompt"`
			Stream   bool     `json:"stream"`
			MaxLines int      `json:"max_lines"`
		}
		if err := json.Unmarshal(body, &in); err != nil {
			return nil, nil, &translate.RequestError{Message: "invalid request body: " + err.Error()}
		}
		if in.MaxLines > 100 {
			return nil, nil, &translate.RequestError{Param: "max_lines", Message: "max_lines: at most 100 on this upstream"}
		}
		out := map[string]any{"model": t.Model, "stream": in.Stream,
			"messages": []any{map[string]any{"role": "user", "content": strings.Join(in.Prompt, "\n")}}}
		if in.Stream {
			out["stream_options"] = map[string]any{"include_usage": true}
		}
		b, err := json.Marshal(out)
		return b, &translate.Plan{AnswerModel: in.Model, Stream: in.Stream}, err
	},
	Response: func(body []byte, p *translate.Plan, _ int64) (out, stream []byte, u meter.Usage, err error) {
		c := gjson.ParseBytes(body)
		if !c.Get("choices").Exists() {
			return nil, nil, u, &translate.UpstreamError{Message: "upstream answer is not a chat completion"}
		}
		openai.SetUsage(&u, c.Get("usage").Raw)
		text := c.Get("choices.0.message.content").String()
		if p.Stream {
			return nil, lineEvents(text, u), u, nil
		}
		out, err = json.Marshal(map[string]any{"text": text, "tokens": map[string]int64{"in": u.TotalInput(), "out": u.Output}})
		return out, nil, u, err
	},
	Stream: func(p *translate.Plan, _ int64) dialect.Tap { return &chatToLine{} },
	Error: func(status int, body []byte) (int, []byte, bool) {
		b, _ := json.Marshal(map[string]any{"problem": map[string]any{"kind": "upstream", "message": gjson.GetBytes(body, "error.message").String()}})
		if status == 0 {
			status = 502
		}
		return status, b, false
	},
}

func lineEvents(text string, u meter.Usage) []byte {
	d, _ := json.Marshal(map[string]any{"text": text})
	b := sse.AppendEvent(nil, "line", d)
	d, _ = json.Marshal(map[string]any{"tokens": map[string]int64{"in": u.TotalInput(), "out": u.Output}})
	return sse.AppendEvent(b, "end", d)
}

// chatToLine turns a Chat Completions stream into line events.
type chatToLine struct {
	f    sse.Fields
	u    meter.Usage
	out  []byte
	done bool
}

func (s *chatToLine) Feed(ev []byte) []byte {
	s.out = s.out[:0]
	s.f.Parse(ev)
	switch d := s.f.Data; {
	case d == nil:
	case string(d) == "[DONE]":
		d, _ := json.Marshal(map[string]any{"tokens": map[string]int64{"in": s.u.TotalInput(), "out": s.u.Output}})
		s.out, s.done = sse.AppendEvent(s.out, "end", d), true
	default:
		c := gjson.ParseBytes(d)
		if u := c.Get("usage"); u.IsObject() {
			openai.SetUsage(&s.u, u.Raw)
		}
		if t := c.Get("choices.0.delta.content"); t.String() != "" {
			b, _ := json.Marshal(map[string]any{"text": t.String()})
			s.out = sse.AppendEvent(s.out, "line", b)
		}
	}
	return s.out
}

func (s *chatToLine) StartError(ev []byte) (int, []byte, bool) {
	s.f.Parse(ev)
	if e := gjson.GetBytes(s.f.Data, "error"); e.IsObject() {
		b, _ := json.Marshal(map[string]any{"problem": map[string]any{"kind": "upstream", "message": e.Get("message").String()}})
		return 502, b, true
	}
	return 0, nil, false
}

func (s *chatToLine) Close(eof bool, msg string) ([]byte, bool) {
	if s.done {
		return nil, true
	}
	b, _ := json.Marshal(map[string]any{"problem": map[string]any{"kind": "api_error", "message": msg}})
	return sse.AppendEvent(nil, "problem", b), false
}

func (s *chatToLine) Usage() meter.Usage { return s.u }

// chatToLineUpstream translates Chat Completions clients for line
// upstreams. It asks the upstream for whole answers; a client that asked
// for a stream gets the answer as chunks.
var chatToLineUpstream = &dialect.Translator{
	Request: func(_ context.Context, body []byte, t translate.Target) ([]byte, *translate.Plan, error) {
		req := gjson.ParseBytes(body)
		var prompt []string
		for _, m := range req.Get("messages").Array() {
			prompt = append(prompt, m.Get("content").String())
		}
		b, err := json.Marshal(map[string]any{"model": t.Model, "prompt": prompt})
		return b, &translate.Plan{AnswerModel: req.Get("model").String(), Stream: req.Get("stream").Bool()}, err
	},
	Response: func(body []byte, p *translate.Plan, created int64) (out, stream []byte, u meter.Usage, err error) {
		a := gjson.ParseBytes(body)
		if !a.Get("text").Exists() {
			return nil, nil, u, &translate.UpstreamError{Message: "upstream answer is not a line answer"}
		}
		u = lineUsage(a.Get("tokens"))
		text := a.Get("text").String()
		usage := map[string]any{"prompt_tokens": u.Input, "completion_tokens": u.Output, "total_tokens": u.Input + u.Output}
		if p.Stream {
			for _, c := range []map[string]any{
				{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"role": "assistant", "content": text}, "finish_reason": nil}}},
				{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": "stop"}}},
				{"choices": []any{}, "usage": usage},
			} {
				c["id"], c["object"], c["created"], c["model"] = "chatcmpl-line", "chat.completion.chunk", created, p.AnswerModel
				b, _ := json.Marshal(c)
				stream = sse.AppendEvent(stream, "", b)
			}
			return nil, append(stream, "data: [DONE]\n\n"...), u, nil
		}
		c := map[string]any{"id": "chatcmpl-line", "object": "chat.completion", "created": created, "model": p.AnswerModel,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": text}}},
			"usage":   usage}
		out, err = json.Marshal(c)
		return out, nil, u, err
	},
	// The request above never asks the line upstream for a stream.
	Stream: func(p *translate.Plan, _ int64) dialect.Tap { return &lineTap{} },
	Error: func(status int, body []byte) (int, []byte, bool) {
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"type": "server_error", "message": gjson.GetBytes(body, "problem.message").String()}})
		return status, b, false
	},
}

func init() {
	dialect.Register(line)
	dialect.RegisterPair(line, dialect.Chat, lineToChat)
	dialect.RegisterPair(dialect.Chat, line, chatToLineUpstream)
	provider.Register(lineType)
}
