package oidc

import (
	"strings"
	"testing"
	"time"
)

func TestConfigValidate(t *testing.T) {
	ok := Config{Issuer: "https://idp.example.com", ClientID: "c"}
	tests := []struct {
		name    string
		edit    func(*Config)
		wantErr string // "" means valid
	}{
		{"minimal", func(*Config) {}, ""},
		{"every allowed algorithm", func(c *Config) {
			c.Algorithms = []string{"RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256", "PS384", "PS512", "EdDSA"}
		}, ""},
		{"no issuer", func(c *Config) { c.Issuer = "" }, "issuer is required"},
		{"issuer not a URL", func(c *Config) { c.Issuer = "idp.example.com" }, "not an http(s) URL"},
		{"issuer with a query", func(c *Config) { c.Issuer = "https://idp.example.com/?tenant=1" }, "query"},
		{"no client id", func(c *Config) { c.ClientID = "" }, "client_id is required"},
		{"alg none", func(c *Config) { c.Algorithms = []string{"RS256", "none"} }, `"none" is never accepted`},
		{"alg None", func(c *Config) { c.Algorithms = []string{"None"} }, `"none" is never accepted`},
		{"HS256", func(c *Config) { c.Algorithms = []string{"HS256"} }, "symmetric"},
		{"hs512", func(c *Config) { c.Algorithms = []string{"hs512"} }, "symmetric"},
		{"unknown alg", func(c *Config) { c.Algorithms = []string{"RS1"} }, "not supported"},
		{"empty audience", func(c *Config) { c.Audiences = []string{""} }, "empty string"},
		{"negative leeway", func(c *Config) { c.Leeway = -time.Second }, "leeway"},
		{"pointer to nothing", func(c *Config) { c.UserClaim = "/" }, "names no claim"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.edit(&c)
			err := c.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				if _, err := New(c); err != nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate = %v, want an error containing %q", err, tt.wantErr)
			}
			if _, err := New(c); err == nil {
				t.Fatal("New accepted the config Validate refused")
			}
		})
	}
}

func TestNewDoesNotFetch(t *testing.T) {
	arrived := make(chan struct{}, 1)
	srv := newHangingServer(t, arrived)
	if _, err := New(Config{Issuer: srv.URL, ClientID: "c"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-arrived:
		t.Fatal("New contacted the IdP")
	default:
	}
}
