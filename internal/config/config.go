// Package config loads and validates tollgate's YAML configuration.
//
// Loading is three steps: parse the YAML into a node tree, expand ${ENV}
// references in scalar values (never in comments or keys), reject keys that
// no field declares, then decode into plain structs and validate them. Every
// error names the field path it is about, e.g. "providers[1].timeouts.idle".
package config

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"go.yaml.in/yaml/v3"
)

// Provider types understood by tollgate.
const (
	TypeOpenAI    = "openai"    // any OpenAI-compatible Chat Completions API
	TypeAnthropic = "anthropic" // the Anthropic Messages API
	TypeEcho      = "echo"      // built in: answers with the last user message
)

// Defaults applied by Load and Default.
const (
	DefaultAddr         = "127.0.0.1:8080"
	DefaultMaxBodyBytes = 32 << 20
	DefaultDrainTimeout = 30 * time.Second

	DefaultConnectTimeout   = 10 * time.Second
	DefaultFirstByteTimeout = 10 * time.Minute // non-streaming answers arrive only when generation ends
	DefaultIdleTimeout      = 5 * time.Minute
)

// Config is the whole configuration. It is immutable once loaded.
type Config struct {
	Server    Server     `yaml:"server"`
	Auth      Auth       `yaml:"auth"`
	Providers []Provider `yaml:"providers"`
	Models    []Model    `yaml:"models"`
}

// Server holds listener and request-size settings.
type Server struct {
	// Addr is the HOST:PORT to listen on.
	Addr string `yaml:"addr"`
	// MaxBodyBytes caps request bodies; larger ones get 413.
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// DrainTimeout is how long in-flight requests (streams included) may run
	// after SIGINT/SIGTERM before connections are closed.
	DrainTimeout time.Duration `yaml:"drain_timeout"`
	// LogFormat is "json" (default) or "text".
	LogFormat string `yaml:"log_format"`
}

// Auth holds gateway credentials.
type Auth struct {
	// MasterKey is valid on the data plane and (later) the admin API.
	MasterKey string `yaml:"master_key"`
}

// Provider is one configured upstream.
type Provider struct {
	Name     string   `yaml:"name"`
	Type     string   `yaml:"type"`
	BaseURL  string   `yaml:"base_url"`
	APIKey   string   `yaml:"api_key"`
	Timeouts Timeouts `yaml:"timeouts"`
}

// Timeouts are per-phase upstream timeouts. Zero means the default; a
// negative Total is rejected. Total is off by default so long streams live.
type Timeouts struct {
	// Connect bounds dialling (TCP and TLS).
	Connect time.Duration `yaml:"connect"`
	// FirstByte bounds the wait for response headers after the request is sent.
	FirstByte time.Duration `yaml:"first_byte"`
	// Idle bounds the silence between two reads of a response body.
	Idle time.Duration `yaml:"idle"`
	// Total bounds the whole upstream exchange; 0 means no limit.
	Total time.Duration `yaml:"total"`
}

// Model is a public model name clients send, with its targets.
type Model struct {
	Name    string   `yaml:"name"`
	Aliases []string `yaml:"aliases"`
	Targets []Target `yaml:"targets"`
}

// Target is a (provider, upstream model) pair.
type Target struct {
	Provider string `yaml:"provider"`
	// Model is the id sent upstream; optional for echo providers.
	Model string `yaml:"model"`
}

// Default is the zero-config configuration: the echo provider and a model
// named "echo".
func Default() *Config {
	c := &Config{
		Providers: []Provider{{Name: "echo", Type: TypeEcho}},
		Models:    []Model{{Name: "echo", Targets: []Target{{Provider: "echo"}}}},
	}
	c.applyDefaults()
	return c
}

