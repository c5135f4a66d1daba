package auth

import (
	"errors"
	"net/http"
	"testing"
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
