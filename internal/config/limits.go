package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/tollgate/tollgate/internal/limit"
)

// Limits configures rate limits and budgets.
type Limits struct {
	// KeyDefaults apply to every virtual key, field by field, where the
	// key does not set its own.
	KeyDefaults LimitValues `yaml:"key_defaults"`
	// TPMCacheReads counts prompt-cache reads against tpm limits (default
	// false: cache reads are cheap for the upstream, as its own limits
	// count them). TPMCacheWrites counts cache writes (default true).
	TPMCacheReads  bool  `yaml:"tpm_cache_reads"`
	TPMCacheWrites *bool `yaml:"tpm_cache_writes"`
}

// CountsCacheWrites reports whether cache writes count against tpm limits.
func (l Limits) CountsCacheWrites() bool { return l.TPMCacheWrites == nil || *l.TPMCacheWrites }

// LimitValues are one scope's limits as written in the configuration.
type LimitValues struct {
	RPM          int64   `yaml:"rpm"`
	TPM          int64   `yaml:"tpm"`
	MaxParallel  int64   `yaml:"max_parallel"`
	BudgetUSD    Decimal `yaml:"budget_usd"`
	BudgetPeriod string  `yaml:"budget_period"`
}

// Limit converts the values into the limiter's form.
func (v LimitValues) Limit() (limit.Limits, error) {
	l := limit.Limits{RPM: v.RPM, TPM: v.TPM, MaxParallel: v.MaxParallel, BudgetPeriod: limit.Period(v.BudgetPeriod)}
	if v.BudgetUSD != "" {
		u, err := limit.ParseUSD(string(v.BudgetUSD))
		if err != nil {
			return limit.Limits{}, fmt.Errorf("budget_usd: %w", err)
		}
		l.BudgetUSD = u
	}
	return l, l.Validate()
}

// Redis is the optional shared store for limits and budgets.
type Redis struct {
	// URL is redis://[user:password@]host:port[/db] (rediss:// for TLS);
	// empty keeps limits in each replica's memory.
	URL string `yaml:"url"`
	// OnError is what requests do while limits cannot be checked:
	// fail_open (the default: admitted unchecked) or fail_closed (503).
	OnError string `yaml:"on_error"`
	// Timeout bounds one call to Redis (dial, read, write); past it Redis
	// counts as away and OnError decides. 0 means 200ms.
	Timeout time.Duration `yaml:"timeout"`
}

// Fail modes for Redis.OnError.
const (
	FailOpen   = "fail_open"
	FailClosed = "fail_closed"
)

func (c *Config) validateLimits(bad func(path, format string, args ...any)) {
	if _, err := c.Limits.KeyDefaults.Limit(); err != nil {
		bad("limits.key_defaults", "%v", err)
	}
	for i, m := range c.Models {
		if _, err := m.Limits.Limit(); err != nil {
			bad(fmt.Sprintf("models[%d].limits", i), "%v", err)
		}
	}
	if u := c.Redis.URL; u != "" && !strings.HasPrefix(u, "redis://") && !strings.HasPrefix(u, "rediss://") && !strings.HasPrefix(u, "unix://") {
		bad("redis.url", "%q: want redis://host:port[/db], rediss://… or unix://…", RedactURL(u))
	}
	checkEnum(bad, "redis.on_error", c.Redis.OnError, FailOpen, FailClosed)
	if c.Redis.Timeout < 0 {
		bad("redis.timeout", "must not be negative")
	}
}
