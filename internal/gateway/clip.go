package gateway

import "unicode/utf8"

// maxEcho bounds every client-supplied string the gateway stores, logs or
// echoes in an error (a model name, a path, a field name): a client must
// not turn one request into megabytes of log, ledger or answer.
const maxEcho = 256

// clip returns s cut to at most maxEcho bytes on a character boundary,
// marked with "…" when cut.
func clip(s string) string {
	if len(s) <= maxEcho {
		return s
	}
	cut := maxEcho - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
