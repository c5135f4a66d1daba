package auth

import (
	"errors"
	"net/http"
	"strings"
	"testing"
)

// A protocol's own places: its key header, its query parameter, and
// Authorization: Bearer, exactly one of them.
func TestCheckFromPlaces(t *testing.T) {
	a := New("sk-master", nil)
	gemini := Places{Headers: []string{"X-Goog-Api-Key"}, Query: "key"}
	tests := []struct {
		name    string
		query   string
		headers map[string]string
		wantErr error
		reason  string
	}{
		{"header", "", map[string]string{"X-Goog-Api-Key": "sk-master"}, nil, ""},
		{"query", "key=sk-master", nil, nil, ""},
		{"query among others", "alt=sse&key=sk-master", nil, nil, ""},
		{"bearer", "", map[string]string{"Authorization": "Bearer sk-master"}, nil, ""},
		{"another protocol's header is not read", "", map[string]string{"X-Api-Key": "sk-master"}, ErrMissingKey, "missing"},
		{"header and query", "key=sk-master", map[string]string{"X-Goog-Api-Key": "sk-master"}, ErrBothKeys, "both_keys"},
		{"query and bearer", "key=sk-master", map[string]string{"Authorization": "Bearer sk-master"}, ErrBothKeys, "both_keys"},
		{"query twice", "key=sk-master&key=sk-master", nil, ErrDuplicateKey, "duplicate_key"},
		{"empty query", "key=", nil, ErrMissingKey, "missing"},
		{"wrong", "key=sk-other", nil, ErrInvalidKey, "unknown_key"},
	}
	for _, tc := range tests {
		r, _ := http.NewRequest("POST", "/v1beta/models/g:generateContent?"+tc.query, nil)
		for k, v := range tc.headers {
			r.Header.Set(k, v)
		}
		p, err := a.CheckFrom(r, gemini)
		if !errors.Is(err, tc.wantErr) || Reason(err) != tc.reason {
			t.Errorf("%s: error %v (%s), want %v (%s)", tc.name, err, Reason(err), tc.wantErr, tc.reason)
			continue
		}
		if err == nil && !p.Master {
			t.Errorf("%s: not the master key", tc.name)
		}
	}
	// The refusals name the protocol's places, not another's.
	r, _ := http.NewRequest("POST", "/", nil)
	_, err := a.CheckFrom(r, gemini)
	if msg := err.Error(); !strings.Contains(msg, "x-goog-api-key") || !strings.Contains(msg, "key query parameter") || strings.Contains(msg, "x-api-key") {
		t.Errorf("missing: %q", msg)
	}
	// The default places are x-api-key and Bearer.
	r.Header.Set("X-Goog-Api-Key", "sk-master")
	if _, err := a.Check(r); !errors.Is(err, ErrMissingKey) {
		t.Errorf("x-goog-api-key read without being one of the places: %v", err)
	}
}
