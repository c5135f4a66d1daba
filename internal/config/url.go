package config

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

func checkBaseURL(s string) error {
	if s == "" {
		return errors.New("is required")
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("invalid URL: %v", redactParseError(err, s))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%q must start with http:// or https://", RedactURL(s))
	}
	if u.Host == "" {
		return fmt.Errorf("%q has no host", RedactURL(s))
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%q must not have a query or fragment", RedactURL(s))
	}
	return nil
}

// redactParseError is a url.Parse error without the URL it quotes, which
// may hold a password.
func redactParseError(err error, s string) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return errors.New(strings.ReplaceAll(ue.Err.Error(), s, RedactURL(s)))
	}
	return err
}

// Redacted replaces a secret in a URL.
const Redacted = "****"

// RedactURL returns s with the secrets a URL may carry replaced by ****:
// the password of its user information (https://user:****@host) and the
// values of query parameters whose names suggest a credential (api_key,
// token, password, sig, …). Use it wherever a configured URL is printed
// or logged. A string that does not parse as a URL has everything between
// "://" and the last "@" of its authority replaced.
func RedactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return redactAuthority(s)
	}
	changed := false
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), Redacted)
			changed = true
		}
	}
	if q, ok := redactQuery(u.RawQuery); ok {
		u.RawQuery, changed = q, true
	}
	if !changed {
		return s
	}
	// url escapes the asterisks in user information; show them as written.
	return strings.Replace(u.String(), ":%2A%2A%2A%2A@", ":"+Redacted+"@", 1)
}

// redactQuery replaces the values of credential-like parameters in a raw
// query, keeping everything else as it was written.
func redactQuery(raw string) (string, bool) {
	if raw == "" {
		return raw, false
	}
	parts := strings.Split(raw, "&")
	changed := false
	for i, p := range parts {
		name, value, has := strings.Cut(p, "=")
		if !has || value == "" {
			continue
		}
		if n, err := url.QueryUnescape(name); err == nil {
			name = n
		}
		if SecretParam(name) {
			parts[i] = p[:strings.IndexByte(p, '=')+1] + Redacted
			changed = true
		}
	}
	return strings.Join(parts, "&"), changed
}

// secretWords are what a query parameter holding a credential is called
// (api_key, apikey, access_token, x-amz-signature, password, sslpassword…).
var secretWords = []string{"key", "token", "secret", "password", "passwd", "pwd", "sig", "auth", "credential", "session"}

// SecretParam reports whether a query parameter's name suggests that its
// value is a credential.
func SecretParam(name string) bool {
	name = strings.ToLower(name)
	for _, w := range secretWords {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// redactAuthority hides user information in a string url.Parse refused.
func redactAuthority(s string) string {
	start := strings.Index(s, "://")
	if start < 0 {
		return s
	}
	start += 3
	end := len(s)
	if i := strings.IndexAny(s[start:], "/?#"); i >= 0 {
		end = start + i
	}
	at := strings.LastIndexByte(s[start:end], '@')
	if at < 0 {
		return s
	}
	user, _, hasPass := strings.Cut(s[start:start+at], ":")
	if !hasPass {
		return s
	}
	return s[:start] + user + ":" + Redacted + s[start+at:]
}

// CheckURL checks an http(s) URL setting as base_url is checked, for the
// provider types' own URL options.
func CheckURL(s string) error { return checkBaseURL(s) }
