package auth

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestCheck(t *testing.T) {
	a := New("sk-master", nil)
	tests := []struct {
		name    string
		headers map[string]string
		wantErr error
	}{
		{"x-api-key", map[string]string{"X-Api-Key": "sk-master"}, nil},
		{"bearer", map[string]string{"Authorization": "Bearer sk-master"}, nil},
		{"bearer lower-case scheme", map[string]string{"Authorization": "bearer sk-master"}, nil},
		{"both, even equal", map[string]string{"X-Api-Key": "sk-master", "Authorization": "Bearer sk-master"}, ErrBothKeys},
		{"none", nil, ErrMissingKey},
		{"wrong", map[string]string{"X-Api-Key": "sk-other"}, ErrInvalidKey},
		{"prefix of the key", map[string]string{"X-Api-Key": "sk-maste"}, ErrInvalidKey},
		{"basic scheme", map[string]string{"Authorization": "Basic c2s6"}, ErrMalformedAuth},
		{"bearer without token", map[string]string{"Authorization": "Bearer "}, ErrMalformedAuth},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := http.NewRequest("GET", "/", nil)
			for k, v := range tc.headers {
				r.Header.Set(k, v)
			}
			p, err := a.Check(r)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Check error = %v, want %v", err, tc.wantErr)
			}
			if err == nil && !p.Master {
				t.Errorf("master key not recognised as master")
			}
		})
	}
}

// Two x-api-key or two Authorization headers are refused like both
// headers are: the first one no longer wins.
func TestDuplicateHeaders(t *testing.T) {
	a := New("sk-master", nil)
	for _, tc := range []struct {
		name   string
		header http.Header
	}{
		{"two x-api-key", http.Header{"X-Api-Key": {"sk-master", "sk-other"}}},
		{"two x-api-key, equal", http.Header{"X-Api-Key": {"sk-master", "sk-master"}}},
		{"two authorization", http.Header{"Authorization": {"Bearer sk-master", "Bearer sk-other"}}},
		{"two authorization, the first empty", http.Header{"Authorization": {"", "Bearer sk-master"}}},
	} {
		r, _ := http.NewRequest("GET", "/", nil)
		r.Header = tc.header
		_, err := a.Check(r)
		if !errors.Is(err, ErrDuplicateKey) || !errors.Is(err, ErrBothKeys) || Status(err) != http.StatusBadRequest ||
			!strings.Contains(err.Error(), "more than one") || Reason(err) != "duplicate_key" {
			t.Errorf("%s: %v (status %d, reason %q)", tc.name, err, Status(err), Reason(err))
		}
	}
}

// Revoked, expired and unknown keys read the same to the client; only
// Reason, for the log and ledger, tells them apart.
func TestInvalidKeysLookAlike(t *testing.T) {
	for _, tc := range []struct {
		err    error
		reason string
	}{{ErrInvalidKey, "unknown_key"}, {ErrRevokedKey, "revoked"}, {ErrExpiredKey, "expired"}} {
		if tc.err.Error() != "invalid API key" || !errors.Is(tc.err, ErrInvalidKey) || Status(tc.err) != http.StatusUnauthorized {
			t.Errorf("%s: %q, status %d", tc.reason, tc.err, Status(tc.err))
		}
		if got := Reason(fmt.Errorf("wrapped: %w", tc.err)); got != tc.reason {
			t.Errorf("Reason = %q, want %q", got, tc.reason)
		}
	}
	if errors.Is(ErrInvalidKey, ErrRevokedKey) || errors.Is(ErrExpiredKey, ErrRevokedKey) {
		t.Error("the reasons must stay distinct")
	}
	for err, want := range map[error]int{ErrMissingKey: 401, ErrMalformedAuth: 401, ErrBothKeys: 400,
		ErrUnavailable: 503, &ThrottledError{RetryAfter: time.Second}: 429} {
		if Status(err) != want {
			t.Errorf("Status(%v) = %d, want %d", err, Status(err), want)
		}
	}
}
