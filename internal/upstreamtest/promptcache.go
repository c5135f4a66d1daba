package upstreamtest

import (
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/jsonx"
)

// CachingAnthropic is a fake Anthropic Messages API that implements prompt
// caching the way Anthropic documents it
// (https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching),
// so that a test can see what a gateway's requests would be billed:
//
//   - The prompt is a sequence of blocks: each tool definition, each block
//     of system, then each content block of each message, in order (a
//     string is one text block). A block counts (len(canonical JSON)+3)/4
//     tokens, its canonical JSON being its members without cache_control,
//     re-encoded with sorted keys: the same block written by different
//     encoders counts and hashes the same.
//   - Breakpoints are blocks carrying cache_control (a message's own
//     cache_control marks its last block; a top-level cache_control, the
//     automatic caching, marks the last block of the prompt). At most 4;
//     a "1h" breakpoint must not come after a "5m" one.
//   - Cache entries are keyed by credential, model and the hash of the
//     prefix up to a breakpoint: a chained SHA-256, prefix i's hash being
//     H(prefix i−1's hash ‖ block i's place (tools, system or the
//     message's role) ‖ block i's canonical JSON). For each breakpoint, a hit is looked for
//     there and at each block boundary up to 20 blocks before it; the
//     longest hit is read (and its expiry refreshed). Every breakpoint past
//     it whose prefix has at least MinTokens tokens is written.
//
// Usage follows: cache_read_input_tokens is the prefix read,
// cache_creation_input_tokens the tokens from there to the last written
// breakpoint (split by TTL in cache_creation, each span taking the TTL of
// the breakpoint that ends it), input_tokens the rest.
type CachingAnthropic struct {
	srv *httptest.Server
	o   CacheOptions

	mu    sync.Mutex
	cache map[cacheKey]*cacheEntry
	calls []CacheCall
	seq   int
}

// CacheOptions configures a CachingAnthropic.
type CacheOptions struct {
	// Keys, when not empty, are the only x-api-key values accepted (or
	// Authorization: Bearer values, when there is no x-api-key); others
	// get 401.
	Keys []string
	// MinTokens is the least prefix a breakpoint must end to be written
	// (the model's minimum cacheable length); 0 means 1024, 1 caches any
	// prefix.
	MinTokens int
	// Now is the clock entries expire on; nil means time.Now.
	Now func() time.Time
	// Down, when it returns true, makes every request fail with 529
	// overloaded_error.
	Down func() bool
	// Answer gives the assistant's content; nil answers one text block
	// "ok". It may be called concurrently.
	Answer func(req *anthropic.MessagesRequest) []anthropic.Block
}

// CacheCall is a request the fake received and what it was billed.
type CacheCall struct {
	Received
	Credential  string // x-api-key, else the Authorization header
	Model       string
	Stream      bool
	Status      int
	Error       string // the error message, when Status is not 200
	Breakpoints int    // distinct breakpoints of the request
	// PromptTokens is the whole prompt's estimate: input + cache write +
	// cache read.
	PromptTokens int
	// Usage is what the answer reported (CacheCreation is always set on a
	// 200).
	Usage anthropic.Usage
}

// CacheLookback is how many blocks before a breakpoint a cache hit is
// still found, as documented.
const CacheLookback = 20

// MaxCacheBreakpoints is the most cache_control blocks a request may have.
const MaxCacheBreakpoints = 4

// NewCachingAnthropic starts the fake.
func NewCachingAnthropic(o CacheOptions) *CachingAnthropic {
	if o.MinTokens == 0 {
		o.MinTokens = 1024
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	c := &CachingAnthropic{o: o, cache: map[cacheKey]*cacheEntry{}}
	c.srv = httptest.NewServer(http.HandlerFunc(c.serve))
	return c
}

// URL is the fake's base URL (POST URL()+"/v1/messages").
func (c *CachingAnthropic) URL() string { return c.srv.URL }

// Close shuts the fake down.
func (c *CachingAnthropic) Close() { c.srv.Close() }

// Calls returns the requests received so far, in order.
func (c *CachingAnthropic) Calls() []CacheCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.calls)
}

