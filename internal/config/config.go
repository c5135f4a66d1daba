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
	"maps"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/tollgate/tollgate/internal/accesslog"
	"github.com/tollgate/tollgate/internal/caps"
	"github.com/tollgate/tollgate/internal/promptcache"
	"github.com/tollgate/tollgate/internal/units"
)

// TypeEcho is the built-in provider type that answers with the last user
// message: what the zero configuration serves.
const TypeEcho = "echo"

// Defaults applied by Load and Default.
const (
	DefaultAddr         = "127.0.0.1:8080"
	DefaultMaxBodyBytes = 32 << 20
	DefaultDrainTimeout = 30 * time.Second

	// A client has this long to send a request's headers, and this long
	// for its headers and body together; a connection waiting for its
	// next request is closed after DefaultServerIdleTimeout.
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 60 * time.Second
	DefaultServerIdleTimeout = 120 * time.Second
	// DefaultMaxHeaderBytes caps a request's headers (request line included).
	DefaultMaxHeaderBytes = 64 << 10

	// Failed authentications: after DefaultMaxFailures within
	// DefaultFailureWindow a client address is refused for the window.
	DefaultMaxFailures   = 20
	DefaultFailureWindow = time.Minute

	DefaultConnectTimeout   = 10 * time.Second
	DefaultFirstByteTimeout = 10 * time.Minute // non-streaming answers arrive only when generation ends
	DefaultIdleTimeout      = 5 * time.Minute

	// DefaultResponseRetention keeps stored responses for 30 days, as
	// OpenAI does.
	DefaultResponseRetention = 30 * 24 * time.Hour
)

// Config is the whole configuration. It is immutable once loaded.
type Config struct {
	Server    Server     `yaml:"server"`
	Auth      Auth       `yaml:"auth"`
	Database  Database   `yaml:"database"`
	Providers []Provider `yaml:"providers"`
	Models    []Model    `yaml:"models"`
	Limits    Limits     `yaml:"limits"`
	Redis     Redis      `yaml:"redis"`
	Tracing   Tracing    `yaml:"tracing"`
	Metrics   Metrics    `yaml:"metrics"`
	Logging   Logging    `yaml:"logging"`
	Pricing   PriceFiles `yaml:"pricing"`
	Console   Console    `yaml:"console"`
	Identity  Identity   `yaml:"identity"`
}

// Console configures the operator console at /console/.
type Console struct {
	// SecureCookie is when the sign-in cookie is marked Secure (sent over
	// HTTPS only): auto (the default) when the request came over TLS, or
	// through a proxy of auth.trusted_proxies that says
	// X-Forwarded-Proto: https; always, for a console reached only
	// through a TLS-terminating proxy; never.
	SecureCookie string `yaml:"secure_cookie"`
}

// Console.SecureCookie values.
const (
	SecureCookieAuto   = "auto"
	SecureCookieAlways = "always"
	SecureCookieNever  = "never"
)

// PriceFiles adds prices for the models whose configuration has none.
type PriceFiles struct {
	// Files are price files in LiteLLM's model_prices_and_context_window.json
	// format, read at start and on reload. A model is priced by its own
	// pricing, else by the first file that lists its upstream id, else by
	// the built-in catalogue.
	Files []string `yaml:"files"`
}

// Metrics configures where the Prometheus metrics are served and who may
// read them: they name every model and target.
type Metrics struct {
	// Addr is a HOST:PORT of their own for GET /metrics; empty serves them
	// on server.addr.
	Addr string `yaml:"addr"`
	// Auth is master_key (the default: the master key in x-api-key or
	// Authorization: Bearer, as Prometheus's authorization setting sends
	// it) or none (no key, for a listener only the scraper can reach).
	Auth string `yaml:"auth"`
	// Pprof serves Go's runtime profiles (heap, goroutines, CPU) under
	// /debug/pprof/ next to /metrics, with the same auth: off by default,
	// as a profile shows what the process is doing.
	Pprof bool `yaml:"pprof"`
}

// Provider.HTTPClient values.
const (
	HTTPClientLean = "lean"
	HTTPClientStd  = "net/http"
)

// Metrics.Auth values.
const (
	MetricsAuthMasterKey = "master_key"
	MetricsAuthNone      = "none"
)

