package gateway

import (
	"bytes"
	"log/slog"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/scrub"
	"github.com/tollgate/tollgate/internal/sse"
)

// scrubbingTap hands a translated stream's machine the upstream's events
// with what names the operator's account (an ARN, a project, part of a
// key) taken out of its error events: a translator quotes an upstream's
// error message to its client. The upstream's words go to the log. (On the
// pass-through lane the dialects' taps do the same.)
type scrubbingTap struct {
	dialect.Tap
	log *slog.Logger
	id  string
	f   sse.Fields
}

func (t *scrubbingTap) Feed(ev []byte) []byte {
	// An error event says so at its start, in its name or its first
	// member; looking there spares the common case a scan and a parse.
	if head := ev[:min(len(ev), errorHead)]; !bytes.Contains(head, []byte("error")) && !bytes.Contains(head, []byte("failed")) {
		return t.Tap.Feed(ev)
	}
	t.f.Parse(ev)
	if !isErrorEvent(t.f.Name, t.f.Data) {
		return t.Tap.Feed(ev)
	}
	clean := scrub.Bytes(t.f.Data)
	if bytes.Equal(clean, t.f.Data) {
		return t.Tap.Feed(ev)
	}
	t.log.Warn("upstream error event scrubbed for the client", "request_id", t.id, "upstream_error", string(t.f.Data))
	return t.Tap.Feed(sse.AppendEvent(nil, string(t.f.Name), clean))
}

// errorHead is how much of an event's start is looked at for the words an
// error event begins with ("event: error", "event: response.failed",
// `data: {"error"`, `data: {"type":"error"`), white space allowed.
const errorHead = 64

// isErrorEvent reports whether an upstream stream event is an error, in
// any upstream dialect: Anthropic's and the Responses API's error events
// (by name or type), a Responses response.failed, and an OpenAI or Gemini
// chunk whose top level is an error object. The model's own text never
// makes one: it is a string inside the event, not its name or top level.
func isErrorEvent(name, data []byte) bool {
	switch string(name) {
	case "error", "response.failed":
		return true
	}
	if !bytes.Contains(data, []byte(`"error"`)) && !bytes.Contains(data, []byte(`"response.failed"`)) {
		return false // the common case, without parsing
	}
	r := gjson.GetManyBytes(data, "type", "error")
	return r[0].Str == "error" || r[0].Str == "response.failed" || r[1].IsObject()
}