// Entries is how many cache entries are live now.
func (c *CachingAnthropic) Entries() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.o.Now()
	n := 0
	for _, e := range c.cache {
		if now.Before(e.expires) {
			n++
		}
	}
	return n
}

// Evict drops every cache entry, as if the cache had been flushed.
func (c *CachingAnthropic) Evict() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.cache)
}

// PromptTokens is the estimated token count of a Messages request's
// prompt (tools, system and messages), as the fake bills it in total.
func PromptTokens(body []byte) (int, error) {
	p, err := parsePrompt(body)
	if err != nil {
		return 0, err
	}
	return p.total(), nil
}

type cacheKey struct {
	cred, model string
	prefix      [sha256.Size]byte
}

type cacheEntry struct {
	ttl     time.Duration
	expires time.Time
}

// promptBlock is one block of the prompt.
type promptBlock struct {
	path      string // where it is in the body: tools.0, messages.2.content.1
	tokens    int
	emptyText bool
	cc        *breakpoint // its own cache_control
	ccErr     string      // why its cache_control is invalid
}

type breakpoint struct {
	ttl  time.Duration
	name string // "5m" or "1h"
}

// prompt is a request's prompt as blocks.
type prompt struct {
	model     string
	stream    bool
	maxTokens *int64
	messages  int
	blocks    []promptBlock
	cum       []int               // tokens through block i
	hashes    [][sha256.Size]byte // hash of the prefix through block i
	auto      *breakpoint         // top-level cache_control
	autoEr    string              // why the top-level cache_control is invalid
	msgCC     map[int]*breakpoint // block index -> a message-level breakpoint on it
	msgErr    map[int]string      // block index -> an invalid message-level cache_control
	bps       []int               // breakpoint block indexes, ascending
	ttls      map[int]breakpoint  // breakpoint block index -> its TTL
}

func (p *prompt) total() int {
	if len(p.cum) == 0 {
		return 0
	}
	return p.cum[len(p.cum)-1]
}

// through is the tokens of the prefix through block i (0 for i < 0).
func (p *prompt) through(i int) int {
	if i < 0 {
		return 0
	}
	return p.cum[i]
}

type badRequest string

func (e badRequest) Error() string { return string(e) }

type rawRequest struct {
	Model        string            `json:"model"`
	MaxTokens    *int64            `json:"max_tokens"`
	Tools        []jsontext.Value  `json:"tools"`
	System       jsontext.Value    `json:"system"`
	Messages     []rawCacheMessage `json:"messages"`
	Stream       bool              `json:"stream"`
	CacheControl jsontext.Value    `json:"cache_control"`
}

type rawCacheMessage struct {
	Role         string         `json:"role"`
	Content      jsontext.Value `json:"content"`
	CacheControl jsontext.Value `json:"cache_control"`
}

