package dialect

import (
	"bytes"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/tollgate/tollgate/internal/affinity"
	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/meter"
	"github.com/tollgate/tollgate/internal/sse"
)

// OpenAI is the Chat Completions API: POST /v1/chat/completions, data-only
// SSE ending in [DONE].
var Chat = &Dialect{
	Name: "openai",
	Endpoints: append([]Endpoint{{Path: "/v1/chat/completions", Op: Generate}, {Path: "/v1/embeddings", Op: Embed, Fields: &embedFields}},
		openAIEndpoints...),
	Fields: Fields{Conversation: "messages", MaxOutput: []string{"max_completion_tokens", "max_tokens"}, Choices: "n",
		Keep: []string{"stream_options", "prompt_cache_key", "user", "tools"}},
	Prepare: prepareOpenAI,
	// prompt_cache_key, user, else the conversation's start.
	Affinity: func(s *Scanned) (affinity.Key, bool) {
		return openAIAffinity(s, s.Kept(1), s.Kept(2), s.Kept(3), nil)
	},
	CacheHints:      promptCacheKey,
	RequestIDHeader: "X-Request-Id",
	Error:           openAIError,
	RateLimit: RateLimitHeaders{
		Requests: [3]string{"X-Ratelimit-Limit-Requests", "X-Ratelimit-Remaining-Requests", "X-Ratelimit-Reset-Requests"},
		Tokens:   [3]string{"X-Ratelimit-Limit-Tokens", "X-Ratelimit-Remaining-Tokens", "X-Ratelimit-Reset-Tokens"},
		Reset:    func(at, now time.Time) string { return max(at.Sub(now), 0).Round(time.Millisecond).String() },
		Prefix:   "X-Ratelimit-",
	},
	ModelList: func(ids []string, created time.Time) any {
		data := make([]any, 0, len(ids))
		for _, id := range ids {
			data = append(data, openAIModel(id, created))
		}
		return map[string]any{"object": "list", "data": data}
	},
	Model: func(id string, created time.Time) any { return openAIModel(id, created) },
	Usage: func(u *meter.Usage, body []byte) {
		if v := gjson.GetBytes(body, "usage"); v.IsObject() {
			openai.SetUsage(u, v.Raw)
		}
	},
	NewTap: func(hideUsage bool) Tap { return &openAITap{strip: hideUsage} },
	Generated: []string{
		"choices.#.delta.content", "choices.#.delta.reasoning_content", "choices.#.delta.reasoning",
		"choices.#.delta.tool_calls.#.function.arguments",
	},
	CountPrompt: countChatPrompt,
	Unpriced:    chatUnpriced,
	Session:     chatSession,
}

// openAIEndpoints are the rest of OpenAI's API that the gateway passes
// through, metered, to upstreams that serve them.
var openAIEndpoints = []Endpoint{
	// stream_options first: prepareOpenAI reads Kept(0).
	{Path: "/v1/completions", Op: Complete, Fields: &Fields{Conversation: "prompt", ConversationString: true,
		MaxOutput: []string{"max_tokens"}, Choices: "n", Keep: []string{"stream_options"}}},
	{Path: "/v1/moderations", Op: Moderate, Fields: &Fields{}},
	{Path: "/v1/images/generations", Op: GenerateImage, Fields: &Fields{Choices: "n"}, Usage: openai.ImagesUsage},
	{Path: "/v1/images/edits", Op: EditImage, Multipart: true, Usage: openai.ImagesUsage},
	{Path: "/v1/audio/speech", Op: Speak, Fields: &Fields{}, Unmetered: true, RequestUsage: openai.SpeechCharacters},
	{Path: "/v1/audio/transcriptions", Op: Transcribe, Multipart: true, Usage: openai.TranscriptionUsage},
	{Path: "/v1/audio/translations", Op: TranslateAudio, Multipart: true, Usage: openai.TranscriptionUsage},
	{Path: "/v1/rerank", Op: Rerank, Fields: &Fields{}, Usage: openai.RerankUsage},
}

// OpenAIEndpoint is the endpoint of OpenAI's API at path ("/v1/rerank")
// that upstreams serve beyond chat, nil for none.
func OpenAIEndpoint(path string) *Endpoint {
	for i := range openAIEndpoints {
		if openAIEndpoints[i].Path == path {
			return &openAIEndpoints[i]
		}
	}
	return nil
}

// embedFields are what the gateway reads of an embeddings request without
// decoding it: only the model (its inputs are checked by package
// embeddings).
var embedFields = Fields{}

func openAIModel(id string, created time.Time) map[string]any {
	return map[string]any{"id": id, "object": "model", "created": created.Unix(), "owned_by": "tollgate"}
}

// openAIErrorTypes maps a kind to Chat Completions' error type and default code.
var openAIErrorTypes = [...]struct{ typ, code string }{
	InvalidRequest:   {openai.ErrInvalidRequest, ""},
	Authentication:   {openai.ErrInvalidRequest, "invalid_api_key"},
	Permission:       {openai.ErrPermission, ""},
	NotFound:         {openai.ErrInvalidRequest, "not_found"},
	MethodNotAllowed: {openai.ErrInvalidRequest, "method_not_allowed"},
	TooLarge:         {openai.ErrInvalidRequest, "request_too_large"},
	Upstream:         {openai.ErrServer, "upstream_error"},
	Timeout:          {openai.ErrServer, "timeout"},
	NotImplemented:   {openai.ErrInvalidRequest, "not_implemented"},
	Internal:         {openai.ErrServer, ""},
	Unavailable:      {openai.ErrUnavailable, "service_unavailable"},
	RateLimit:        {openai.ErrRateLimit, "rate_limit_exceeded"},
	Budget:           {openai.ErrInsufficientQuota, "insufficient_quota"},
}

