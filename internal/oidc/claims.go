package oidc

import (
	"encoding/json"
	"strconv"
	"strings"
)

// pointer splits a claim name: a JSON pointer ("/a/b", RFC 6901) into its
// unescaped tokens, a plain name into nil (looked up as is, so a claim
// named "https://example.com/groups" still works).
func pointer(claim string) []string {
	if !strings.HasPrefix(claim, "/") {
		return nil
	}
	parts := strings.Split(claim[1:], "/")
	for i, s := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return parts
}

// lookup returns the claim named name (or by the pointer ptr) in claims.
func lookup(claims map[string]any, name string, ptr []string) (any, bool) {
	if ptr == nil {
		v, ok := claims[name]
		return v, ok
	}
	var v any = claims
	for _, tok := range ptr {
		switch c := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = c[tok]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			v = c[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// claimString is a claim as a string: a string, or a number written as
// the IdP wrote it.
func claimString(v any) string {
	switch s := v.(type) {
	case string:
		return s
	case json.Number:
		return s.String()
	}
	return ""
}

// claimStrings reads a groups claim: an array of strings, or one string.
// Anything else, or nothing, is no groups.
func claimStrings(v any) []string {
	switch g := v.(type) {
	case string:
		if g == "" {
			return nil
		}
		return []string{g}
	case []any:
		out := make([]string, 0, len(g))
		for _, e := range g {
			if s, ok := e.(string); ok && s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// emailUnverified reports an email_verified claim that says false (as a
// boolean or, as some IdPs send it, a string).
func emailUnverified(claims map[string]any) bool {
	switch v := claims["email_verified"].(type) {
	case bool:
		return !v
	case string:
		return v == "false"
	}
	return false
}
