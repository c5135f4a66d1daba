package promptcache

import (
	"bytes"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/api/anthropic"
)

// imageBytes stands for an image in the size estimate: about 1,600
// tokens, what Anthropic bills an image of about a megapixel, whatever
// its encoding's length.
const imageBytes = 1600 * 4

// Place marks breakpoints in a request on its way to an Anthropic
// upstream, as o says, and returns how many it added.
func Place(req *anthropic.MessagesRequest, o Options) int {
	l := newLayout()
	var sink counter
	sink.value(req.CacheControl)
	var size int
	for i := range req.Tools {
		t := &req.Tools[i]
		sink.value(t.CacheControl)
		size += len(t.Type) + len(t.Name) + len(t.Description) + len(t.InputSchema) + len(t.InputExamples) + 16
	}
	if n := len(req.Tools); n > 0 {
		l.prefix[spotTools], l.marked[spotTools] = estimate(size), len(req.Tools[n-1].CacheControl) > 0
	}
	sysLast := lastMarkable(req.System.Blocks)
	for i := range req.System.Blocks {
		size += sink.block(&req.System.Blocks[i])
	}
	if sysLast >= 0 {
		l.prefix[spotSystem], l.marked[spotSystem] = estimate(size), len(req.System.Blocks[sysLast].CacheControl) > 0
	}
	last, prev := -1, -1 // the latest two user turns that can take a mark
	at := [2]int64{}
	for i := range req.Messages {
		m := &req.Messages[i]
		sink.value(m.CacheControl)
		size += len(m.Role) + len(m.Content.Raw) + 8
		for k := range m.Content.Blocks {
			size += sink.block(&m.Content.Blocks[k])
		}
		if m.Role == "user" && lastMarkable(m.Content.Blocks) >= 0 {
			prev, last = last, i
			at[0], at[1] = at[1], estimate(size)
		}
	}
	spots := [2]int{prev, last}
	for j, s := range [2]spot{spotPrevUser, spotLastUser} {
		if i := spots[j]; i >= 0 {
			blocks := req.Messages[i].Content.Blocks
			l.prefix[s], l.marked[s] = at[j], len(blocks[lastMarkable(blocks)].CacheControl) > 0
		}
	}
	l.existing, l.has5m, l.has1h = sink.n, sink.has5m, sink.has1h

	picks, ttl, n := choose(&l, o)
	if n == 0 {
		return 0
	}
	mark := jsontext.Value(ttl.mark())
	if picks[spotTools] {
		req.Tools[len(req.Tools)-1].CacheControl = mark
	}
	if picks[spotSystem] {
		req.System.FromString = false // a string takes no mark: it becomes one text block
		req.System.Blocks[sysLast].CacheControl = mark
	}
	for j, s := range [2]spot{spotPrevUser, spotLastUser} {
		if picks[s] {
			c := &req.Messages[spots[j]].Content
			c.FromString = false
			c.Blocks[lastMarkable(c.Blocks)].CacheControl = mark
		}
	}
	return n
}

// lastMarkable is the index of the last block that can carry a mark, -1
// when none can: thinking blocks take none, nor do empty text blocks.
func lastMarkable(blocks []anthropic.Block) int {
	for i := len(blocks) - 1; i >= 0; i-- {
		if markable(blocks[i].Type, blocks[i].Type == "text" && blocks[i].Text == "") {
			return i
		}
	}
	return -1
}

func markable(typ string, emptyText bool) bool {
	return typ != "thinking" && typ != "redacted_thinking" && !emptyText
}

// counter counts the client's marks and their TTLs.
type counter struct {
	n            int
	has5m, has1h bool
}

func (c *counter) value(v jsontext.Value) {
	if len(v) == 0 {
		return
	}
	c.n++
	if bytes.Contains(v, []byte(`"1h"`)) {
		c.has1h = true
	} else {
		c.has5m = true
	}
}

// block counts the marks in b and returns its estimated size in bytes.
func (c *counter) block(b *anthropic.Block) int {
	c.value(b.CacheControl)
	n := len(b.Type) + len(b.Text) + len(b.Input) + len(b.Name) + len(b.ID) + len(b.ToolUseID) +
		len(b.Thinking) + len(b.Signature) + len(b.Data) + len(b.Citations) + len(b.Title) + 16
	if s := b.Source; s != nil {
		if b.Type == "image" {
			n += imageBytes
		} else {
			n += len(s.Data) + len(s.URL) + len(s.Ref)
		}
		if s.Content != nil {
			for i := range s.Content.Blocks {
				n += c.block(&s.Content.Blocks[i])
			}
		}
	}
	if ct := b.Content; ct != nil {
		n += len(ct.Raw)
		for i := range ct.Blocks {
			n += c.block(&ct.Blocks[i])
		}
	}
	return n
}
