package translate

import (
	"strings"

	"github.com/tidwall/gjson"
)

// State shared by the stream machines, whatever their pair.

// streamState is where a translated stream is in its grammar.
type streamState uint8

const (
	stateBefore    streamState = iota // nothing sent yet
	stateStreaming                    // the opening event is out
	stateDone                         // closed normally
	stateFailed                       // closed with an error event
)

// blockKind is the kind of the open Anthropic content block.
type blockKind uint8

const (
	blockNone blockKind = iota
	blockText
	blockThinking
)

type toolState uint8

const (
	toolNew     toolState = iota // announced, no block started yet (name may still grow)
	toolLive                     // its block is open and streaming
	toolPending                  // waiting for the live tool to finish; arguments buffered
	toolClosed
)

type toolSlot struct {
	key   int
	id    string
	name  string
	args  []byte // arguments so far, to know when the JSON is complete
	state toolState
}

// maxToolCalls bounds the tool calls of one stream (a hostile upstream
// could otherwise grow state without limit).
const maxToolCalls = 128

// isErrorChunk reports whether a data payload is an error object.
func isErrorChunk(data []byte) bool {
	return len(data) > 0 && strings.Contains(unsafeString(data), `"error"`) && gjson.Get(unsafeString(data), "error").IsObject()
}
