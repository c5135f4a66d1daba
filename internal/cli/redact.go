package cli

import (
	"cmp"
	"context"
	"log/slog"
	"net/url"
	"slices"
	"strings"

	"github.com/tollgate/tollgate/internal/config"
)

// minSecretLen is the shortest credential replaced wherever it appears in
// output; shorter ones would blank out ordinary words. They are still
// hidden where they appear as part of their URL.
const minSecretLen = 8

// secretReplacer replaces, in any text, the configured URLs that carry a
// secret with their redacted form, and every configured credential (API
// keys, the master key, URL passwords and key-like query values) with
// ****. It is nil when there is nothing to hide.
func secretReplacer(cfg *config.Config) *strings.Replacer {
	urls := []string{cfg.Database.URL, cfg.Redis.URL, cfg.Tracing.OTLPEndpoint, cfg.Metrics.Addr}
	secrets := []string{cfg.Auth.MasterKey}
	for _, p := range cfg.Providers {
		urls = append(urls, p.BaseURL)
		secrets = append(secrets, p.APIKey)
		secrets = append(secrets, p.APIKeys...)
	}
	var pairs []string
	for _, u := range urls {
		if r := config.RedactURL(u); r != u {
			pairs = append(pairs, u, r)
			secrets = append(secrets, urlSecrets(u)...)
		}
	}
	var long []string
	for _, s := range secrets {
		if len(s) >= minSecretLen && !slices.Contains(long, s) {
			long = append(long, s)
		}
	}
	// Longest first, so that a secret containing another is replaced whole.
	slices.SortFunc(long, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	for _, s := range long {
		pairs = append(pairs, s, config.Redacted)
	}
	if len(pairs) == 0 {
		return nil
	}
	return strings.NewReplacer(pairs...)
}

// urlSecrets are the password and key-like query values of a URL, as
// written and decoded.
func urlSecrets(s string) []string {
	u, err := url.Parse(s)
	if err != nil {
		return nil
	}
	var out []string
	if p, ok := u.User.Password(); ok {
		out = append(out, p, url.PathEscape(p), url.QueryEscape(p))
	}
	for name, vs := range u.Query() {
		if config.SecretParam(name) {
			for _, v := range vs {
				out = append(out, v, url.QueryEscape(v))
			}
		}
	}
	return out
}

// scrubbed is an error whose text had the configured secrets replaced; it
// unwraps to the original for errors.Is.
type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }

// scrubError hides the configured secrets in err's text.
func scrubError(r *strings.Replacer, err error) error {
	if err == nil || r == nil {
		return err
	}
	msg := err.Error()
	if m := r.Replace(msg); m != msg {
		return &scrubbed{msg: m, err: err}
	}
	return err
}

// redactHandler hides the configured secrets in log records of level
// Warn and above: errors from upstreams, databases and Redis may quote a
// URL. Info records (a line per request) pass untouched, at no cost.
type redactHandler struct {
	next slog.Handler
	r    *strings.Replacer
}

// redactLogs wraps h, or returns it as it is when nothing is secret.
func redactLogs(h slog.Handler, r *strings.Replacer) slog.Handler {
	if r == nil {
		return h
	}
	return &redactHandler{next: h, r: r}
}

func (h *redactHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

func (h *redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	if rec.Level < slog.LevelWarn {
		return h.next.Handle(ctx, rec)
	}
	out := slog.NewRecord(rec.Time, rec.Level, h.r.Replace(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

// WithAttrs scrubs attributes bound to the logger whatever the level
// they are later logged at: they are few and bound once.
func (h *redactHandler) WithAttrs(as []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(as))
	for i, a := range as {
		clean[i] = h.attr(a)
	}
	return &redactHandler{next: h.next.WithAttrs(clean), r: h.r}
}

func (h *redactHandler) WithGroup(name string) slog.Handler {
	return &redactHandler{next: h.next.WithGroup(name), r: h.r}
}

func (h *redactHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.r.Replace(v.String()))
	case slog.KindGroup:
		g := v.Group()
		clean := make([]any, len(g))
		for i, ga := range g {
			clean[i] = h.attr(ga)
		}
		return slog.Group(a.Key, clean...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.Any(a.Key, scrubError(h.r, x))
		case interface{ String() string }:
			return slog.String(a.Key, h.r.Replace(x.String()))
		}
	}
	return a
}
