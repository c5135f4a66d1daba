package dialect

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"
)

// What each dialect's Session reads: the agent session a client names,
// so that the ledger can group a session's requests (what it cost, and
// whether its prompt cache held). Only what a client says is a session
// counts: a user's or an installation's id spans many sessions.
//
// Gemini has none: over the Gemini API, Gemini CLI (0.61) names no
// session. Its session id goes only to Google's Code Assist API, a
// request shape tollgate does not serve, and the
// x-gemini-api-privileged-user-id it sends is its installation's id.

// MaxSessionID is the longest session id Session returns, in bytes.
const MaxSessionID = 128

// SessionID is what a client named as its session, as the ledger keeps
// it: as it is when it is at most MaxSessionID bytes of printable ASCII,
// else a hex digest of it (the same id for the same value, never longer,
// never a byte a log line or a label must escape); "" stays "".
func SessionID(s string) string {
	if s == "" {
		return ""
	}
	if len(s) <= MaxSessionID && printableASCII(s) {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:16])
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// sessionMember reads a body member that names a session: a non-empty
// string, else "". filter is a cheap test before gjson: the member's
// name, which a body that has the member holds (or spells with \u
// escapes).
func sessionMember(body []byte, path, filter string) string {
	if !bytes.Contains(body, []byte(filter)) && !escaped(body) {
		return ""
	}
	if v := gjson.GetBytes(body, path); v.Type == gjson.String {
		return v.Str
	}
	return ""
}

// messagesSession: Claude Code names its session in the
// X-Claude-Code-Session-Id header and in metadata.user_id, which it
// sends as a JSON object in a string ({"device_id":…,"account_uuid":…,
// "session_id":…}); before 2.x it sent
// user_<device>_account_<account>_session_<session>. A user_id without a
// session part names a user, not a session.
func messagesSession(h http.Header, body []byte) string {
	if id := h.Get("X-Claude-Code-Session-Id"); id != "" {
		return SessionID(id)
	}
	return SessionID(claudeCodeSession(sessionMember(body, "metadata.user_id", "user_id")))
}

// claudeCodeSession is the session part of a Claude Code user_id.
func claudeCodeSession(userID string) string {
	if strings.HasPrefix(userID, "{") {
		if v := gjson.Get(userID, "session_id"); v.Type == gjson.String {
			return v.Str
		}
		return ""
	}
	// user_<device>_account_<account>_session_<session>: the device is
	// hex and the account and session UUIDs, so the markers are the last.
	rest, ok := strings.CutPrefix(userID, "user_")
	a := strings.LastIndex(rest, "_account_")
	s := strings.LastIndex(rest, "_session_")
	if !ok || a < 0 || s < a {
		return ""
	}
	return rest[s+len("_session_"):]
}

// chatSession: prompt_cache_key, which a client sets per conversation to
// keep its prefix cached. The user member names an end user, not a
// session.
func chatSession(_ http.Header, body []byte) string {
	return SessionID(sessionMember(body, "prompt_cache_key", "prompt_cache_key"))
}

// responsesSession: prompt_cache_key, which Codex sets to its
// conversation id, else the session_id header Codex sends with the same
// id (a client that sends no body key, such as a count of input tokens).
func responsesSession(h http.Header, body []byte) string {
	if id := sessionMember(body, "prompt_cache_key", "prompt_cache_key"); id != "" {
		return SessionID(id)
	}
	return SessionID(h.Get("Session_id"))
}
