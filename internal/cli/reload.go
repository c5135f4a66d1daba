package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tollgate/tollgate/internal/accesslog"
	"github.com/tollgate/tollgate/internal/admin"
	"github.com/tollgate/tollgate/internal/auth"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/gateway"
	"github.com/tollgate/tollgate/internal/identity"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/limiter"
	"github.com/tollgate/tollgate/internal/metrics"
	"github.com/tollgate/tollgate/internal/provider"
	"github.com/tollgate/tollgate/internal/route"
	"github.com/tollgate/tollgate/internal/store"
)

// A reload re-reads the configuration file and replaces one generation
// (the route table with its providers, prices, breakers and model
// limits; the limits' defaults; the admin API's view of the models) with
// the next. What has state that must outlive it is kept: the database,
// the usage ledger, the key cache, the metrics, the limiter (its
// counters), the tracer and the gateway itself, which hands each request
// the generation current when it starts (gateway.Swap).

// ReloadReport is what a reload changed: the answer of POST /admin/reload.
type ReloadReport struct {
	Object string `json:"object"` // "reload"
	File   string `json:"file"`
	// Reloaded is false when the file's providers, models and limits are
	// those running: nothing was replaced (and no breaker reset).
	Reloaded bool `json:"reloaded"`
	// Models and Providers count what runs now.
	Models    int `json:"models"`
	Providers int `json:"providers"`
	// Names of what the reload added, removed and changed.
	ModelsAdded      []string `json:"models_added"`
	ModelsRemoved    []string `json:"models_removed"`
	ModelsChanged    []string `json:"models_changed"`
	ProvidersAdded   []string `json:"providers_added"`
	ProvidersRemoved []string `json:"providers_removed"`
	ProvidersChanged []string `json:"providers_changed"`
	// LimitsChanged is true when the limits section changed.
	LimitsChanged bool `json:"limits_changed"`
	// TeamsChanged is true when identity.teams changed (and were applied).
	TeamsChanged bool `json:"teams_changed"`
	// AccessLogChanged is true when logging.access changed (and was
	// applied).
	AccessLogChanged bool `json:"access_log_changed"`
	// RestartRequired names the settings of the file that differ from
	// those running and apply only at a restart (server.addr, …).
	RestartRequired []string `json:"restart_required"`
}

// errNoConfigFile refuses a reload of the built-in configuration.
var errNoConfigFile = errors.New("there is no configuration file to reload: serve was started without --config or $TOLLGATE_CONFIG")

// live is the part of a built gateway that outlives reloads, and the
// generation current.
type live struct {
	start *config.Config // as Build got it: restart-only settings are compared with it
	file  string
	db    *store.Store
	keys  *auth.Cache
	authn *auth.Authenticator
	// identity is users, teams and sign-in; nil without a database.
	identity *identity.Service
	log      *slog.Logger
	redact   *liveRedact // nil when the logger is not newLogger's
	reg      *metrics.Registry
	gw       *gateway.Gateway
	admin    atomic.Pointer[http.Handler] // the admin API over the current routes
	access   *accesslog.Policy            // logging.access, set again by each reload

	// lim is made by the first configuration that needs one, then kept.
	lim atomic.Pointer[limiter.Limiter]

	mu      sync.Mutex // one reload at a time; guards cur
	cur     *generation
	done    chan struct{} // closed by close: retired generations close their providers at once
	retired sync.WaitGroup
}

// generation is what one configuration runs and a reload replaces.
type generation struct {
	cfg         *config.Config
	routes      *route.Table
	providers   map[string]provider.Provider
	limits      gateway.Limits
	breakers    []metrics.Breaker
	admin       http.Handler
	stopSharing func()
}

// limiter is the limiter in use; nil while no configuration needed one.
func (lv *live) limiter() *limiter.Limiter { return lv.lim.Load() }

// prepare builds a generation for cfg, reusing the providers of prev
// whose configuration is unchanged. Only what the start configuration
// made applies to the rest (Redis, for one): cfg's own is not read.
func (lv *live) prepare(cfg *config.Config, prev *generation) (*generation, error) {
	var reuse func(config.Provider) provider.Provider
	if prev != nil {
		reuse = func(pc config.Provider) provider.Provider {
			if old := prev.cfg.ProviderByName(pc.Name); old != nil && reflect.DeepEqual(*old, pc) {
				return prev.providers[pc.Name]
			}
			return nil
		}
	}
	routes, providers, err := buildRoutes(cfg, reuse)
	if err != nil {
		return nil, err
	}
	running := *cfg
	running.Redis = lv.start.Redis
	limits, err := lv.limits(&running, routes)
	if err != nil {
		return nil, err
	}
	stopSharing, err := shareBreakers(&running, routes, lv.log)
	if err != nil {
		return nil, err
	}
	gen := &generation{cfg: cfg, routes: routes, providers: providers, limits: limits, breakers: breakerStates(routes), stopSharing: stopSharing}
	if lv.db != nil {
		gen.admin = admin.Handler(admin.New(lv.db, routes, lv.keys, lv.log), lv.authn)
	}
	return gen, nil
}

