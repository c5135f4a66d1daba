package identity

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tollgate/tollgate/internal/auth"
	"github.com/tollgate/tollgate/internal/store"
)

// managedSettings serves the signed-in person's Claude Code managed
// settings: their team's claude_code.managed_settings, wrapped as the
// client validates it — {"uuid", "checksum", "settings"} — with an ETag
// of the checksum and 304 when the client has it. A team without settings
// (or a person without a team) gets 404, which Claude Code reads as "no
// managed policy".
func (s *Service) managedSettings(w http.ResponseWriter, r *http.Request) {
	p, err := s.authn.Check(r)
	if err != nil {
		status, typ := auth.Status(err), "authentication_error"
		switch status {
		case http.StatusBadRequest:
			typ = "invalid_request_error"
		case http.StatusTooManyRequests:
			typ = "rate_limit_error"
			if d, ok := auth.RetryAfter(err); ok && d > 0 {
				w.Header().Set("Retry-After", strconv.Itoa(int((d+time.Second-1)/time.Second)))
			}
		case http.StatusServiceUnavailable:
			typ = "api_error"
		}
		writeAnthropicError(w, status, typ, err.Error())
		return
	}
	if p.Person == nil {
		writeAnthropicError(w, http.StatusNotFound, "not_found_error", "managed settings are served to people signed in through the gateway, not to API keys")
		return
	}
	if p.Person.TeamID == "" {
		writeAnthropicError(w, http.StatusNotFound, "not_found_error", "no managed settings: you are in no team")
		return
	}
	t, err := s.st.TeamByID(r.Context(), p.Person.TeamID)
	switch {
	case store.IsNotFound(err):
		writeAnthropicError(w, http.StatusNotFound, "not_found_error", "no managed settings for your team")
		return
	case err != nil:
		s.log.Error("identity: reading a team's managed settings", "error", err)
		writeAnthropicError(w, http.StatusServiceUnavailable, "api_error", "managed settings cannot be read right now")
		return
	}
	settings := gjson.GetBytes(t.ClaudeCode, "managed_settings")
	if !settings.IsObject() {
		writeAnthropicError(w, http.StatusNotFound, "not_found_error", "no managed settings for team "+t.Name)
		return
	}
	sum := sha256.Sum256([]byte(settings.Raw))
	checksum := hex.EncodeToString(sum[:])
	etag := `"` + checksum + `"`
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", "private, no-cache")
	if inm := r.Header.Get("If-None-Match"); inm != "" && etagMatch(inm, etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	b := make([]byte, 0, len(settings.Raw)+160)
	b = append(b, `{"uuid":"`...)
	b = append(b, checksum...)
	b = append(b, `","checksum":"`...)
	b = append(b, checksum...)
	b = append(b, `","settings":`...)
	b = append(b, settings.Raw...)
	b = append(b, '}')
	h.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// etagMatch reports whether an If-None-Match list names etag (weak
// comparison, as RFC 9110 §13.1.2 asks of If-None-Match).
func etagMatch(list, etag string) bool {
	for _, t := range strings.Split(list, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}

// writeAnthropicError answers a bearer endpoint in the Anthropic envelope,
// as Claude Code expects of every gateway endpoint it calls with its token.
func writeAnthropicError(w http.ResponseWriter, status int, typ, msg string) {
	writeJSON(w, status, map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}})
}
