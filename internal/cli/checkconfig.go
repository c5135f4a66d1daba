package cli

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/tollgate/tollgate/internal/config"
)

func checkConfig(args []string, stdout io.Writer) error {
	fs := newFlagSet("check-config", stdout)
	cfgFlag := fs.String("config", "", "configuration file to check (default $TOLLGATE_CONFIG)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	path := configPath(*cfgFlag)
	if path == "" {
		return errors.New("check-config: --config FILE is required")
	}
	cfg, err := config.Load(path)
	if err != nil {
		return err
	}
	printConfig(stdout, cfg)
	return nil
}

// printConfig shows the resolved configuration with secrets masked.
func printConfig(w io.Writer, cfg *config.Config) {
	fmt.Fprintf(w, "configuration OK\n\nserver: addr=%s max_body_bytes=%d drain_timeout=%s\n",
		cfg.Server.Addr, cfg.Server.MaxBodyBytes, cfg.Server.DrainTimeout)
	fmt.Fprintf(w, "auth: master_key=%s\ndatabase: %s\n\nproviders:\n", mask(cfg.Auth.MasterKey), maskURL(cfg.Database.URL))
	for _, p := range cfg.Providers {
		if p.Type == config.TypeEcho {
			fmt.Fprintf(w, "  %-16s echo (built in)\n", p.Name)
			continue
		}
		t := p.Timeouts
		total := t.Total.String()
		if t.Total == 0 {
			total = "none"
		}
		fmt.Fprintf(w, "  %-16s %-9s %s api_key=%s timeouts: connect=%s first_byte=%s idle=%s total=%s\n",
			p.Name, p.Type, p.BaseURL, maskKeys(p), t.Connect, t.FirstByte, t.Idle, total)
	}
	fmt.Fprintln(w, "\nroutes:")
	for _, m := range cfg.Models {
		names := m.Name
		if len(m.Aliases) > 0 {
			names += " (aliases: " + strings.Join(m.Aliases, ", ") + ")"
		}
		fmt.Fprintf(w, "  %s\n", names)
		for i, t := range m.Targets {
			p := cfg.ProviderByName(t.Provider)
			upstream := t.Model
			if upstream == "" {
				upstream = m.Name
			}
			fmt.Fprintf(w, "    %d. %s/%s (%s)\n", i+1, t.Provider, upstream, p.Type)
		}
	}
}

// maskURL hides a password in a database URL.
func maskURL(u string) string {
	parsed, err := url.Parse(u)
	if err != nil || parsed.User == nil {
		return u
	}
	if _, has := parsed.User.Password(); has {
		parsed.User = url.UserPassword(parsed.User.Username(), "****")
	}
	return parsed.String()
}

// mask shows enough of a secret to recognise it, never enough to use it.
func mask(s string) string {
	switch {
	case s == "":
		return "(none)"
	case len(s) <= 8:
		return "****"
	default:
		return s[:4] + "…" + s[len(s)-4:]
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
