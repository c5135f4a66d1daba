package provider

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/dialect"
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
	body := scrubBytes(raw)
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

// redacted replaces an identifier of the operator's account; a pattern's
// first group, if any, is what names it ("projects/"), and stays.
const redacted = "${1}[redacted]"

// accountIDs match what names the operator's account in an upstream's
// words. None matches a quote or a backslash, so that scrubbing a JSON
// body leaves it JSON.
var accountIDs = []*regexp.Regexp{
	// AWS: ARNs (a role, an inference profile), account ids, access key ids.
	regexp.MustCompile(`\barn:aws[a-z-]*:[^\s"'\\<>,;]+`),
	regexp.MustCompile(`\b[0-9]{12}\b`),
	regexp.MustCompile(`\b(?:AKIA|ASIA)[A-Z0-9]{16}\b`),
	// Google: projects in resource paths, project numbers and ids in words.
	regexp.MustCompile(`\b(projects/)[^/\s"'\\]+`),
	regexp.MustCompile(`(?i)\b(project(?:_number|_id| number| id)?[ =:]+'?)[a-z0-9][a-z0-9-]{4,28}[a-z0-9]\b`),
	// Keys, whole or partly masked: Google's, OpenAI's and Anthropic's,
	// Azure's (32 hex digits).
	regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{8,}`),
	regexp.MustCompile(`\bsk-[A-Za-z0-9_*-]{3,}`),
	regexp.MustCompile(`\b[0-9a-fA-F]{32}\b`),
	// OpenAI: organisations and projects.
	regexp.MustCompile(`\borg-[A-Za-z0-9]{8,}`),
	regexp.MustCompile(`\bproj_[A-Za-z0-9]{8,}`),
}

// scrub replaces the identifiers of the operator's account in an
// upstream's text (ARNs, AWS account ids, Google projects, API keys or
// their fragments) with a neutral placeholder.
func scrub(s string) string {
	for _, re := range accountIDs {
		s = re.ReplaceAllString(s, redacted)
	}
	return s
}

// scrubBytes is scrub for a body; b itself when nothing matched.
func scrubBytes(b []byte) []byte {
	out := b
	for _, re := range accountIDs {
		if re.Match(out) {
			out = re.ReplaceAll(out, []byte(redacted))
		}
	}
	return out
}
