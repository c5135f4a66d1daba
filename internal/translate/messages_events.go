package translate

import (
	"strconv"
	"strings"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/meter"
	"github.com/tollgate/tollgate/internal/sse"
)

// anthropicEvents writes the content events of an Anthropic Messages
// stream for the stream machines of other upstreams: dense block indexes,
// at most one text or thinking block open at a time, a thinking block
// closed with its signature.
type anthropicEvents struct {
	state    streamState
	out      []byte
	next     int       // index of the next block to start
	open     blockKind // the open text or thinking block
	openIdx  int
	thinking strings.Builder // the open thinking block's text, for a synthetic signature
}

func (e *anthropicEvents) startBlock(k blockKind, block string) {
	e.open, e.openIdx = k, e.next
	e.startRaw([]byte(block))
}

func (e *anthropicEvents) startRaw(block []byte) {
	b := append(e.out, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":"...)
	b = strconv.AppendInt(b, int64(e.next), 10)
	b = append(b, `,"content_block":`...)
	b = append(b, block...)
	e.out = append(b, "}\n\n"...)
	e.next++
}

// delta emits a content_block_delta for the open block: prefix is the
// delta object up to its string value, quoted that value.
func (e *anthropicEvents) delta(prefix, quoted string) {
	b := append(e.out, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":"...)
	b = strconv.AppendInt(b, int64(e.openIdx), 10)
	b = append(b, `,"delta":`...)
	b = append(b, prefix...)
	b = append(b, quoted...)
	e.out = append(b, "}}\n\n"...)
}

func (e *anthropicEvents) stopBlock(idx int) {
	b := append(e.out, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":"...)
	b = strconv.AppendInt(b, int64(idx), 10)
	e.out = append(b, "}\n\n"...)
}

// closeOpen closes the open text or thinking block; a thinking block gets
// its signature first: sig, or a synthetic one.
func (e *anthropicEvents) closeOpen(sig string, signer *Signer) {
	switch e.open {
	case blockNone:
		return
	case blockThinking:
		if sig == "" {
			sig = signer.Sign(e.thinking.String())
		}
		e.delta(`{"type":"signature_delta","signature":`, string(jsonx.AppendQuote(nil, sig)))
	}
	e.stopBlock(e.openIdx)
	e.open = blockNone
}

// begin opens the message, once: message_start with the plan's model and
// its input estimate (the upstream's count comes in message_delta).
func (e *anthropicEvents) begin(p *Plan) {
	if e.state != stateBefore {
		return
	}
	e.state = stateStreaming
	start, _ := jsonx.Marshal(messageStart{Type: "message_start", Message: anthropic.Response{
		ID: "msg_" + base62(24), Type: "message", Role: "assistant", Model: p.AnswerModel,
		Content: []anthropic.Block{},
		Usage:   mustJSON(anthropic.Usage{InputTokens: p.InputEstimate}),
	}})
	e.out = sse.AppendEvent(e.out, "message_start", start)
}

// end closes the message with its stop reason and usage (the plan's
// input estimate when the upstream reported none).
func (e *anthropicEvents) end(p *Plan, stop string, u meter.Usage, reported bool) {
	e.begin(p)
	if !reported {
		u.Input = p.InputEstimate
	}
	md, _ := jsonx.Marshal(messageDelta{Type: "message_delta", Delta: stopDelta{StopReason: stop}, Usage: anthropicUsage(u)})
	e.out = sse.AppendEvent(e.out, "message_delta", md)
	e.out = sse.AppendEvent(e.out, "message_stop", []byte(`{"type":"message_stop"}`))
	e.state = stateDone
}

// fail ends the stream with an error event.
func (e *anthropicEvents) fail(body []byte) {
	e.out = sse.AppendEvent(e.out, "error", body)
	e.state = stateFailed
}

type messageStart struct {
	Type    string             `json:"type"`
	Message anthropic.Response `json:"message"`
}

type messageDelta struct {
	Type  string          `json:"type"`
	Delta stopDelta       `json:"delta"`
	Usage anthropic.Usage `json:"usage"`
}

type stopDelta struct {
	StopReason   string  `json:"stop_reason"`
	StopSequence *string `json:"stop_sequence"`
}
