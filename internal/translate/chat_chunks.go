package translate

import (
	"strconv"

	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/meter"
	"github.com/tollgate/tollgate/internal/sse"
)

// chatChunks writes a Chat Completions chunk stream for the stream
// machines of other upstreams: one id and model on every chunk, the role
// once, exactly one finish_reason chunk, the usage chunk when the client
// asked for it, and [DONE] only after a normal end.
type chatChunks struct {
	state   streamState
	out     []byte
	created int64

	prefix []byte // a chunk up to its delta object
	suffix []byte // what follows the delta in an ordinary chunk
}

// start emits the first chunk, under the given chunk id.
func (c *chatChunks) start(p *Plan, id string) {
	c.state = stateStreaming
	b := append([]byte(nil), `{"id":`...)
	b = jsonx.AppendQuote(b, id)
	b = append(b, `,"object":"chat.completion.chunk","created":`...)
	b = strconv.AppendInt(b, c.created, 10)
	b = append(b, `,"model":`...)
	b = jsonx.AppendQuote(b, p.AnswerModel)
	c.prefix = append(b, `,"choices":[{"index":0,"delta":`...)
	c.suffix = []byte(`,"logprobs":null,"finish_reason":null}]`)
	if p.IncludeUsage {
		c.suffix = append(c.suffix, `,"usage":null`...)
	}
	c.suffix = append(c.suffix, '}')
	c.chunk(`{"role":"assistant","content":""}`)
}

// chunk emits one chunk with the given delta object.
func (c *chatChunks) chunk(delta string) {
	b := append(c.out, "data: "...)
	b = append(b, c.prefix...)
	b = append(b, delta...)
	b = append(b, c.suffix...)
	c.out = append(b, "\n\n"...)
}

// chunkRaw emits a chunk whose delta is prefix + quoted + close, splicing
// the upstream's JSON string without unescaping it.
func (c *chatChunks) chunkRaw(prefix, quoted, close string) {
	b := append(c.out, "data: "...)
	b = append(b, c.prefix...)
	b = append(b, prefix...)
	b = append(b, quoted...)
	b = append(b, close...)
	b = append(b, c.suffix...)
	c.out = append(b, "\n\n"...)
}

// end emits the finish chunk, the usage chunk when asked for, and [DONE].
func (c *chatChunks) end(p *Plan, finish string, u meter.Usage) {
	b := append(c.out, "data: "...)
	b = append(b, c.prefix...)
	b = append(b, `{},"logprobs":null,"finish_reason":"`...)
	b = append(b, finish...)
	b = append(b, `"}]`...)
	if p.IncludeUsage {
		b = append(b, `,"usage":null`...)
	}
	c.out = append(b, "}\n\n"...)
	if p.IncludeUsage {
		// The one usage chunk: empty choices, just before [DONE].
		usage := encodeOpenAIUsage(u)
		uc := append([]byte(nil), c.prefix[:len(c.prefix)-len(`{"index":0,"delta":`)]...)
		uc = append(uc, `],"usage":`...)
		uc = append(uc, usage...)
		c.out = sse.AppendEvent(c.out, "", append(uc, '}'))
	}
	c.out = append(c.out, "data: [DONE]\n\n"...)
	c.state = stateDone
}

// fail ends the stream with an error chunk.
func (c *chatChunks) fail(body []byte) {
	c.out = sse.AppendEvent(c.out, "", body)
	c.state = stateFailed
}
