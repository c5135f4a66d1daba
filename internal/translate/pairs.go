package translate

import (
	"context"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/meter"
)

// The functions below take and return wire bytes: they are what the
// dialect package registers as the two translator pairs (Anthropic client
// on an OpenAI-compatible upstream, and the reverse). ctx is the
// request's; those whose work is not bounded by the body's size alone
// (the Gemini ones inline schema references) stop when it ends.

// Target is what a request translation knows of where the request goes.
type Target struct {
	Model  string // the upstream model id
	Caps   Caps
	Policy Policy
	Signer *Signer
	Cache  Cache
	// Stream: the client asked for a stream, for a protocol that says so
	// outside the body (Gemini's URL names the operation); the
	// translators of the others read the body's stream member.
	Stream bool
	// Continues is the id of the stored answer the request continues,
	// when the gateway expanded that conversation into the body in place
	// of the reference to it: answers that name the answer they continue
	// (a Responses response's previous_response_id) name it.
	Continues string
}

// MessagesBodyToChat translates a Messages request body into a Chat
// Completions body. A body that cannot be translated is a *RequestError.
func MessagesBodyToChat(_ context.Context, body []byte, t Target) ([]byte, *Plan, error) {
	return bodyToBody(body, t, MessagesToChat)
}

// ChatBodyToMessages translates a Chat Completions request body into a
// Messages body. A body that cannot be translated is a *RequestError.
func ChatBodyToMessages(_ context.Context, body []byte, t Target) ([]byte, *Plan, error) {
	return bodyToBody(body, t, ChatToMessages)
}

// ResponsesBodyToChat translates a Responses request body into a Chat
// Completions body. A body that cannot be translated is a *RequestError.
func ResponsesBodyToChat(_ context.Context, body []byte, t Target) ([]byte, *Plan, error) {
	return bodyToBody(body, t, ResponsesToChat)
}

// ResponsesBodyToMessages translates a Responses request body into a
// Messages body. A body that cannot be translated is a *RequestError.
func ResponsesBodyToMessages(_ context.Context, body []byte, t Target) ([]byte, *Plan, error) {
	return bodyToBody(body, t, ResponsesToMessages)
}

// ChatBodyToResponses translates a Chat Completions request body into a
// Responses body. A body that cannot be translated is a *RequestError.
func ChatBodyToResponses(_ context.Context, body []byte, t Target) ([]byte, *Plan, error) {
	return bodyToBody(body, t, ChatRequestToResponses)
}

// MessagesBodyToResponses translates a Messages request body into a
// Responses body. A body that cannot be translated is a *RequestError.
func MessagesBodyToResponses(_ context.Context, body []byte, t Target) ([]byte, *Plan, error) {
	return bodyToBody(body, t, MessagesRequestToResponses)
}

// MessagesBodyToGemini translates a Messages request body into a Gemini
// generateContent body. A body that cannot be translated is a *RequestError;
// when ctx ends first, the translation stops with ctx's error.
func MessagesBodyToGemini(ctx context.Context, body []byte, t Target) ([]byte, *Plan, error) {
	return bodyToBody(body, t, withContext(ctx, MessagesToGemini))
}

// ChatBodyToGemini translates a Chat Completions request body into a
// Gemini generateContent body. A body that cannot be translated is a
// *RequestError; when ctx ends first, the translation stops with ctx's
// error.
func ChatBodyToGemini(ctx context.Context, body []byte, t Target) ([]byte, *Plan, error) {
	return bodyToBody(body, t, withContext(ctx, ChatToGemini))
}

// ResponsesBodyToGemini translates a Responses request body into a Gemini
// generateContent body. A body that cannot be translated is a
// *RequestError; when ctx ends first, the translation stops with ctx's
// error.
func ResponsesBodyToGemini(ctx context.Context, body []byte, t Target) ([]byte, *Plan, error) {
	return bodyToBody(body, t, withContext(ctx, ResponsesToGemini))
}

// withContext gives a translator that takes the request's context the
// shape bodyToBody calls, bound to ctx.
func withContext[In, Out any](ctx context.Context, f func(context.Context, *In, string, Caps, Policy, *Signer) (Out, *Plan, error)) func(*In, string, Caps, Policy, *Signer) (Out, *Plan, error) {
	return func(in *In, model string, caps Caps, policy Policy, signer *Signer) (Out, *Plan, error) {
		return f(ctx, in, model, caps, policy, signer)
	}
}