// Logging configures the request log: the one line each request ends
// with (server.log_format sets its format).
type Logging struct {
	// Access is which requests get a line: on (the default), off, errors
	// (failed requests only), or sample(N) (failed requests and one in
	// every N of the others). The usage ledger and the metrics record
	// every request whatever it is. A reload applies it.
	Access string `yaml:"access"`
}

// Tracing configures OpenTelemetry spans, exported over OTLP/HTTP; off
// without an endpoint.
type Tracing struct {
	// OTLPEndpoint is the collector, such as http://otel-collector:4318.
	OTLPEndpoint string `yaml:"otlp_endpoint"`
	// ServiceName is the spans' service.name (default tollgate).
	ServiceName string `yaml:"service_name"`
	// SampleRatio is the share of traces kept, 0 to 1 (default 1).
	SampleRatio *float64 `yaml:"sample_ratio"`
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
	// TargetHeader and OverheadHeader add tollgate-target and
	// tollgate-overhead-ms to upstream answers (default true).
	TargetHeader   *bool `yaml:"target_header"`
	OverheadHeader *bool `yaml:"overhead_header"`
	// ReadHeaderTimeout bounds the reading of a request's headers, and
	// ReadTimeout the reading of its headers and body together, so that
	// slow clients cannot hold connections open (default 10s and 60s).
	ReadHeaderTimeout time.Duration `yaml:"read_header_timeout"`
	ReadTimeout       time.Duration `yaml:"read_timeout"`
	// IdleTimeout closes a kept-alive connection waiting for its next
	// request (default 120s).
	IdleTimeout time.Duration `yaml:"idle_timeout"`
	// MaxHeaderBytes caps a request's headers; larger ones get 431
	// (default 64 KiB).
	MaxHeaderBytes int `yaml:"max_header_bytes"`
	// H2C also serves HTTP/2 without TLS (prior knowledge) on addr, for a
	// proxy or load balancer in front that speaks it to its backends;
	// HTTP/1.1 clients are served as before.
	H2C bool `yaml:"h2c"`
}

// Database is where keys and the usage ledger live.
type Database struct {
	// URL is sqlite://PATH (the embedded default), postgres://… or none.
	URL string `yaml:"url"`
	// SpillPath is where usage records wait while the database is
	// unreachable and memory is full; they are written back when it returns.
	SpillPath string `yaml:"spill_path"`
	// LedgerSync ends a request only once its usage record is committed
	// (or synced to the spill file), so that a killed process loses no
	// completed request; without it the records of the last half second
	// or so, still in memory, are lost to kill -9.
	LedgerSync bool `yaml:"ledger_sync"`
	// ResponseRetention is how long responses stored for Responses API
	// clients (store: true) are kept: previous_response_id and
	// GET /v1/responses/{id} find them until then.
	ResponseRetention time.Duration `yaml:"response_retention"`
	// LedgerRetention is how long the usage ledger's detail records (one
	// per request: what /admin/requests lists) are kept; 0, the default,
	// keeps them forever. The gateway deletes older ones in small batches,
	// hourly. The hourly usage roll-ups are kept: usage and budgets over
	// whole hours stay exact, and a usage window that starts or ends
	// inside an hour older than the retention misses that hour's part, so
	// usage older than the retention is exact to the hour. At least 24h,
	// so that a slip (90m for 90 days) cannot delete the whole ledger.
	LedgerRetention time.Duration `yaml:"ledger_retention"`
}

// MinLedgerRetention is the shortest database.ledger_retention.
const MinLedgerRetention = 24 * time.Hour

// NoDatabase as database.url runs without one: the master key only, no
// usage ledger and no admin API.
const NoDatabase = "none"

// DefaultDatabaseURL is the embedded SQLite file in the working directory.
const DefaultDatabaseURL = "sqlite://tollgate.db"

// Auth holds gateway credentials and how failed authentications are
// throttled.
type Auth struct {
	// MasterKey is valid on the data plane and the admin API; at least
	// MinMasterKeyLen characters.
	MasterKey string `yaml:"master_key"`
	// MaxFailures failed authentications of one key from one client
	// address within FailureWindow get that key refused (429) from that
	// address for FailureWindow; as many failures of any keys from one
	// address slow it to MaxFailures checks a FailureWindow of keys not
	// known valid, while valid keys from it keep working (default 20 in
	// 1m; auth.Throttle); 0 turns the throttle off.
	MaxFailures   *int          `yaml:"max_failures"`
	FailureWindow time.Duration `yaml:"failure_window"`
	// TrustedProxies are the addresses or CIDR ranges of reverse proxies
	// whose X-Forwarded-For names the client. Without them the client is
	// the connection's peer address, and X-Forwarded-For is ignored.
	TrustedProxies []string `yaml:"trusted_proxies"`
}