// limits are cfg's limits over the limiter, made (once) when cfg is the
// first configuration to need one: a limiter lives as long as the
// process, so that its counters (the minute's requests, the requests in
// flight) survive reloads.
func (lv *live) limits(cfg *config.Config, routes *route.Table) (gateway.Limits, error) {
	lim := lv.lim.Load()
	if lim == nil {
		l, err := newLimits(cfg, routes, lv.db, lv.log)
		if err != nil || l.Limiter == nil {
			return l, err
		}
		lv.lim.Store(l.Limiter)
		lv.exportLimiter(cfg, l.Limiter)
		return l, nil
	}
	defaults, err := cfg.Limits.KeyDefaults.Limit()
	if err != nil {
		return gateway.Limits{}, fmt.Errorf("limits.key_defaults: %w", err)
	}
	for _, m := range routes.Models() {
		if m.Limits.BudgetUSD != nil && !m.Priced() {
			return gateway.Limits{}, fmt.Errorf("model %q has a budget but a target without input and output prices (or a per-unit price); give it pricing", m.Name)
		}
	}
	return gateway.Limits{Limiter: lim, KeyDefaults: defaults, CacheReads: cfg.Limits.TPMCacheReads, CacheWrites: cfg.Limits.CountsCacheWrites()}, nil
}

// exportLimiter registers the limiter's metrics: once, as it is made once.
func (lv *live) exportLimiter(cfg *config.Config, l *limiter.Limiter) {
	backend := "memory"
	if cfg.Redis.URL != "" {
		backend = "redis"
	}
	kinds := make([]string, len(limiter.Kinds))
	for i, k := range limiter.Kinds {
		kinds[i] = string(k)
	}
	lv.reg.Limiter(metrics.LimiterStats{Backend: backend, Errors: l.Errors.Load, Unchecked: l.FailedOpen.Load, Up: l.Up,
		Refused: func(k string) int64 { return l.Refused(limiter.What(k)) }, Kinds: kinds})
}

// install makes gen current. The generation it replaces closes its
// breakers' sharing at once, and the idle connections of the providers
// gen does not reuse once its last request has ended, or after
// server.drain_timeout, whichever is first.
func (lv *live) install(gen *generation) {
	old := lv.cur
	lv.cur = gen
	lv.reg.Breakers(gen.breakers)
	if gen.admin != nil {
		lv.admin.Store(&gen.admin)
	}
	if old == nil {
		return // the gateway was made with gen
	}
	drained := lv.gw.Swap(gen.routes, gen.limits)
	old.stopSharing()
	dropped := map[string]provider.Provider{}
	for name, p := range old.providers {
		if gen.providers[name] != p {
			dropped[name] = p
		}
	}
	if len(dropped) == 0 {
		return
	}
	lv.retired.Add(1)
	go func() {
		defer lv.retired.Done()
		t := time.NewTimer(lv.start.Server.DrainTimeout)
		defer t.Stop()
		select {
		case <-drained:
		case <-t.C:
		case <-lv.done:
		}
		closeIdle(dropped)
	}()
}

// closeIdle closes the idle upstream connections of ps.
func closeIdle(ps map[string]provider.Provider) {
	for _, p := range ps {
		if c, ok := p.(interface{ CloseIdleConnections() }); ok {
			c.CloseIdleConnections()
		}
	}
}

// close ends what the generations hold: the sharing, the limiter, and
// every provider's idle connections.
func (lv *live) close() {
	lv.mu.Lock()
	defer lv.mu.Unlock()
	close(lv.done)
	lv.retired.Wait()
	closeIdle(lv.cur.providers)
	lv.cur.stopSharing()
	if l := lv.lim.Load(); l != nil {
		l.Close()
	}
}