// Load reads, interpolates, decodes and validates the file at path.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c, err := Parse(data, os.LookupEnv)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Parse decodes and validates YAML text; lookup resolves ${ENV} references.
func Parse(data []byte, lookup func(string) (string, bool)) (*Config, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, errEOF) {
			return nil, errors.New("empty configuration")
		}
		return nil, fmt.Errorf("parsing YAML: %w", err)
	}
	if err := interpolateNode(&root, "", lookup); err != nil {
		return nil, err
	}
	if err := checkKnownFields(&root, configType); err != nil {
		return nil, err
	}
	c := new(Config)
	if err := root.Decode(c); err != nil {
		return nil, fmt.Errorf("decoding: %w", err)
	}
	c.applyDefaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Config) applyDefaults() {
	if c.Server.Addr == "" {
		c.Server.Addr = DefaultAddr
	}
	if c.Server.MaxBodyBytes == 0 {
		c.Server.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.Server.DrainTimeout == 0 {
		c.Server.DrainTimeout = DefaultDrainTimeout
	}
	if c.Server.LogFormat == "" {
		c.Server.LogFormat = "json"
	}
	for i := range c.Providers {
		p := &c.Providers[i]
		if p.BaseURL == "" {
			switch p.Type {
			case TypeAnthropic:
				p.BaseURL = "https://api.anthropic.com"
			case TypeOpenAI:
				p.BaseURL = "https://api.openai.com/v1"
			}
		}
		t := &p.Timeouts
		if t.Connect == 0 {
			t.Connect = DefaultConnectTimeout
		}
		if t.FirstByte == 0 {
			t.FirstByte = DefaultFirstByteTimeout
		}
		if t.Idle == 0 {
			t.Idle = DefaultIdleTimeout
		}
	}
}

// Validate checks cross-field rules. Errors name the field path.
func (c *Config) Validate() error {
	var errs []error
	bad := func(path, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", path, fmt.Sprintf(format, args...)))
	}
	if _, _, err := net.SplitHostPort(c.Server.Addr); err != nil {
		bad("server.addr", "%q is not HOST:PORT", c.Server.Addr)
	}
	if c.Server.MaxBodyBytes < 0 {
		bad("server.max_body_bytes", "must be positive")
	}
	if c.Server.DrainTimeout < 0 {
		bad("server.drain_timeout", "must not be negative")
	}
	if f := c.Server.LogFormat; f != "json" && f != "text" {
		bad("server.log_format", "must be json or text, not %q", f)
	}
	providers := make(map[string]*Provider, len(c.Providers))
	for i := range c.Providers {
		p := &c.Providers[i]
		path := fmt.Sprintf("providers[%d]", i)
		switch {
		case p.Name == "":
			bad(path+".name", "is required")
		case providers[p.Name] != nil:
			bad(path+".name", "duplicate provider name %q", p.Name)
		default:
			providers[p.Name] = p
		}
		switch p.Type {
		case TypeOpenAI, TypeAnthropic:
			if err := checkBaseURL(p.BaseURL); err != nil {
				bad(path+".base_url", "%v", err)
			}
		case TypeEcho:
		case "":
			bad(path+".type", "is required (openai, anthropic or echo)")
		default:
			bad(path+".type", "unknown provider type %q (want openai, anthropic or echo)", p.Type)
		}
		for name, d := range map[string]time.Duration{
			"connect": p.Timeouts.Connect, "first_byte": p.Timeouts.FirstByte,
			"idle": p.Timeouts.Idle, "total": p.Timeouts.Total,
		} {
			if d < 0 {
				bad(path+".timeouts."+name, "must not be negative")
			}
		}
	}
	names := make(map[string]string) // public name → path that declared it
	claim := func(name, path string) {
		if name == "" {
			bad(path, "must not be empty")
			return
		}
		if prev, ok := names[name]; ok {
			bad(path, "%q is already declared at %s", name, prev)
			return
		}
		names[name] = path
	}
	if len(c.Models) == 0 {
		bad("models", "at least one model is required")
	}
	for i, m := range c.Models {
		path := fmt.Sprintf("models[%d]", i)
		claim(m.Name, path+".name")
		for j, a := range m.Aliases {
			claim(a, fmt.Sprintf("%s.aliases[%d]", path, j))
		}
		if len(m.Targets) == 0 {
			bad(path+".targets", "at least one target is required")
		}
		for j, t := range m.Targets {
			tpath := fmt.Sprintf("%s.targets[%d]", path, j)
			p := providers[t.Provider]
			switch {
			case t.Provider == "":
				bad(tpath+".provider", "is required")
			case p == nil:
				bad(tpath+".provider", "unknown provider %q", t.Provider)
			case p.Type != TypeEcho && t.Model == "":
				bad(tpath+".model", "is required for %s provider %q", p.Type, p.Name)
			}
		}
	}
	return errors.Join(errs...)
}

// ProviderByName returns the named provider, or nil.
func (c *Config) ProviderByName(name string) *Provider {
	for i := range c.Providers {
		if c.Providers[i].Name == name {
			return &c.Providers[i]
		}
	}
	return nil
}
