package cli

import (
	"cmp"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/provider"
)

func checkConfig(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("check-config", stdout)
	cfgFlag := fs.String("config", "", "configuration file to check (default $TOLLGATE_CONFIG)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError(fs, "unexpected argument %q", fs.Arg(0))
	}
	path := configPath(*cfgFlag)
	if path == "" {
		return usageError(fs, "--config FILE is required (or set $TOLLGATE_CONFIG)")
	}
	cfg, err := config.Load(path)
	if err != nil {
		return err
	}
	// The providers as serve builds them, their credentials loaded and
	// checked (never over the network): what would stop serve stops the
	// check, with the same error.
	providers, err := buildProviders(cfg, nil)
	if err != nil {
		return err
	}
	printConfig(stdout, cfg, providers)
	warnUnpriced(stderr, cfg)
	return nil
}

// warnUnpriced names the targets that neither the configuration nor a
// price file nor the built-in catalogue prices: their cost is unknown.
// A pattern's target that sends the name asked for is priced by that
// name, so it is not checked here.
func warnUnpriced(w io.Writer, cfg *config.Config) {
	routes, _, err := buildRoutes(cfg, inertProvider)
	if err != nil {
		fmt.Fprintf(w, "warning: prices not checked: %v\n", err)
		return
	}
	for i, m := range routes.Models() {
		var unpriced []string
		for j, t := range m.Targets {
			if cfg.Models[i].Targets[j].Model == "" && config.IsPattern(m.Name) {
				continue
			}
			if _, err := t.Prices.WorstCase(1, 1); err != nil {
				unpriced = append(unpriced, t.Name)
			}
		}
		if len(unpriced) > 0 {
			fmt.Fprintf(w, "warning: models[%d] %q: no price for %s: its cost is unknown and USD budgets cannot count it; "+
				"set models[%d].pricing, or list the model in a pricing.files file\n", i, m.Name, strings.Join(unpriced, ", "), i)
		}
	}
}