// reload applies cfg (Server.Reload).
func (lv *live) reload(cfg *config.Config) (*ReloadReport, error) {
	lv.mu.Lock()
	defer lv.mu.Unlock()
	select {
	case <-lv.done:
		return nil, errors.New("the gateway is shutting down")
	default:
	}
	access, every, err := accesslog.ParseMode(cfg.Logging.Access)
	if err != nil {
		return nil, fmt.Errorf("logging.access: %w", err) // config.Load refuses it first
	}
	rep := &ReloadReport{Object: "reload", File: lv.file, Models: len(cfg.Models), Providers: len(cfg.Providers),
		RestartRequired: restartOnly(lv.start, cfg)}
	prev := lv.cur
	if lv.identity != nil && !reflect.DeepEqual(prev.cfg.Identity.Teams, cfg.Identity.Teams) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := lv.identity.SyncConfigTeams(ctx, cfg.Identity.Teams)
		cancel()
		if err != nil {
			return nil, err
		}
		rep.TeamsChanged = true
	}
	rep.ModelsAdded, rep.ModelsRemoved, rep.ModelsChanged = diffByName(prev.cfg.Models, cfg.Models, func(m config.Model) string { return m.Name })
	rep.ProvidersAdded, rep.ProvidersRemoved, rep.ProvidersChanged = diffByName(prev.cfg.Providers, cfg.Providers, func(p config.Provider) string { return p.Name })
	rep.LimitsChanged = !reflect.DeepEqual(prev.cfg.Limits, cfg.Limits)
	rep.AccessLogChanged = prev.cfg.Logging.Access != cfg.Logging.Access
	if reflect.DeepEqual(prev.cfg.Providers, cfg.Providers) && reflect.DeepEqual(prev.cfg.Models, cfg.Models) && !rep.LimitsChanged {
		// Nothing to replace: keep the breakers' state and the connections.
		lv.access.Set(access, every)
		return rep, nil
	}
	gen, err := lv.prepare(cfg, prev)
	if err != nil {
		return nil, err
	}
	if lv.redact != nil {
		// The credentials of both: requests of the old one may still log.
		both := *cfg
		both.Providers = append(slices.Clone(prev.cfg.Providers), cfg.Providers...)
		lv.redact.set(secretReplacer(&both))
	}
	lv.install(gen)
	lv.access.Set(access, every)
	rep.Reloaded = true
	return rep, nil
}

// reloadFile reads the configuration file again and reloads it, logging
// what it did or why it did not.
func (lv *live) reloadFile(trigger string) (*ReloadReport, error) {
	if lv.file == "" {
		return nil, errNoConfigFile
	}
	cfg, err := config.Load(lv.file)
	if err == nil {
		var rep *ReloadReport
		if rep, err = lv.reload(cfg); err == nil {
			lv.logReload(trigger, rep)
			return rep, nil
		}
	}
	err = scrubError(lv.redact.current(), err)
	lv.log.Error("configuration reload refused: the running configuration is kept", "file", lv.file, "trigger", trigger, "error", err)
	return nil, err
}

func (lv *live) logReload(trigger string, rep *ReloadReport) {
	if len(rep.RestartRequired) > 0 {
		lv.log.Warn("configuration reload: these settings changed in the file but apply only at a restart; the running ones are kept",
			"file", lv.file, "settings", rep.RestartRequired)
	}
	if !rep.Reloaded {
		lv.log.Info("configuration reloaded: providers, models and limits are unchanged", "file", lv.file, "trigger", trigger,
			"models", rep.Models, "providers", rep.Providers, "access_log_changed", rep.AccessLogChanged)
		return
	}
	attrs := []any{"file", lv.file, "trigger", trigger, "models", rep.Models, "providers", rep.Providers}
	for _, a := range []struct {
		key   string
		names []string
	}{{"models_added", rep.ModelsAdded}, {"models_removed", rep.ModelsRemoved}, {"models_changed", rep.ModelsChanged},
		{"providers_added", rep.ProvidersAdded}, {"providers_removed", rep.ProvidersRemoved}, {"providers_changed", rep.ProvidersChanged}} {
		if len(a.names) > 0 {
			attrs = append(attrs, a.key, a.names)
		}
	}
	if rep.LimitsChanged {
		attrs = append(attrs, "limits_changed", true)
	}
	if rep.AccessLogChanged {
		attrs = append(attrs, "access_log_changed", true)
	}
	lv.log.Info("configuration reloaded", attrs...)
}