// MinMasterKeyLen is the shortest master key accepted.
const MinMasterKeyLen = 32

// CheckMasterKey refuses a master key that is too short to resist
// guessing, or that white space around it would make impossible to send.
func CheckMasterKey(key string) error {
	if n := utf8.RuneCountInString(key); n < MinMasterKeyLen {
		return fmt.Errorf("is %d characters long; at least %d are required (generate one with: openssl rand -hex 32)", n, MinMasterKeyLen)
	}
	if strings.TrimFunc(key, unicode.IsSpace) != key {
		return errors.New("must not begin or end with white space")
	}
	return nil
}

// Failures is the effective MaxFailures.
func (a Auth) Failures() int {
	if a.MaxFailures == nil {
		return DefaultMaxFailures
	}
	return *a.MaxFailures
}

// Proxies parses TrustedProxies (validated by Load): single addresses
// become one-address prefixes.
func (a Auth) Proxies() []netip.Prefix {
	out := make([]netip.Prefix, 0, len(a.TrustedProxies))
	for _, s := range a.TrustedProxies {
		if p, err := parsePrefix(s); err == nil {
			out = append(out, p)
		}
	}
	return out
}

func parsePrefix(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		return p.Masked(), err
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// Provider is one configured upstream.
type Provider struct {
	Name    string `yaml:"name"`
	Type    string `yaml:"type"`
	BaseURL string `yaml:"base_url"`
	APIKey  string `yaml:"api_key"`
	// APIKeys is a pool of credentials used in turn; a key answered with
	// 429 rests for its retry-after (30 s without one). Instead of api_key.
	APIKeys  []string `yaml:"api_keys"`
	Timeouts Timeouts `yaml:"timeouts"`
	// HTTPClient is the client of http:// upstreams: lean (the default),
	// an HTTP/1.1 client with no goroutine of its own per connection, or
	// net/http, Go's standard one. https:// upstreams always use Go's,
	// which speaks HTTP/2 to them.
	HTTPClient string `yaml:"http_client"`
	// Breaker opens a target's circuit when it keeps failing.
	Breaker Breaker `yaml:"breaker"`
	// AnthropicBetas lists the anthropic-beta features clients may turn
	// on with this provider's account; unset forwards every one, [] none.
	AnthropicBetas BetaList `yaml:"anthropic_betas"`
	// ForwardUnknownResponseIDs sends a previous_response_id the gateway
	// never stored on to this provider's upstream, a Responses API, which
	// may know it (responses made without the gateway). Off, such an id is
	// answered 404 like another key's: every key shares the upstream's
	// account, so an id is only forwarded for the key that made it. Turn
	// it on only when the account is one client's.
	ForwardUnknownResponseIDs bool `yaml:"forward_unknown_response_ids"`
	// Endpoints are more of OpenAI's endpoints the upstream serves than
	// its type's own ("/v1/rerank" on a vLLM, Jina or Cohere-compatible
	// server); the type says which it may be given.
	Endpoints []string `yaml:"endpoints"`
	// The cloud options: each provider type takes the ones it lists
	// (ProviderType.Options) and refuses the others.
	CloudOptions `yaml:",inline"`
}

// CloudOptions are the settings of the cloud provider types.
type CloudOptions struct {
	// Region is the cloud region (bedrock: us-east-1; vertex: us-east5 or global).
	Region string `yaml:"region"`
	// AccessKeyID, SecretAccessKey and SessionToken are static AWS
	// credentials; without them the standard chain is used (environment,
	// shared profile, container or instance role).
	AccessKeyID     string `yaml:"access_key_id"`
	SecretAccessKey string `yaml:"secret_access_key"`
	SessionToken    string `yaml:"session_token"`
	// Profile is a shared AWS config profile.
	Profile string `yaml:"profile"`
	// Endpoint replaces the API's regional URL (VPC endpoints, proxies, tests).
	Endpoint string `yaml:"endpoint"`
	// Project is the Google Cloud project (vertex).
	Project string `yaml:"project"`
	// CredentialsFile is a Google service-account or ADC JSON file (vertex).
	CredentialsFile string `yaml:"credentials_file"`
	// APIVersion is an Azure OpenAI api-version (deployment URLs).
	APIVersion string `yaml:"api_version"`
	// EntraToken is a Microsoft Entra ID bearer token (azure-openai), instead of api_key.
	EntraToken string `yaml:"entra_token"`
}

// set lists the cloud options given, by YAML name.
func (o CloudOptions) set() []string {
	var out []string
	for name, v := range map[string]string{
		"region": o.Region, "access_key_id": o.AccessKeyID, "secret_access_key": o.SecretAccessKey,
		"session_token": o.SessionToken, "profile": o.Profile, "endpoint": o.Endpoint, "project": o.Project,
		"credentials_file": o.CredentialsFile, "api_version": o.APIVersion, "entra_token": o.EntraToken,
	} {
		if v != "" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Breaker tunes the circuit breaker of each of a provider's targets;
// zero fields take the defaults (5 failures in a row, or half of at least
// 20 requests in 60 s; 30 s open before a probe).
type Breaker struct {
	Failures  int           `yaml:"failures"`
	ErrorRate float64       `yaml:"error_rate"`
	Window    time.Duration `yaml:"window"`
	Cooldown  time.Duration `yaml:"cooldown"`
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
//
// A name or alias with a "*" is a pattern: "*" matches any run of
// characters (none too), so "claude-*" covers claude-opus-4-8 and
// claude-haiku-4-5. A request's model is looked up among the exact names
// and aliases first; failing that, among the patterns that match it, the
// one with the most characters besides "*" wins, and of equally long ones
// the first in the file.
type Model struct {
	Name    string   `yaml:"name"`
	Aliases []string `yaml:"aliases"`
	// Targets serve the model. A target without a model sends, when the
	// request matched a pattern, the model name the client asked for.
	Targets []Target `yaml:"targets"`
	// Translation is what to do with input the other protocol cannot
	// express, when a client of one protocol calls this model through the
	// other: "default" (refuse what would change the answer's meaning,
	// drop and report the rest), "strict" (refuse all) or "lenient" (drop all).
	Translation string `yaml:"translation"`
	// Capabilities describe the model and its upstream for translation.
	Capabilities caps.Caps `yaml:"capabilities"`
	// Pricing overrides the built-in price catalogue for this model.
	Pricing *Pricing `yaml:"pricing"`
	// Limits apply to the model across all keys (the master key too), to
	// protect an upstream's quota.
	Limits LimitValues `yaml:"limits"`
	// Routing bounds retries across the targets.
	Routing Routing `yaml:"routing"`
	// PromptCache is how tollgate helps the upstream's prompt cache:
	// breakpoints for Anthropic upstreams, a prompt_cache_key for OpenAI
	// ones.
	PromptCache promptcache.Settings `yaml:"prompt_cache"`
	// AnthropicBetas lists the anthropic-beta features clients may turn
	// on for this model; unset forwards every one, [] none. A target's
	// provider may narrow it further.
	AnthropicBetas BetaList `yaml:"anthropic_betas"`
}

// Pricing is a model's prices in USD per million tokens per bucket.
type Pricing struct {
	Prices `yaml:",inline"`
	// LongPrompt prices a whole request whose prompt is longer than its
	// threshold; unset buckets keep the base prices.
	LongPrompt *LongPromptPricing `yaml:"long_prompt"`
}

// LongPromptPricing is the price tier for long prompts.
type LongPromptPricing struct {
	ThresholdTokens int64 `yaml:"threshold_tokens"`
	Prices          `yaml:",inline"`
}

// Prices are the per-bucket prices; empty means unpriced.
type Prices struct {
	Input        Decimal `yaml:"input"`
	Output       Decimal `yaml:"output"`
	CacheRead    Decimal `yaml:"cache_read"`
	CacheWrite5m Decimal `yaml:"cache_write_5m"`
	CacheWrite1h Decimal `yaml:"cache_write_1h"`
	// Reasoning prices reasoning tokens; unset, they cost as output.
	Reasoning Decimal `yaml:"reasoning"`
	// PerImage, PerSecond, PerCharacter and PerQuery price what some
	// endpoints bill apart from tokens, in USD per unit: an image made
	// (/v1/images/*), a second of audio (/v1/audio/transcriptions and
	// translations), a character spoken (/v1/audio/speech), a search
	// query (/v1/rerank).
	PerImage     Decimal `yaml:"per_image"`
	PerSecond    Decimal `yaml:"per_second"`
	PerCharacter Decimal `yaml:"per_character"`
	PerQuery     Decimal `yaml:"per_query"`
}

// byName lists the prices under their configuration names.
func (p Prices) byName() map[string]Decimal {
	return map[string]Decimal{"input": p.Input, "output": p.Output, "cache_read": p.CacheRead,
		"cache_write_5m": p.CacheWrite5m, "cache_write_1h": p.CacheWrite1h, "reasoning": p.Reasoning,
		"per_image": p.PerImage, "per_second": p.PerSecond, "per_character": p.PerCharacter, "per_query": p.PerQuery}
}

// Decimal is a price as written: YAML numbers are kept as their text so
// that 0.1 stays exactly 0.1 (never a float).
type Decimal string

// UnmarshalYAML keeps the scalar's text.
func (d *Decimal) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: a price must be a number", n.Line)
	}
	*d = Decimal(n.Value)
	return nil
}

// Target is a (provider, upstream model) pair.
type Target struct {
	Provider string `yaml:"provider"`
	// Model is the id sent upstream; optional for echo providers, and on
	// a model whose name is a pattern (the name the client asked for is
	// sent).
	Model string `yaml:"model"`
	// Weight shares requests among the targets of one priority (default 1).
	Weight int `yaml:"weight"`
	// Priority orders targets: lower first (default 0). A target is tried
	// only when every target of a lower priority failed this request.
	Priority int `yaml:"priority"`
	// Fallback is tried only after every target without it: a priority
	// below all others.
	Fallback bool `yaml:"fallback"`
}

// Routing bounds how a request is retried across a model's targets.
type Routing struct {
	// MaxAttempts is the most upstream attempts per request (default: one
	// per target, at most 3).
	MaxAttempts int `yaml:"max_attempts"`
	// RetryDeadline bounds the time spent retrying: no new attempt starts
	// after it (default 30s).
	RetryDeadline time.Duration `yaml:"retry_deadline"`
	// Sticky keeps a conversation on one target (and one pool key) while
	// it is healthy, so that it finds the prompt cache it wrote (default
	// true); false spreads each request at random by weight.
	Sticky *bool `yaml:"sticky"`
}

// DefaultEchoPatterns are the aliases of the zero configuration's echo
// model: the names Claude Code, Codex CLI, Gemini CLI and the OpenAI and
// Anthropic SDKs send by default (claude-sonnet-4-5, gpt-5-codex,
// gemini-2.5-pro, o3 …), so that each works against it unconfigured.
var DefaultEchoPatterns = []string{"claude-*", "gpt-*", "gemini-*", "o*"}

// Default is the zero-config configuration: the echo provider and a model
// named "echo", which also answers the names of DefaultEchoPatterns.
func Default() *Config {
	c := &Config{
		Providers: []Provider{{Name: "echo", Type: TypeEcho}},
		Models:    []Model{{Name: "echo", Aliases: slices.Clone(DefaultEchoPatterns), Targets: []Target{{Provider: "echo"}}}},
	}
	c.applyDefaults()
	return c
}

// Load reads, interpolates, decodes and validates the file at path.
func Load(path string) (*Config, error) { return load(path, nil) }

// LoadDatabase is Load for the commands that use only the database (keys,
// usage): a ${VAR} that is not set is an error in database and redis, and
// everywhere else leaves its value unset and unchecked, so that the
// upstreams' API keys and the master key need not be in the environment
// of someone creating a virtual key.
func LoadDatabase(path string) (*Config, error) {
	return load(path, func(p string) bool {
		return !strings.HasPrefix(p, "database") && !strings.HasPrefix(p, "redis")
	})
}

func load(path string, keepUnset func(string) bool) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c, err := parse(data, os.LookupEnv, keepUnset)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Parse decodes and validates YAML text; lookup resolves ${ENV} references.
func Parse(data []byte, lookup func(string) (string, bool)) (*Config, error) {
	return parse(data, lookup, nil)
}

func parse(data []byte, lookup func(string) (string, bool), keepUnset func(string) bool) (*Config, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, errEOF) {
			return nil, errors.New("empty configuration")
		}
		return nil, fmt.Errorf("parsing YAML: %w", err)
	}
	// Every unset variable, unknown key and value of the wrong type is
	// reported, with what validation finds in the rest.
	nc := &nodeCheck{skip: map[string]bool{}}
	nc.interpolate(&root, "", lookup, keepUnset)
	nc.check(&root, configType, "")
	c := new(Config)
	if err := root.Decode(c); err != nil {
		return nil, errors.Join(append(nc.errs, fmt.Errorf("decoding: %w", err))...)
	}
	c.applyDefaults()
	if err := c.validate(nc.skip); err != nil || len(nc.errs) > 0 {
		return nil, errors.Join(append(nc.errs, err)...)
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
	if c.Server.ReadHeaderTimeout == 0 {
		c.Server.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if c.Server.ReadTimeout == 0 {
		c.Server.ReadTimeout = DefaultReadTimeout
	}
	if c.Server.IdleTimeout == 0 {
		c.Server.IdleTimeout = DefaultServerIdleTimeout
	}
	if c.Server.MaxHeaderBytes == 0 {
		c.Server.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if c.Auth.FailureWindow == 0 {
		c.Auth.FailureWindow = DefaultFailureWindow
	}
	if c.Database.ResponseRetention == 0 {
		c.Database.ResponseRetention = DefaultResponseRetention
	}
	if c.Metrics.Auth == "" {
		c.Metrics.Auth = MetricsAuthMasterKey
	}
	if c.Database.URL == "" {
		c.Database.URL = DefaultDatabaseURL
	}
	c.applyIdentityDefaults()
	if c.Database.SpillPath == "" {
		c.Database.SpillPath = "tollgate-ledger.spill"
	}
	for i := range c.Providers {
		p := &c.Providers[i]
		if t, ok := LookupProviderType(p.Type); ok && p.BaseURL == "" {
			p.BaseURL = t.DefaultBaseURL
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

// CheckAddr checks a listen address: HOST:PORT with a port number (0 for
// any free port), or :PORT for every interface.
func CheckAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err == nil {
		if _, perr := strconv.ParseUint(port, 10, 16); perr != nil {
			err = errors.New("bad port")
		}
	}
	if err != nil {
		return fmt.Errorf("%q is not HOST:PORT with a port number (e.g. 127.0.0.1:8080, 0.0.0.0:8080 or :8080)", addr)
	}
	return nil
}

// Validate checks cross-field rules. Errors name the field path.
func (c *Config) Validate() error { return c.validate(nil) }

// validate is Validate, saying nothing about the paths in skip (values
// left unset) and below them.
func (c *Config) validate(skip map[string]bool) error {
	var errs []error
	bad := func(path, format string, args ...any) {
		if !skipped(skip, path) {
			errs = append(errs, fmt.Errorf("%s: %s", path, fmt.Sprintf(format, args...)))
		}
	}
	if err := CheckAddr(c.Server.Addr); err != nil {
		bad("server.addr", "%s", err)
	}
	if c.Server.MaxBodyBytes < 0 {
		bad("server.max_body_bytes", "must be positive")
	}
	if c.Server.DrainTimeout < 0 {
		bad("server.drain_timeout", "must not be negative")
	}
	for name, d := range map[string]time.Duration{"read_header_timeout": c.Server.ReadHeaderTimeout,
		"read_timeout": c.Server.ReadTimeout, "idle_timeout": c.Server.IdleTimeout} {
		if d < 0 {
			bad("server."+name, "must not be negative")
		}
	}
	if rh, r := c.Server.ReadHeaderTimeout, c.Server.ReadTimeout; rh > 0 && r > 0 && rh > r {
		bad("server.read_header_timeout", "%s is longer than server.read_timeout (%s), which covers the headers too", rh, r)
	}
	if n := c.Server.MaxHeaderBytes; n < 0 || n > 0 && n < 4<<10 {
		bad("server.max_header_bytes", "must be at least 4096")
	}
	if k := c.Auth.MasterKey; k != "" {
		if err := CheckMasterKey(k); err != nil {
			bad("auth.master_key", "%v", err)
		}
	}
	if c.Auth.Failures() < 0 {
		bad("auth.max_failures", "must not be negative (0 turns the throttle off)")
	}
	if c.Auth.FailureWindow < 0 {
		bad("auth.failure_window", "must not be negative")
	}
	if c.Database.ResponseRetention < 0 {
		bad("database.response_retention", "must not be negative")
	}
	if r := c.Database.LedgerRetention; r < 0 || r > 0 && r < MinLedgerRetention {
		bad("database.ledger_retention", "%s: want 0 (keep every record) or at least 24h, such as 2160h for 90 days", r)
	}
	for i, p := range c.Auth.TrustedProxies {
		if _, err := parsePrefix(p); err != nil {
			bad(fmt.Sprintf("auth.trusted_proxies[%d]", i), "%q is not an IP address or CIDR range", p)
		}
	}
	checkEnum(bad, "metrics.auth", c.Metrics.Auth, MetricsAuthMasterKey, MetricsAuthNone)
	if a := c.Metrics.Addr; a != "" {
		if err := CheckAddr(a); err != nil {
			bad("metrics.addr", "%s", err)
		} else if a == c.Server.Addr {
			bad("metrics.addr", "%q is server.addr; leave metrics.addr empty to serve the metrics there", a)
		}
	}
	if u := c.Database.URL; u != NoDatabase && !strings.HasPrefix(u, "sqlite://") && !strings.HasPrefix(u, "postgres://") && !strings.HasPrefix(u, "postgresql://") {
		bad("database.url", "%q: want sqlite://PATH, postgres://… or none", RedactURL(u))
	}
	if f := c.Server.LogFormat; f != "json" && f != "text" {
		bad("server.log_format", "must be json or text, not %q", f)
	}
	if _, _, err := accesslog.ParseMode(c.Logging.Access); err != nil {
		bad("logging.access", "%s", err)
	}
	switch c.Console.SecureCookie {
	case "", SecureCookieAuto, SecureCookieAlways, SecureCookieNever:
	default:
		bad("console.secure_cookie", "must be auto, always or never, not %q", c.Console.SecureCookie)
	}
	c.validateIdentity(bad)
	for i, f := range c.Pricing.Files {
		if f == "" {
			bad(fmt.Sprintf("pricing.files[%d]", i), "must not be empty")
		}
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
		switch t, ok := LookupProviderType(p.Type); {
		case p.Type == "":
			bad(path+".type", "is required (%s)", providerTypeNames())
		case !ok:
			bad(path+".type", "unknown provider type %q (want %s)", p.Type, providerTypeNames())
		default:
			if t.BaseURL {
				if err := checkBaseURL(p.BaseURL); err != nil {
					bad(path+".base_url", "%v", err)
				}
			} else if p.BaseURL != "" {
				bad(path+".base_url", "is not an option of type %s", p.Type)
			}
			for _, o := range p.CloudOptions.set() {
				if !slices.Contains(t.Options, o) {
					bad(path+"."+o, "is not an option of type %s", p.Type)
				}
			}
			for j, e := range p.Endpoints {
				if !slices.Contains(t.Endpoints, e) {
					if len(t.Endpoints) == 0 {
						bad(fmt.Sprintf("%s.endpoints[%d]", path, j), "is not an option of type %s", p.Type)
					} else {
						bad(fmt.Sprintf("%s.endpoints[%d]", path, j), "%q is not an endpoint type %s may serve (%s)", e, p.Type, strings.Join(t.Endpoints, ", "))
					}
				}
			}
			if p.ForwardUnknownResponseIDs && !t.KeepsResponses {
				bad(path+".forward_unknown_response_ids", "is not an option of type %s: its upstream keeps no responses (only the Responses API types do)", p.Type)
			}
			if t.NoKeys && (p.APIKey != "" || len(p.APIKeys) > 0) {
				bad(path+".api_key", "type %s does not take API keys: it authenticates with the cloud's credentials", p.Type)
			}
			if t.Check != nil {
				t.Check(p, func(member, format string, args ...any) { bad(path+"."+member, format, args...) })
			}
		}
		checkEnum(bad, path+".http_client", p.HTTPClient, HTTPClientLean, HTTPClientStd)
		for j, b := range p.AnthropicBetas {
			checkBeta(bad, fmt.Sprintf("%s.anthropic_betas[%d]", path, j), b)
		}
		if b := p.Breaker; b.Failures < 0 || b.ErrorRate < 0 || b.ErrorRate > 1 || b.Window < 0 || b.Cooldown < 0 {
			bad(path+".breaker", "failures, window and cooldown must not be negative, error_rate is between 0 and 1")
		}
		if p.APIKey != "" && len(p.APIKeys) > 0 {
			bad(path+".api_keys", "give api_key or api_keys, not both")
		}
		for j, k := range p.APIKeys {
			if k == "" {
				bad(fmt.Sprintf("%s.api_keys[%d]", path, j), "must not be empty")
			}
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
		checkEnum(bad, path+".translation", m.Translation, "default", "strict", "lenient")
		for j, b := range m.AnthropicBetas {
			checkBeta(bad, fmt.Sprintf("%s.anthropic_betas[%d]", path, j), b)
		}
		if m.Routing.MaxAttempts < 0 || m.Routing.MaxAttempts > 10 {
			bad(path+".routing.max_attempts", "must be between 1 and 10")
		}
		if m.Routing.RetryDeadline < 0 {
			bad(path+".routing.retry_deadline", "must not be negative")
		}
		if err := m.Capabilities.Check(); err != nil {
			bad(path+".capabilities", "%v", err)
		}
		if pr := m.Pricing; pr != nil {
			checkPrices(bad, path+".pricing", pr.byName())
			if lp := pr.LongPrompt; lp != nil {
				if lp.ThresholdTokens <= 0 {
					bad(path+".pricing.long_prompt.threshold_tokens", "must be positive")
				}
				checkPrices(bad, path+".pricing.long_prompt", lp.byName())
			}
		}
		for j, t := range m.Targets {
			tpath := fmt.Sprintf("%s.targets[%d]", path, j)
			p := providers[t.Provider]
			switch {
			case t.Provider == "":
				bad(tpath+".provider", "is required")
			case p == nil:
				bad(tpath+".provider", "unknown provider %q", t.Provider)
			case t.Model == "" && !modelOptional(p.Type) && !IsPattern(m.Name):
				bad(tpath+".model", "is required for %s provider %q (unless the model's name is a pattern such as claude-*: then the name the client asked for is sent)", p.Type, p.Name)
			}
			if t.Weight < 0 {
				bad(tpath+".weight", "must not be negative")
			}
			if t.Priority < 0 || t.Priority > 1000 {
				bad(tpath+".priority", "must be between 0 and 1000")
			}
		}
	}
	c.validateLimits(bad)
	if r := c.Tracing.SampleRatio; r != nil && (*r < 0 || *r > 1) {
		bad("tracing.sample_ratio", "must be between 0 and 1")
	}
	if e := c.Tracing.OTLPEndpoint; e != "" && !strings.HasPrefix(e, "http://") && !strings.HasPrefix(e, "https://") {
		bad("tracing.otlp_endpoint", "%q: want http(s)://host:port", RedactURL(e))
	}
	return errors.Join(errs...)
}

// IsPattern reports whether a model name or alias is a pattern: it has a
// "*", which matches any run of characters.
func IsPattern(name string) bool { return strings.IndexByte(name, '*') >= 0 }

// checkPrices accepts unset prices and decimals of USD per million tokens.
func checkPrices(bad func(path, format string, args ...any), path string, prices map[string]Decimal) {
	for _, name := range slices.Sorted(maps.Keys(prices)) {
		if v := prices[name]; v != "" && !isPrice(v) {
			unit := "per million tokens"
			if strings.HasPrefix(name, "per_") {
				unit = "per " + strings.TrimPrefix(name, "per_")
			}
			bad(path+"."+name, "%q is not a price in USD %s (a decimal like 3 or 0.075, at most 9 decimal places)", v, unit)
		}
	}
}

// isPrice reports whether v is a decimal the price parser takes (and
// whitespace-free, as YAML gives it).
func isPrice(v Decimal) bool {
	_, err := units.ParseNano(string(v))
	return err == nil && strings.TrimSpace(string(v)) == string(v)
}

// checkEnum accepts "" (the default) or one of values.
func checkEnum(bad func(path, format string, args ...any), path, v string, values ...string) {
	if v == "" || slices.Contains(values, v) {
		return
	}
	bad(path, "%q is not one of %s", v, strings.Join(values, ", "))
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