// printConfig shows the resolved configuration with secrets masked: keys
// by their ends, URLs without passwords or key-like query values.
func printConfig(w io.Writer, cfg *config.Config, providers map[string]provider.Provider) {
	s := cfg.Server
	fmt.Fprintf(w, "configuration OK\n\nserver: addr=%s max_body_bytes=%d drain_timeout=%s read_header_timeout=%s read_timeout=%s idle_timeout=%s max_header_bytes=%d\n",
		s.Addr, s.MaxBodyBytes, s.DrainTimeout, s.ReadHeaderTimeout, s.ReadTimeout, s.IdleTimeout, s.MaxHeaderBytes)
	a := cfg.Auth
	throttle := "off"
	if a.Failures() > 0 {
		throttle = fmt.Sprintf("%d failures per %s", a.Failures(), a.FailureWindow)
	}
	fmt.Fprintf(w, "auth: master_key=%s failed-auth throttle=%s trusted_proxies=[%s]\n", mask(a.MasterKey), throttle, strings.Join(a.TrustedProxies, ","))
	fmt.Fprintf(w, "database: %s\n", config.RedactURL(cfg.Database.URL))
	if cfg.Redis.URL != "" {
		fmt.Fprintf(w, "redis: %s on_error=%s\n", config.RedactURL(cfg.Redis.URL), cmp.Or(cfg.Redis.OnError, config.FailOpen))
	}
	if cfg.Tracing.OTLPEndpoint != "" {
		fmt.Fprintf(w, "tracing: %s\n", config.RedactURL(cfg.Tracing.OTLPEndpoint))
	}
	metricsAddr := cfg.Metrics.Addr
	if metricsAddr == "" {
		metricsAddr = s.Addr + " (server.addr)"
	}
	fmt.Fprintf(w, "metrics: addr=%s auth=%s\n\nproviders:\n", metricsAddr, cfg.Metrics.Auth)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, p := range cfg.Providers {
		if p.Type == config.TypeEcho {
			fmt.Fprintf(tw, "  %s\techo\t(built in)\n", p.Name)
			continue
		}
		t := p.Timeouts
		total := t.Total.String()
		if t.Total == 0 {
			total = "none"
		}
		where := config.RedactURL(p.BaseURL) + " api_key=" + maskKeys(p)
		if t, _ := config.LookupProviderType(p.Type); t.NoKeys {
			var found string // where the cloud's own search found them
			if c, ok := providers[p.Name].(interface{ Credentials() string }); ok {
				found = c.Credentials()
			}
			where = cloudOptions(p.CloudOptions, found)
		}
		forwards := ""
		if p.ForwardUnknownResponseIDs {
			forwards = " forward_unknown_response_ids (every key may name a response the gateway never stored)"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s timeouts: connect=%s first_byte=%s idle=%s total=%s%s%s\n",
			p.Name, p.Type, where, t.Connect, t.FirstByte, t.Idle, total, betas(p.AnthropicBetas), forwards)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nroutes:")
	for _, m := range cfg.Models {
		names := m.Name
		if len(m.Aliases) > 0 {
			names += " (aliases: " + strings.Join(m.Aliases, ", ") + ")"
		}
		fmt.Fprintf(w, "  %s%s\n", names, betas(m.AnthropicBetas))
		for i, t := range m.Targets {
			p := cfg.ProviderByName(t.Provider)
			upstream := t.Model
			switch {
			case upstream == "" && config.IsPattern(m.Name):
				upstream = "(the name asked for)"
			case upstream == "":
				upstream = m.Name
			}
			var notes []string
			if t.Weight > 0 {
				notes = append(notes, fmt.Sprintf("weight %d", t.Weight))
			}
			if t.Priority != 0 {
				notes = append(notes, fmt.Sprintf("priority %d", t.Priority))
			}
			if t.Fallback {
				notes = append(notes, "fallback: only when the others fail")
			}
			note := ""
			if len(notes) > 0 {
				note = " [" + strings.Join(notes, ", ") + "]"
			}
			fmt.Fprintf(w, "    %d. %s/%s (%s)%s\n", i+1, t.Provider, upstream, p.Type, note)
		}
	}
}

// cloudOptions shows a cloud provider's settings, secrets masked and
// the credentials' source named: found, when the configuration names
// none.
func cloudOptions(o config.CloudOptions, found string) string {
	var parts []string
	add := func(name, v string) {
		if v != "" {
			parts = append(parts, name+"="+v)
		}
	}
	add("region", o.Region)
	add("project", o.Project)
	add("endpoint", config.RedactURL(o.Endpoint))
	switch {
	case o.AccessKeyID != "":
		add("access_key_id", mask(o.AccessKeyID))
		add("secret_access_key", mask(o.SecretAccessKey))
		if o.SessionToken != "" {
			add("session_token", mask(o.SessionToken))
		}
	case o.Profile != "":
		add("credentials", "profile "+o.Profile)
	case o.CredentialsFile != "":
		add("credentials", o.CredentialsFile)
	default:
		add("credentials", cmp.Or(found, "default chain"))
	}
	return strings.Join(parts, " ")
}

// betas describes an anthropic_betas allowlist ("" when unset: all pass).
func betas(l config.BetaList) string {
	if l == nil {
		return ""
	}
	return " anthropic_betas=[" + strings.Join(l, ",") + "]"
}

// mask shows enough of a secret to recognise it, never enough to use it.
func mask(s string) string {
	switch {
	case s == "":
		return "(none)"
	case len(s) < 16: // four characters of a short key are too much of it
		return "****"
	default:
		return "…" + s[len(s)-4:]
	}
}

// maskKeys shows a provider's credential, or its pool, masked.
func maskKeys(p config.Provider) string {
	if len(p.APIKeys) == 0 {
		return mask(p.APIKey)
	}
	masked := make([]string, len(p.APIKeys))
	for i, k := range p.APIKeys {
		masked[i] = mask(k)
	}
	return "[" + strings.Join(masked, ",") + "]"
}