// reloadHandler serves POST /admin/reload (behind masterOnlyAs): 200 with
// the ReloadReport, 422 with the error when the file is refused, 400
// when there is no file.
func (lv *live) reloadHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeAdminError(w, &admin.Error{Status: http.StatusMethodNotAllowed, Type: "invalid_request_error",
				Message: "method " + r.Method + " is not allowed on " + r.URL.Path + "; use POST"})
			return
		}
		rep, err := lv.reloadFile("admin API")
		switch {
		case errors.Is(err, errNoConfigFile):
			writeAdminError(w, &admin.Error{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: err.Error()})
			return
		case err != nil:
			writeAdminError(w, &admin.Error{Status: http.StatusUnprocessableEntity, Type: "invalid_request_error",
				Message: "the configuration file was refused; the running configuration is kept: " + err.Error()})
			return
		}
		b, _ := jsonx.Marshal(rep)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write(append(b, '\n'))
	})
}

// reloadable are the sections of the configuration a reload applies.
var reloadable = map[string]bool{"providers": true, "models": true, "limits": true, "logging": true}

// restartOnly names the settings of now that differ from was and that a
// reload does not apply: every section but providers, models, limits and logging
// (a section added later too, until it is made reloadable). The listeners
// and their limits, the database, Redis, the master key and the
// failed-auth throttle, tracing and the metrics listener are set up once,
// at start, and some hold state (the throttle's counts, the pools) that a
// rebuild would lose. Reloading the rest and naming these is better than
// refusing the file: a route change should not wait on, say, a log format
// that applies at the next restart anyway.
func restartOnly(was, now *config.Config) []string {
	out := []string{}
	a, b := reflect.ValueOf(*was), reflect.ValueOf(*now)
	for i := range a.NumField() {
		sec := yamlName(a.Type().Field(i))
		if reloadable[sec] {
			continue
		}
		fa, fb := a.Field(i), b.Field(i)
		if fa.Kind() != reflect.Struct {
			if !reflect.DeepEqual(fa.Interface(), fb.Interface()) {
				out = append(out, sec)
			}
			continue
		}
		for j := range fa.NumField() {
			if sec == "identity" && yamlName(fa.Type().Field(j)) == "teams" {
				continue // applied by reload
			}
			if !reflect.DeepEqual(fa.Field(j).Interface(), fb.Field(j).Interface()) {
				out = append(out, sec+"."+yamlName(fa.Type().Field(j)))
			}
		}
	}
	return out
}

func yamlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	return name
}

// diffByName lists the names only in now, only in was, and in both but
// configured differently, in configuration order.
func diffByName[T any](was, now []T, name func(T) string) (added, removed, changed []string) {
	added, removed, changed = []string{}, []string{}, []string{}
	old := make(map[string]T, len(was))
	for _, w := range was {
		old[name(w)] = w
	}
	seen := make(map[string]bool, len(now))
	for _, n := range now {
		seen[name(n)] = true
		switch w, ok := old[name(n)]; {
		case !ok:
			added = append(added, name(n))
		case !reflect.DeepEqual(w, n):
			changed = append(changed, name(n))
		}
	}
	for _, w := range was {
		if !seen[name(w)] {
			removed = append(removed, name(w))
		}
	}
	return added, removed, changed
}

// liveRedact is redactHandler over a replacer a reload may replace, so
// that the credentials of a reloaded file are hidden too.
type liveRedact struct {
	next slog.Handler
	r    *atomic.Pointer[strings.Replacer] // shared by the handlers derived from one
}

func newLiveRedact(h slog.Handler, r *strings.Replacer) *liveRedact {
	l := &liveRedact{next: h, r: new(atomic.Pointer[strings.Replacer])}
	l.r.Store(r)
	return l
}

func (h *liveRedact) set(r *strings.Replacer) { h.r.Store(r) }

// current is the replacer in use; nil (nothing to hide) on a nil h.
func (h *liveRedact) current() *strings.Replacer {
	if h == nil {
		return nil
	}
	return h.r.Load()
}

func (h *liveRedact) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h *liveRedact) Handle(ctx context.Context, rec slog.Record) error {
	r := h.r.Load()
	if rec.Level < slog.LevelWarn || r == nil {
		return h.next.Handle(ctx, rec)
	}
	return (&redactHandler{next: h.next, r: r}).Handle(ctx, rec)
}

// WithAttrs scrubs the bound attributes with the replacer of now.
func (h *liveRedact) WithAttrs(as []slog.Attr) slog.Handler {
	clean := as
	if r := h.r.Load(); r != nil {
		rh := &redactHandler{r: r}
		clean = make([]slog.Attr, len(as))
		for i, a := range as {
			clean[i] = rh.attr(a)
		}
	}
	return &liveRedact{next: h.next.WithAttrs(clean), r: h.r}
}

func (h *liveRedact) WithGroup(name string) slog.Handler {
	return &liveRedact{next: h.next.WithGroup(name), r: h.r}
}