// parsePrompt reads a request's prompt. Errors are bad requests; invalid
// cache_control values are kept for validate.
func parsePrompt(body []byte) (*prompt, error) {
	var r rawRequest
	if err := jsonx.Unmarshal(body, &r); err != nil {
		_, msg := jsonx.Explain(err)
		return nil, badRequest(msg)
	}
	p := &prompt{model: r.Model, stream: r.Stream, maxTokens: r.MaxTokens, messages: len(r.Messages), msgCC: map[int]*breakpoint{}, msgErr: map[int]string{}}
	var prev [sha256.Size]byte
	add := func(section, path string, raw jsontext.Value) error {
		var m map[string]any
		if err := jsonx.Unmarshal(raw, &m); err != nil || m == nil {
			return badRequest(path + ": Input should be an object")
		}
		b := promptBlock{path: path}
		if v, ok := m["cache_control"]; ok {
			delete(m, "cache_control")
			b.cc, b.ccErr = parseCacheControl(path+".cache_control", v)
		}
		if m["type"] == "text" {
			s, _ := m["text"].(string)
			b.emptyText = s == ""
		}
		canon, err := jsonx.Marshal(m)
		if err != nil {
			return badRequest(path + ": " + err.Error())
		}
		b.tokens = estimateTokens(canon)
		h := sha256.New()
		h.Write(prev[:])
		h.Write([]byte(section))
		h.Write([]byte{0})
		h.Write(canon)
		copy(prev[:], h.Sum(nil))
		p.blocks = append(p.blocks, b)
		p.hashes = append(p.hashes, prev)
		p.cum = append(p.cum, p.total()+b.tokens)
		return nil
	}
	for i, t := range r.Tools {
		if err := add("tools", fmt.Sprintf("tools.%d", i), t); err != nil {
			return nil, err
		}
	}
	sys, err := contentBlocks("system", r.System, true)
	if err != nil {
		return nil, err
	}
	for i, b := range sys {
		if err := add("system", fmt.Sprintf("system.%d", i), b); err != nil {
			return nil, err
		}
	}
	for i, m := range r.Messages {
		path := fmt.Sprintf("messages.%d", i)
		if m.Role == "" {
			return nil, badRequest(path + ".role: Field required")
		}
		blocks, err := contentBlocks(path+".content", m.Content, false)
		if err != nil {
			return nil, err
		}
		for j, b := range blocks {
			if err := add(m.Role, fmt.Sprintf("%s.content.%d", path, j), b); err != nil {
				return nil, err
			}
		}
		if isNull(m.CacheControl) {
			continue
		}
		if len(blocks) == 0 {
			return nil, badRequest(path + ".cache_control: the message has no content block to cache")
		}
		var v any
		if err := jsonx.Unmarshal(m.CacheControl, &v); err != nil {
			return nil, badRequest(path + ".cache_control: invalid JSON")
		}
		bp, msg := parseCacheControl(path+".cache_control", v)
		if msg != "" {
			p.msgErr[len(p.blocks)-1] = msg
		} else {
			p.msgCC[len(p.blocks)-1] = bp
		}
	}
	if !isNull(r.CacheControl) {
		var v any
		if err := jsonx.Unmarshal(r.CacheControl, &v); err != nil {
			return nil, badRequest("cache_control: invalid JSON")
		}
		p.auto, p.autoEr = parseCacheControl("cache_control", v)
	}
	return p, nil
}

// validate checks the request's fields and breakpoints, and settles the
// breakpoints.
func (p *prompt) validate() error {
	switch {
	case p.model == "":
		return badRequest("model: Field required")
	case p.maxTokens == nil:
		return badRequest("max_tokens: Field required")
	case *p.maxTokens < 1:
		return badRequest("max_tokens: Input should be greater than or equal to 1")
	case p.messages == 0:
		return badRequest("messages: at least one message is required")
	}
	if p.autoEr != "" {
		return badRequest(p.autoEr)
	}
	p.ttls = map[int]breakpoint{}
	for i, b := range p.blocks {
		if b.ccErr != "" {
			return badRequest(b.ccErr)
		}
		if msg := p.msgErr[i]; msg != "" {
			return badRequest(msg)
		}
		bp := b.cc
		if bp == nil {
			bp = p.msgCC[i]
		}
		if bp != nil {
			p.ttls[i] = *bp
		}
	}
	if p.auto != nil && len(p.blocks) > 0 {
		last := len(p.blocks) - 1
		if _, ok := p.ttls[last]; !ok {
			p.ttls[last] = *p.auto
		}
	}
	for i := range p.blocks {
		if _, ok := p.ttls[i]; ok {
			p.bps = append(p.bps, i)
		}
	}
	if len(p.bps) > MaxCacheBreakpoints {
		return badRequest(fmt.Sprintf("A maximum of %d blocks with cache_control may be provided. Found %d.", MaxCacheBreakpoints, len(p.bps)))
	}
	seen5m := false
	for _, i := range p.bps {
		if p.blocks[i].emptyText {
			return badRequest(p.blocks[i].path + ".text: cache_control cannot be set for empty text blocks")
		}
		switch p.ttls[i].name {
		case "5m":
			seen5m = true
		case "1h":
			if seen5m {
				return badRequest("a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. Note that blocks are processed in the following order: `tools`, `system`, `messages`.")
			}
		}
	}
	return nil
}