func openAIError(e Error) []byte {
	t := openAIErrorTypes[e.Kind]
	code := e.Code
	if code == "" {
		code = t.code
	}
	return openai.MarshalError(t.typ, e.Message, e.Param, code)
}

// prepareOpenAI asks a streaming upstream for usage when the client did
// not: the gateway meters every request. The tap hides it from the client
// again (openAITap.strip).
func prepareOpenAI(_ []byte, s Scanned, spliced func() []byte) (Prepared, error) {
	opts := s.Kept(0) // stream_options
	if !s.Stream || includeUsage(opts) {
		return Prepared{}, nil
	}
	body := spliced()
	var err error
	if len(opts) > 0 && opts[0] == '{' {
		body, err = sjson.SetBytes(body, "stream_options.include_usage", true)
	} else {
		body, err = sjson.SetRawBytes(body, "stream_options", []byte(`{"include_usage":true}`))
	}
	if err != nil {
		return Prepared{}, err
	}
	return Prepared{Body: body, HideUsage: true}, nil
}

// includeUsage reports whether a stream_options object asks for usage. The
// value was validated by the scan, so gjson can read it directly.
func includeUsage(opts []byte) bool {
	return len(opts) > 0 && opts[0] == '{' && gjson.GetBytes(opts, "include_usage").Type == gjson.True
}

// openAITap taps a Chat Completions stream. Usage comes in a chunk of its
// own (choices empty) when stream_options.include_usage is set; some
// compatible upstreams put it on the last content chunk instead, or repeat
// running totals on every chunk, so the last usage object wins.
//
// When the client did not ask for usage, the gateway asked for it anyway
// (it meters every request), and strip hides it again: the usage-only chunk
// is dropped, and usage on a content chunk is replaced by null. The
// "usage":null member that upstreams add to every other chunk is left in
// place; clients read it as "no usage".
type openAITap struct {
	f       sse.Fields
	u       meter.Usage
	strip   bool
	done    bool
	scratch []byte
}

func (t *openAITap) Feed(ev []byte) []byte {
	t.f.Parse(ev)
	d := t.f.Data
	if d == nil {
		return ev
	}
	if bytes.Equal(d, doneData) {
		t.done = true
		return ev
	}
	if mayHaveUsage(d) {
		if u := gjson.Get(unsafeString(d), "usage"); u.IsObject() {
			openai.SetUsage(&t.u, u.Raw)
			if t.strip {
				if c := gjson.Get(unsafeString(d), "choices"); !c.Exists() || isEmptyArray(c.Raw) {
					return nil
				}
				nulled, err := sjson.SetRawBytes(bytes.Clone(d), "usage", []byte("null"))
				if err != nil {
					return ev
				}
				t.scratch = sse.AppendEvent(t.scratch[:0], "", nulled)
				return t.scratch
			}
		}
	}
	if bytes.Contains(d, errorKey) && gjson.Get(unsafeString(d), "error").IsObject() {
		t.done = true // an upstream error chunk ends the stream; no [DONE] follows
		return scrubbedEvent(ev, string(t.f.Name), d)
	}
	return ev
}

func (t *openAITap) StartError(ev []byte) (int, []byte, bool) {
	d, e, ok := errorEvent(&t.f, ev)
	if !ok {
		return 0, nil, false
	}
	return openai.StatusForError(e.Get("type").String(), e.Get("code").String()), bytes.Clone(d), true
}

func (t *openAITap) Close(eof bool, msg string) ([]byte, bool) {
	if t.done {
		return nil, true
	}
	return sse.AppendEvent(nil, "", openai.MarshalError(openai.ErrServer, msg, "", "upstream_stream_interrupted")), false
}

func (t *openAITap) Usage() meter.Usage { return t.u }

// errorEvent parses ev into f and returns its data and the error object
// the data holds, if it holds one (ok).
func errorEvent(f *sse.Fields, ev []byte) (d []byte, e gjson.Result, ok bool) {
	f.Parse(ev)
	d = f.Data
	if d == nil || !bytes.Contains(d, errorKey) {
		return nil, gjson.Result{}, false
	}
	e = gjson.Get(unsafeString(d), "error")
	return d, e, e.IsObject()
}

var (
	doneData = []byte("[DONE]")
	errorKey = []byte(`"error"`)
	usageKey = []byte(`"usage"`)
)

// mayHaveUsage is a cheap filter before gjson: it is false only when every
// "usage" member in d is null. With include_usage on, upstreams put
// "usage":null on every chunk, so this spares a parse per chunk.
func mayHaveUsage(d []byte) bool {
	for {
		i := bytes.Index(d, usageKey)
		if i < 0 {
			return false
		}
		d = bytes.TrimLeft(d[i+len(usageKey):], " \t\r\n")
		if len(d) == 0 || d[0] != ':' {
			continue
		}
		d = bytes.TrimLeft(d[1:], " \t\r\n")
		if !bytes.HasPrefix(d, []byte("null")) {
			return true
		}
	}
}

func isEmptyArray(raw string) bool {
	if len(raw) < 2 || raw[0] != '[' {
		return false
	}
	for _, c := range raw[1:] {
		switch c {
		case ' ', '\t', '\r', '\n':
		case ']':
			return true
		default:
			return false
		}
	}
	return false
}
