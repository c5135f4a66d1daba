package config

import (
	"strings"
)

// BetaList is an allowlist of anthropic-beta feature names, such as
// files-api-2025-04-14. A nil list (the key left out) allows every name;
// an empty one ([]) allows none.
type BetaList []string

// Allows reports whether the list lets clients turn on the named beta.
// Names compare without regard to case.
func (l BetaList) Allows(name string) bool {
	if l == nil {
		return true
	}
	name = strings.TrimSpace(name)
	for _, b := range l {
		if strings.EqualFold(b, name) {
			return true
		}
	}
	return false
}

// AllowBeta reports whether clients may turn on the named anthropic-beta
// feature when calling this model.
func (m *Model) AllowBeta(name string) bool { return m.AnthropicBetas.Allows(name) }

// AllowBeta reports whether clients may turn on the named anthropic-beta
// feature with this provider's account.
func (p *Provider) AllowBeta(name string) bool { return p.AnthropicBetas.Allows(name) }

// FilterBetas returns the anthropic-beta header values a client sent
// (each a comma-separated list of names) with only the names every allow
// function accepts, joined into one value, and the names it dropped. It
// returns the values unchanged when nothing is dropped, and nil when
// nothing is kept: the header is then not sent at all.
//
// The gateway calls it with the model's and the target provider's
// AllowBeta before sending a request to an Anthropic upstream.
func FilterBetas(values []string, allow ...func(name string) bool) (kept []string, dropped []string) {
	var names []string
	for _, v := range values {
		for n := range strings.SplitSeq(v, ",") {
			n = strings.TrimSpace(n)
			if n == "" {
				continue
			}
			ok := true
			for _, f := range allow {
				ok = ok && f(n)
			}
			if ok {
				names = append(names, n)
			} else {
				dropped = append(dropped, n)
			}
		}
	}
	switch {
	case len(dropped) == 0 && len(names) > 0:
		return values, nil
	case len(names) == 0:
		return nil, dropped
	}
	return []string{strings.Join(names, ",")}, dropped
}

// checkBeta accepts a beta name as Anthropic writes them: letters,
// digits, dashes, dots and underscores.
func checkBeta(bad func(path, format string, args ...any), path, name string) {
	if name == "" {
		bad(path, "must not be empty")
		return
	}
	for _, c := range name {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_') {
			bad(path, "%q is not a beta name (letters, digits, - . _), such as files-api-2025-04-14", name)
			return
		}
	}
}