// bodyToBody decodes a client body into In, translates it with f and
// encodes the result.
func bodyToBody[In, Out any](body []byte, t Target, f func(*In, string, Caps, Policy, *Signer) (Out, *Plan, error)) ([]byte, *Plan, error) {
	in := new(In)
	if err := jsonx.Unmarshal(body, in); err != nil {
		path, msg := jsonx.Explain(err)
		return nil, nil, &RequestError{Param: path, Message: msg}
	}
	out, p, err := f(in, t.Model, t.Caps, t.Policy, t.Signer)
	if err != nil {
		return nil, nil, err
	}
	cacheHints(out, t.Cache, p)
	if p.rp != nil && t.Continues != "" {
		p.rp.continues = t.Continues
	}
	b, err := jsonx.Marshal(out)
	return b, p, err
}

// ChatAnswerToMessages translates a whole Chat Completions answer into a
// Messages answer, and when the client asked for a stream, into the events
// of one. An answer that cannot be translated is an *UpstreamError.
func ChatAnswerToMessages(body []byte, p *Plan, _ int64) (out, stream []byte, u meter.Usage, err error) {
	var c openai.Completion
	if err := jsonx.Unmarshal(body, &c); err != nil {
		return nil, nil, u, &UpstreamError{Message: "upstream answer is not a valid chat completion", Err: err}
	}
	msg, u, err := ChatResponseToMessages(&c, p)
	if err != nil {
		return nil, nil, u, err
	}
	if p.Stream {
		return nil, MessagesStream(msg), u, nil
	}
	out, err = jsonx.Marshal(msg)
	return out, nil, u, err
}

// MessagesAnswerToChat translates a whole Messages answer into a Chat
// Completions answer (created is its timestamp), and when the client asked
// for a stream, into its chunks. An answer that cannot be translated is an
// *UpstreamError.
func MessagesAnswerToChat(body []byte, p *Plan, created int64) (out, stream []byte, u meter.Usage, err error) {
	var m anthropic.Response
	if err := jsonx.Unmarshal(body, &m); err != nil {
		return nil, nil, u, &UpstreamError{Message: "upstream answer is not a valid message", Err: err}
	}
	c, u := MessagesResponseToChat(&m, p, created)
	if p.Stream {
		return nil, ChatStream(c, p), u, nil
	}
	out, err = jsonx.Marshal(c)
	return out, nil, u, err
}

// ChatAnswerToResponses translates a whole Chat Completions answer into
// the response a Responses client asked for, and when it asked for a
// stream, into the events of one. An answer that cannot be translated is
// an *UpstreamError.
func ChatAnswerToResponses(body []byte, p *Plan, created int64) (out, stream []byte, u meter.Usage, err error) {
	var c openai.Completion
	if err := jsonx.Unmarshal(body, &c); err != nil {
		return nil, nil, u, &UpstreamError{Message: "upstream answer is not a valid chat completion", Err: err}
	}
	w, u, err := chatAnswerItems(&c, p, created, !p.Stream)
	if err != nil {
		return nil, nil, u, err
	}
	if p.Stream {
		return nil, w.out, u, nil
	}
	out = w.response.AppendJSON(nil)
	return out, nil, u, err
}

// MessagesAnswerToResponses translates a whole Messages answer into the
// response a Responses client asked for, and when it asked for a stream,
// into the events of one. An answer that cannot be translated is an
// *UpstreamError.
func MessagesAnswerToResponses(body []byte, p *Plan, created int64) (out, stream []byte, u meter.Usage, err error) {
	var m anthropic.Response
	if err := jsonx.Unmarshal(body, &m); err != nil {
		return nil, nil, u, &UpstreamError{Message: "upstream answer is not a valid message", Err: err}
	}
	w, u := messagesAnswerItems(&m, p, created, !p.Stream)
	if p.Stream {
		return nil, w.out, u, nil
	}
	out = w.response.AppendJSON(nil)
	return out, nil, u, err
}

// OpenAIErrorToAnthropicRetry is OpenAIErrorToAnthropic with whether the
// client should not retry: an upstream that refused the gateway's account.
func OpenAIErrorToAnthropicRetry(status int, body []byte) (int, []byte, bool) {
	out, b := OpenAIErrorToAnthropic(status, body)
	return out, b, out == 502
}