// contentBlocks splits a content value into its blocks: a string is one
// text block.
func contentBlocks(path string, v jsontext.Value, optional bool) ([]jsontext.Value, error) {
	if isNull(v) {
		if optional {
			return nil, nil
		}
		return nil, badRequest(path + ": Field required")
	}
	switch v.Kind() {
	case '"':
		var s string
		if err := jsonx.Unmarshal(v, &s); err != nil {
			return nil, badRequest(path + ": invalid string")
		}
		if optional && s == "" {
			return nil, nil
		}
		b, _ := jsonx.Marshal(map[string]string{"type": "text", "text": s})
		return []jsontext.Value{b}, nil
	case '[':
		var blocks []jsontext.Value
		if err := jsonx.Unmarshal(v, &blocks); err != nil {
			return nil, badRequest(path + ": invalid array")
		}
		return blocks, nil
	}
	return nil, badRequest(path + ": Input should be a valid string or a list of content blocks")
}

func isNull(v jsontext.Value) bool { return len(v) == 0 || v.Kind() == 'n' }

// parseCacheControl reads a cache_control value; nil and no message for
// null.
func parseCacheControl(path string, v any) (*breakpoint, string) {
	if v == nil {
		return nil, ""
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, path + ": Input should be an object"
	}
	if m["type"] != "ephemeral" {
		return nil, path + ".type: Input should be 'ephemeral'"
	}
	bp := &breakpoint{ttl: 5 * time.Minute, name: "5m"}
	for k, val := range m {
		switch k {
		case "type":
		case "ttl":
			switch val {
			case "5m":
			case "1h":
				*bp = breakpoint{ttl: time.Hour, name: "1h"}
			default:
				return nil, path + ".ttl: Input should be '5m' or '1h'"
			}
		default:
			return nil, path + "." + k + ": Extra inputs are not permitted"
		}
	}
	return bp, ""
}

// estimateTokens is the fake's token estimate of a canonical JSON block.
func estimateTokens(canon []byte) int { return (len(canon) + 3) / 4 }

// blockTokens estimates an answer block as a prompt block would count.
func blockTokens(b anthropic.Block) int {
	raw, err := jsonx.Marshal(&b)
	if err != nil {
		return 0
	}
	return canonTokens(raw)
}

// bill looks the prompt up in the cache and writes its breakpoints,
// returning the input side of its usage. c.mu is held.
func (c *CachingAnthropic) bill(cred string, p *prompt) anthropic.Usage {
	now := c.o.Now()
	key := func(i int) cacheKey { return cacheKey{cred: cred, model: p.model, prefix: p.hashes[i]} }
	live := func(k cacheKey) *cacheEntry {
		e := c.cache[k]
		if e != nil && !now.Before(e.expires) {
			delete(c.cache, k)
			return nil
		}
		return e
	}
	read := -1
	for _, b := range p.bps {
		for j := b; j >= 0 && j >= b-CacheLookback && j > read; j-- {
			if live(key(j)) != nil {
				read = j
				break
			}
		}
	}
	if read >= 0 {
		e := c.cache[key(read)]
		e.expires = now.Add(e.ttl)
	}
	var w5, w1 int
	last := read
	for _, b := range p.bps {
		if b <= read || p.cum[b] < c.o.MinTokens {
			continue
		}
		span := p.cum[b] - p.through(last)
		bp := p.ttls[b]
		if bp.name == "1h" {
			w1 += span
		} else {
			w5 += span
		}
		c.cache[key(b)] = &cacheEntry{ttl: bp.ttl, expires: now.Add(bp.ttl)}
		last = b
	}
	return anthropic.Usage{
		InputTokens:              int64(p.total() - p.through(last)),
		CacheCreationInputTokens: int64(w5 + w1),
		CacheReadInputTokens:     int64(p.through(read)),
		CacheCreation:            &anthropic.CacheCreation{Ephemeral5m: int64(w5), Ephemeral1h: int64(w1)},
	}
}

