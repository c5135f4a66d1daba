package dialect

import (
	"context"
	"net/http"

	"github.com/tollgate/tollgate/internal/affinity"
)

// Lifecycle is a request-lifecycle hook: what a stateful protocol adds to
// the gateway's handling of its requests, such as answers kept for later
// requests to continue, and the routes that read them back. It needs what
// exists only at run time (a database), so it is attached at start-up,
// one per dialect (gateway.Options.Lifecycles); the gateway calls it and
// knows nothing of the state it keeps.
type Lifecycle interface {
	// Begin starts the turn of a request to one of the dialect's
	// endpoints, before it is admitted. It may replace r.Body and r.Scan
	// (a continued conversation expanded into the request), which the
	// limits and sticky routing then read. A refusal is a *Refusal. A nil
	// Turn: the request needs nothing more of the hook.
	Begin(ctx context.Context, r *TurnRequest) (Turn, error)
	// Routes are the routes the hook serves beside the dialect's
	// endpoints; the gateway serves them as its own, with its request
	// ids, authentication, logging and error envelopes.
	Routes() []Route
}

// TurnRequest is what Begin is given.
type TurnRequest struct {
	Op   Op
	Body []byte // the request body: valid until the request ends
	Scan Scanned
	// Owner is who owns what the request stores: the key's id, "" for
	// the master key. Nothing stored for one owner is shown to another.
	Owner string
	// Model is the configured name of the model the request resolved to.
	Model string
	// RequestID is the gateway's id of the request, for the log.
	RequestID string
}

// Turn is one request's passage through a Lifecycle. The gateway calls it
// from the request's goroutine only, in order: Attempt before each
// upstream attempt, then the answer's Answer, or Stream and Ended.
type Turn interface {
	// Attempt picks the body an attempt on target t sends. A refusal (a
	// *Refusal) ends the request with it, as the answer of that target.
	Attempt(t AttemptTarget) (AttemptBody, error)
	// Affinity is the key the conversation the request continues was
	// routed by, for sticky routing; 0 when there is none. A key the
	// client names itself outranks it.
	Affinity() affinity.Key
	// Keeps reports whether the turn reads the answer: the gateway then
	// hands it every successful answer (Answer, Stream) and holds the
	// request body until the answer has ended.
	Keeps() bool
	// Answer is given a whole successful answer before the client gets
	// it, and returns what the client gets instead (body itself when
	// nothing changes). events: body is a whole event stream (an upstream
	// that answered a stream request with one object, translated).
	Answer(body []byte, events bool) []byte
	// Stream wraps the tap of a successful stream answer.
	Stream(tap Tap) Tap
	// Ended is called when a stream answer is over, however it ended: cut
	// by the upstream, left by the client, or finished.
	Ended()
}

// SessionTurn is a Turn that may place its request in the agent session
// of a stored conversation: the requests that continue one another
// (previous_response_id) are one session, though the client names none.
type SessionTurn interface {
	Turn
	// Session returns the session the request belongs to, given named,
	// the one its dialect read from it (Dialect.Session, "" for none): a
	// session the client names is kept; else it is the stored
	// conversation's, the id of its first response; else "". A request
	// that starts a conversation has it only once its response is
	// stored, so ask when the answer is over (after Answer, or Ended).
	// What it returns is bounded as SessionID bounds it.
	Session(named string) string
}

// AttemptTarget is the target of one upstream attempt, as a Turn sees it.
type AttemptTarget struct {
	// Name is the target's name (provider/model).
	Name string
	// Passthrough: the target speaks the client's protocol and gets the
	// client's body (the pass-through lane).
	Passthrough bool
	// ForwardUnknownIDs: the target's provider may know state the
	// gateway never stored (forward_unknown_response_ids), so a reference
	// to it is sent on rather than refused.
	ForwardUnknownIDs bool
	// Affinity is the request's conversation key, as routing used it.
	Affinity affinity.Key
}

// AttemptBody is the body an attempt sends.
type AttemptBody struct {
	Body []byte
	Scan Scanned
	// Continues names the stored answer whose conversation Body holds in
	// place of the reference to it: a translated answer names it as the
	// answer it continues (translate.Target.Continues).
	Continues string
}

// Route is a route a Lifecycle serves beside its dialect's endpoints.
type Route struct {
	// Pattern is a net/http ServeMux pattern without a method
	// (/v1/things/{id}): Serve checks the method itself.
	Pattern string
	// Serve answers a request from owner (as TurnRequest.Owner) with a
	// status and a JSON body; a refusal is a *Refusal.
	Serve func(r *http.Request, owner string) (status int, body []byte, err error)
}

// Refusal is an error a Lifecycle answers a client with: the gateway
// renders it in the envelope of the client's dialect.
type Refusal struct {
	Status  int
	Kind    Kind
	Param   string // the request member at fault, if any
	Code    string // a machine-readable code, if any
	Message string // what the client reads
	Header  http.Header
	// Err is the cause, for the log only.
	Err error
}

func (e *Refusal) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Refusal) Unwrap() error { return e.Err }
