package provider

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/scrub"
)

// An upstream's error answer is about the operator's account as often as
// about the client's request, and its words name that account: AWS quotes
// the role's ARN and the account id, Google the project, OpenAI and
// Anthropic part of the key. Every answer of every HTTP provider passes
// here (HTTP.Do): a refused credential is not the client's to see or fix,
// and becomes an *AuthError; any other error's body reaches the client
// scrubbed of the account's identifiers. The original text goes to the
// log only.

// AuthError is an upstream exchange that failed on the operator's side of
// the credential: the upstream refused it (Status is its answer), or it
// could not be obtained (Fetch: no instance role, a broken or refused
// service-account key). Err holds the details, for the log only.
type AuthError struct {
	Provider string
	Fetch    bool
	Status   int // the upstream's status; 0 when the credential was not obtained
	Err      error
}

func (e *AuthError) Error() string {
	if e.Fetch {
		return fmt.Sprintf("provider %q: obtaining credentials: %v", e.Provider, e.Err)
	}
	return fmt.Sprintf("provider %q refused the credential (status %d): %v", e.Provider, e.Status, e.Err)
}

func (e *AuthError) Unwrap() error { return e.Err }

// credentialRefused reports an answer that refuses the operator's
// credential or permissions rather than the client's request: 401, 403,
// or Google's API_KEY_INVALID, which the Gemini API answers with 400.
// (Clouds' own shapes are already the dialect's: Bedrock's AccessDenied or
// ExpiredToken is 403 or 401 by now, bedrock_errors.go.)
func credentialRefused(status int, body []byte) bool {
	if status == http.StatusUnauthorized || status == http.StatusForbidden {
		return true
	}
	if !bytes.Contains(body, []byte("API_KEY_INVALID")) {
		return false
	}
	e := gjson.GetBytes(body, "error")
	if !e.Exists() {
		e = gjson.GetBytes(body, "0.error") // Google's streaming methods answer a list
	}
	return e.Get(`details.#(reason=="API_KEY_INVALID")`).Exists()
}

// maxUpstreamErrorBody bounds what is read of an error answer; the rest
// is not relayed.
const maxUpstreamErrorBody = 1 << 20

// upstreamError takes an error answer (status 400 or more): a refused
// credential is an *AuthError; any other answer keeps its status and
// headers and gets its body scrubbed. Whatever the client will not see
// is logged.
func (h *HTTP) upstreamError(resp *http.Response, r *Request) (*http.Response, error) {
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxUpstreamErrorBody))
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("reading the upstream's error answer: %w", err)
	}
	if credentialRefused(resp.StatusCode, raw) {
		text := string(bytes.TrimSpace(raw))
		r.logger().LogAttrs(context.Background(), slog.LevelWarn, "upstream refused the credential",
			slog.String("request_id", r.ID), slog.String("provider", h.name), slog.Int("status", resp.StatusCode), slog.String("upstream_error", text))
		return nil, &AuthError{Provider: h.name, Status: resp.StatusCode, Err: errors.New(dialect.Clip(text))}
	}
	body := scrub.Bytes(raw)
	if !bytes.Equal(body, raw) {
		r.logger().LogAttrs(context.Background(), slog.LevelWarn, "upstream error scrubbed of account identifiers",
			slog.String("request_id", r.ID), slog.String("provider", h.name), slog.Int("status", resp.StatusCode), slog.String("upstream_error", string(raw)))
	}
	return replaceBody(resp, resp.StatusCode, resp.Header.Get("Content-Type"), body), nil
}

// logger is where r's provider logs; nothing when the caller gave none.
func (r *Request) logger() *slog.Logger {
	if r.Log == nil {
		return discardLog
	}
	return r.Log
}

var discardLog = slog.New(slog.DiscardHandler)