func (c *CachingAnthropic) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	call := CacheCall{Received: Received{Method: r.Method, Path: r.URL.Path, RawPath: r.URL.EscapedPath(), Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body}}
	call.Credential = r.Header.Get("X-Api-Key")
	key := call.Credential
	if call.Credential == "" {
		call.Credential = r.Header.Get("Authorization")
		key, _ = strings.CutPrefix(call.Credential, "Bearer ")
	}
	fail := func(status int, typ, msg string) {
		call.Status, call.Error = status, msg
		c.mu.Lock()
		c.seq++
		reqID := fmt.Sprintf("req_fake%016d", c.seq)
		c.calls = append(c.calls, call)
		c.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Request-Id", reqID)
		w.WriteHeader(status)
		w.Write(anthropic.MarshalError(typ, msg, reqID))
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		fail(http.StatusNotFound, anthropic.ErrNotFound, "Not Found")
		return
	}
	if c.o.Down != nil && c.o.Down() {
		fail(529, anthropic.ErrOverloaded, "Overloaded")
		return
	}
	if len(c.o.Keys) > 0 && !slices.Contains(c.o.Keys, key) {
		fail(http.StatusUnauthorized, anthropic.ErrAuthentication, "invalid x-api-key")
		return
	}
	p, err := parsePrompt(body)
	if err != nil {
		fail(http.StatusBadRequest, anthropic.ErrInvalidRequest, err.Error())
		return
	}
	call.Model, call.Stream = p.model, p.stream
	if err := p.validate(); err != nil {
		fail(http.StatusBadRequest, anthropic.ErrInvalidRequest, err.Error())
		return
	}
	call.Breakpoints = len(p.bps)
	call.PromptTokens = p.total()
	var req anthropic.MessagesRequest
	if err := jsonx.Unmarshal(body, &req); err != nil {
		_, msg := jsonx.Explain(err)
		fail(http.StatusBadRequest, anthropic.ErrInvalidRequest, msg)
		return
	}
	content := []anthropic.Block{{Type: "text", Text: "ok"}}
	if c.o.Answer != nil {
		content = c.o.Answer(&req)
	}
	stop := anthropic.StopEndTurn
	out := 0
	for i := range content {
		if content[i].Type == "tool_use" {
			stop = anthropic.StopToolUse
			if len(content[i].Input) == 0 {
				content[i].Input = jsontext.Value("{}")
			}
		}
		out += blockTokens(content[i])
	}

	c.mu.Lock()
	usage := c.bill(call.Credential, p)
	usage.OutputTokens = int64(out)
	c.seq++
	id := fmt.Sprintf("msg_fake%016d", c.seq)
	reqID := fmt.Sprintf("req_fake%016d", c.seq)
	call.Status, call.Usage = http.StatusOK, usage
	c.calls = append(c.calls, call)
	c.mu.Unlock()

	w.Header().Set("Request-Id", reqID)
	msg := cacheMessage{ID: id, Type: "message", Role: "assistant", Model: p.model, Content: content, StopReason: &stop, Usage: usage}
	if !p.stream {
		b, err := jsonx.Marshal(&msg)
		if err != nil {
			panic(err)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
		return
	}
	writeMessageStream(w, msg)
}

// cacheMessage is the Messages API answer.
type cacheMessage struct {
	ID           string            `json:"id"`
	Type         string            `json:"type"`
	Role         string            `json:"role"`
	Model        string            `json:"model"`
	Content      []anthropic.Block `json:"content"`
	StopReason   *string           `json:"stop_reason"`
	StopSequence *string           `json:"stop_sequence"`
	Usage        anthropic.Usage   `json:"usage"`
}

