package translate

import (
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/meter"
	"github.com/tollgate/tollgate/internal/sse"
)

// The answer side as events. An upstream's answer, whole or streamed, is
// read by one reader per upstream protocol into the calls of an
// answerWriter, and one writer per client protocol renders them: a client
// protocol is one writer and an upstream protocol one reader, not a
// stream machine per pair. The Gemini clients' pairs are built this way;
// the older pairs keep their own machines until they move onto it.

// answerStop is why an answer ended, in no protocol's words.
type answerStop uint8

const (
	stopEnd       answerStop = iota // the model finished: end_turn, stop_sequence, stop, completed
	stopToolUse                     // it waits for tool results: tool_use, tool_calls
	stopMaxTokens                   // the output bound cut it: max_tokens, length, max_output_tokens
	stopRefusal                     // the model or a filter refused: refusal, content_filter
)

// answerError is an upstream error in no protocol's envelope.
type answerError struct {
	status  int    // the HTTP status it means for the client
	message string // what the upstream said
	retry   string // when the upstream said to retry, as a duration ("20s"); "" when it did not
	noRetry bool   // no retry can help: the upstream refused the gateway's account
}

// answerWriter renders an answer's events in a client's protocol. A reader
// calls begin once, then the content calls in the order the upstream made
// them, then finish or fail once. Strings and values are valid only during
// the call (they may be views into a stream's read buffer): a writer
// copies what it keeps.
type answerWriter interface {
	// begin: the answer starts; id is the upstream's id of it ("" none).
	begin(id string)
	// text is a piece of answer text: s, and the same as a JSON string
	// (quoted), so that writers can splice it without encoding it again.
	text(s, quoted string)
	// thinking is a piece of readable reasoning (a summary, thinking text).
	thinking(s, quoted string)
	// reasoning is the upstream's reasoning, complete, as the upstream
	// needs it back on the next turn. It closes the reasoning before it:
	// what follows belongs to the answer again.
	reasoning(r sealedReasoning)
	// toolStart, toolArgs and toolEnd make tool call k (unique within the
	// answer): its id and name (the upstream's), its arguments' JSON in
	// pieces, its end. The calls of several tools may interleave.
	toolStart(k int, id, name string)
	toolArgs(k int, frag, quoted string)
	toolEnd(k int)
	// usage is the upstream's usage so far; the last one counts.
	usage(u meter.Usage)
	// finish ends the answer normally.
	finish(stop answerStop)
	// fail ends a stream with an error.
	fail(e answerError)
}

// streamWriter is an answerWriter that writes a stream's bytes.
type streamWriter interface {
	answerWriter
	// take returns the bytes written since the last take, valid until the
	// next call of the writer.
	take() []byte
	// ended reports whether finish or fail ended the stream, and clean
	// whether it was finish.
	ended() (ended, clean bool)
	// errorAnswer renders an error as the whole answer of a stream that
	// failed before it began: status, body, and whether the client should
	// not retry.
	errorAnswer(e answerError) (int, []byte, bool)
}

// answerReader reads one upstream protocol's stream into a writer.
type answerReader interface {
	// event reads one upstream event: name is its event field (nil when
	// absent), data its data (never nil).
	event(name, data []byte, w answerWriter)
	// startError reads an error that a stream opens with.
	startError(name, data []byte) (answerError, bool)
	// close: the upstream body ended (eof) or failed. The reader ends the
	// answer: with finish when the upstream had finished it, else with
	// fail saying msg, never with a made-up end.
	close(eof bool, msg string, w answerWriter)
	// usage is the upstream's usage so far.
	usage() meter.Usage
}

// answerStream joins a reader and a writer into a stream tap (dialect.Tap).
// It is made per stream and is not safe for concurrent use.
type answerStream struct {
	f sse.Fields
	r answerReader
	w streamWriter
}

// Feed takes one complete upstream event and returns the client's bytes
// (valid until the next call).
func (s *answerStream) Feed(ev []byte) []byte {
	if done, _ := s.w.ended(); done {
		return nil
	}
	s.f.Parse(ev)
	if s.f.Data == nil {
		return nil // comments and keep-alives
	}
	s.r.event(s.f.Name, s.f.Data, s.w)
	return s.w.take()
}

// StartError reports whether ev, the upstream's first data event, is an
// error; if so it returns the status and body to answer with instead of a
// stream.
func (s *answerStream) StartError(ev []byte) (int, []byte, bool) {
	s.f.Parse(ev)
	if s.f.Data == nil {
		return 0, nil, false
	}
	e, ok := s.r.startError(s.f.Name, s.f.Data)
	if !ok {
		return 0, nil, false
	}
	status, body, _ := s.w.errorAnswer(e)
	return status, body, true
}

// Close ends the stream when the upstream's body ends (eof) or fails: the
// bytes that end the client's stream, and whether it ended cleanly.
func (s *answerStream) Close(eof bool, msg string) ([]byte, bool) {
	if done, clean := s.w.ended(); done {
		return nil, clean
	}
	s.r.close(eof, msg, s.w)
	_, clean := s.w.ended()
	return s.w.take(), clean
}

// Usage is the usage the upstream reported so far, in buckets.
func (s *answerStream) Usage() meter.Usage { return s.r.usage() }

// merge adds reasoning that came right after r, when the two travel as
// one: Claude's thinking blocks in a row go back together, in order, as do
// pieces of reasoning text. A Responses reasoning item travels alone: it
// reports false, and r is unchanged.
func (r *sealedReasoning) merge(next sealedReasoning) bool {
	switch {
	case len(r.Item) > 0 || len(next.Item) > 0:
		return false
	case len(r.Blocks) > 0 && len(next.Blocks) > 0:
		r.Blocks = joinArrays(r.Blocks, next.Blocks)
		return true
	case len(r.Blocks) > 0 || len(next.Blocks) > 0:
		return false
	}
	r.Text += next.Text
	return true
}

// joinArrays joins two JSON arrays into one (a new value).
func joinArrays(a, b jsontext.Value) jsontext.Value {
	if len(a) <= 2 {
		return append(jsontext.Value(nil), b...)
	}
	if len(b) <= 2 {
		return a
	}
	out := make(jsontext.Value, 0, len(a)+len(b))
	out = append(out, a[:len(a)-1]...)
	out = append(out, ',')
	return append(out, b[1:]...)
}