// streamEvent is one event of a Messages stream, its members in the
// order the API sends them.
type streamEvent struct {
	Type         string        `json:"type"`
	Message      *cacheMessage `json:"message,omitempty"`
	Index        *int          `json:"index,omitempty"`
	ContentBlock any           `json:"content_block,omitempty"`
	Delta        any           `json:"delta,omitempty"`
	Usage        any           `json:"usage,omitempty"`
}

type textDelta struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type thinkingDelta struct {
	Type     string `json:"type"`
	Thinking string `json:"thinking"`
}

type signatureDelta struct {
	Type      string `json:"type"`
	Signature string `json:"signature"`
}

type inputJSONDelta struct {
	Type        string `json:"type"`
	PartialJSON string `json:"partial_json"`
}

type thinkingStart struct {
	Type      string `json:"type"`
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
}

type toolUseStart struct {
	Type  string         `json:"type"`
	ID    string         `json:"id"`
	Name  string         `json:"name"`
	Input jsontext.Value `json:"input"`
}

type stopDelta struct {
	StopReason   string  `json:"stop_reason"`
	StopSequence *string `json:"stop_sequence"`
}

type deltaUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
}

// writeMessageStream sends msg as the Messages API streams it: message_start
// (input-side usage, output_tokens 1), ping, each block's start, deltas and
// stop, message_delta (stop reason and the final usage), message_stop.
func writeMessageStream(w http.ResponseWriter, msg cacheMessage) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	send := func(ev streamEvent) {
		b, err := jsonx.Marshal(&ev)
		if err != nil {
			panic(err)
		}
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.Type, b)
		rc.Flush()
	}

	start := msg
	start.Content = []anthropic.Block{}
	start.StopReason = nil
	start.Usage.OutputTokens = 1
	send(streamEvent{Type: "message_start", Message: &start})
	send(streamEvent{Type: "ping"})
	for i, b := range msg.Content {
		blockStart := func(cb any) { send(streamEvent{Type: "content_block_start", Index: &i, ContentBlock: cb}) }
		delta := func(d any) { send(streamEvent{Type: "content_block_delta", Index: &i, Delta: d}) }
		switch b.Type {
		case "text":
			blockStart(textDelta{Type: "text"})
			for _, part := range chunkText(b.Text, 24) {
				delta(textDelta{Type: "text_delta", Text: part})
			}
		case "thinking":
			blockStart(thinkingStart{Type: "thinking"})
			for _, part := range chunkText(b.Thinking, 24) {
				delta(thinkingDelta{Type: "thinking_delta", Thinking: part})
			}
			delta(signatureDelta{Type: "signature_delta", Signature: b.Signature})
		case "tool_use", "server_tool_use":
			blockStart(toolUseStart{Type: b.Type, ID: b.ID, Name: b.Name, Input: jsontext.Value("{}")})
			delta(inputJSONDelta{Type: "input_json_delta"})
			for _, part := range chunkText(string(b.Input), 16) {
				delta(inputJSONDelta{Type: "input_json_delta", PartialJSON: part})
			}
		default:
			blockStart(&b)
		}
		send(streamEvent{Type: "content_block_stop", Index: &i})
	}
	u := msg.Usage
	send(streamEvent{
		Type:  "message_delta",
		Delta: stopDelta{StopReason: *msg.StopReason},
		Usage: deltaUsage{InputTokens: u.InputTokens, CacheCreationInputTokens: u.CacheCreationInputTokens, CacheReadInputTokens: u.CacheReadInputTokens, OutputTokens: u.OutputTokens},
	})
	send(streamEvent{Type: "message_stop"})
}

// chunkText splits s into pieces of about n bytes, on rune boundaries.
func chunkText(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		k := min(n, len(s))
		for k < len(s) && !utf8.RuneStart(s[k]) {
			k++
		}
		out = append(out, s[:k])
		s = s[k:]
	}
	return out
}
