package cli

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/tollgate/tollgate/internal/accesslog"
	"github.com/tollgate/tollgate/internal/admin"
	"github.com/tollgate/tollgate/internal/auth"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/dialect"
	"github.com/tollgate/tollgate/internal/exepages"
	"github.com/tollgate/tollgate/internal/gateway"
	"github.com/tollgate/tollgate/internal/identity"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/ledger"
	"github.com/tollgate/tollgate/internal/metrics"
	"github.com/tollgate/tollgate/internal/provider"
	"github.com/tollgate/tollgate/internal/route"
	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/storedresponses"
	"github.com/tollgate/tollgate/internal/translate"
)

func serve(args []string, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// SIGHUP reloads the configuration. Caught from the start: its default
	// action would end the process.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	return runServeReloading(ctx, stop, args, stderr, nil, hup)
}

// runServe runs the gateway until ctx ends (stop, called then, lets a
// second signal kill the process at once); started, when set, receives
// the address it listens on.
func runServe(ctx context.Context, stop func(), args []string, stderr io.Writer, started func(addr string)) error {
	return runServeReloading(ctx, stop, args, stderr, started, nil)
}

// runServeReloading is runServe that reloads the configuration file on
// every value from reload (SIGHUP, in the binary; a test's channel).
func runServeReloading(ctx context.Context, stop func(), args []string, stderr io.Writer, started func(addr string), reload <-chan os.Signal) error {
	fs := newFlagSet("serve", stderr)
	cfgFlag := fs.String("config", "", "configuration file (default $TOLLGATE_CONFIG; none: the built-in echo model)")
	addrFlag := fs.String("addr", "", "listen address HOST:PORT (overrides server.addr; default "+config.DefaultAddr+")")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError(fs, "unexpected argument %q", fs.Arg(0))
	}
	cfg, err := loadConfig(*cfgFlag)
	if err != nil {
		return err
	}
	// cfg stays as the file says: a reload compares the file with it.
	addr, addrFrom := cfg.Server.Addr, "server.addr"
	if *addrFlag != "" {
		if err := config.CheckAddr(*addrFlag); err != nil {
			return usageError(fs, "--addr %s", err)
		}
		addr, addrFrom = *addrFlag, "--addr"
	}
	logger := newLogger(cfg, stderr)
	// What libraries log (the AWS SDK's warnings, through the bedrock
	// provider) goes to the same log, in its format.
	slog.SetDefault(logger)

	masterKey, keyFile, err := resolveMasterKey(cfg, addr, addrFrom)
	if err != nil {
		return err
	}

	var reqLog *accesslog.Writer
	if cfg.Server.LogFormat == "json" {
		reqLog = accesslog.New(stderr)
	}
	// The request lines are written out before "stopped", and on any
	// early return.
	closeRequestLog := sync.OnceFunc(func() {
		if reqLog != nil {
			reqLog.Close()
		}
	})
	defer closeRequestLog()
	var db *store.Store
	var recorder *ledger.Recorder
	if cfg.Database.URL == config.NoDatabase {
		logger.Warn("database: none: only the master key is accepted, and no usage is recorded")
	} else {
		var applied []string
		if db, applied, err = openDatabaseReport(cfg); err != nil {
			return err
		}
		if len(applied) > 0 {
			logger.Info("database migrated", "database", config.RedactURL(cfg.Database.URL), "applied", applied)
		}
		defer db.Close()
		if recorder, err = ledger.New(db, ledger.Options{SpillPath: cfg.Database.SpillPath, Sync: cfg.Database.LedgerSync, Logger: logger}); err != nil {
			return err
		}
	}
	o := Options{MasterKey: masterKey, Logger: logger, Store: db, ConfigFile: configPath(*cfgFlag)}
	if reqLog != nil {
		o.RequestLog = reqLog // a nil *accesslog.Writer must not become a non-nil io.Writer
	}
	if recorder != nil {
		o.Ledger = recorder
	}
	b, err := Build(cfg, o)
	if err != nil {
		return scrubError(secretReplacer(cfg), err)
	}
	closeIdle := b.Close
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	idle := &idleRelease{}
	srv := newServer(cfg, idle.wrap(b.Handler), logger)
	// Requests still running when the drain time is over are cancelled
	// with ErrShuttingDown: they end with an error the client can read
	// and are logged, rather than having their connection closed.
	baseCtx, cancelRequests := context.WithCancelCause(context.Background())
	defer cancelRequests(nil)
	srv.BaseContext = func(net.Listener) context.Context { return baseCtx }
	var metricsSrv *http.Server
	var metricsLn net.Listener
	if cfg.Metrics.Addr != "" {
		if metricsLn, err = net.Listen("tcp", cfg.Metrics.Addr); err != nil {
			ln.Close()
			return fmt.Errorf("metrics.addr: %w", err)
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", b.Metrics)
		if b.Pprof != nil {
			mux.Handle("/debug/pprof/", b.Pprof)
		}
		metricsSrv = newServer(cfg, mux, logger)
		logger.Info("metrics listening", "addr", metricsLn.Addr().String(), "auth", cfg.Metrics.Auth)
	}
	logger.Info("tollgate listening", "addr", ln.Addr().String(), "version", Version, "models", len(cfg.Models))
	if keyFile != nil {
		// Where the key is, never the key: stderr goes to log shippers.
		logger.Info("no master key configured: using the generated one in "+keyFile.path, "master_key_file", keyFile.path, "created", keyFile.created)
		fmt.Fprintf(stderr, "\n  No master key configured. The generated one is in %s (readable only by you):\n\n    KEY=$(cat %s)\n\n  Set auth.master_key or TOLLGATE_MASTER_KEY to choose your own.\n\n", keyFile.path, shellQuote(keyFile.path))
	}
	// Start-up is over: what it read of the executable need not stay.
	if _, err := exepages.Trim(true); err != nil {
		logger.Debug("giving back the executable's pages", "error", err)
	}
	if started != nil {
		started(ln.Addr().String())
	}
	idleTicker := time.NewTicker(idleCheck)
	defer idleTicker.Stop()
	go idle.run(ctx, idleTicker.C, releaseMemory)
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(ln) }()
	if metricsSrv != nil {
		go func() { errc <- metricsSrv.Serve(metricsLn) }()
	}
serving:
	for {
		select {
		case err := <-errc:
			srv.Close()
			if metricsSrv != nil {
				metricsSrv.Close()
			}
			return err
		case <-reload:
			if o.ConfigFile == "" {
				logger.Warn("SIGHUP: there is no configuration file to reload: serve was started without --config or $TOLLGATE_CONFIG")
				continue
			}
			b.ReloadFile("SIGHUP") // logs what it did, or why not
		case <-ctx.Done():
			break serving
		}
	}
	stop() // a second signal kills at once
	if metricsSrv != nil {
		metricsSrv.Close() // scrapes are short; nothing to drain
	}
	logger.Info("shutting down: draining in-flight requests", "drain_timeout", cfg.Server.DrainTimeout.String())
	drainCtx, cancel := context.WithTimeout(context.Background(), cfg.Server.DrainTimeout)
	defer cancel()
	err = srv.Shutdown(drainCtx)
	if errors.Is(err, context.DeadlineExceeded) {
		logger.Warn("drain time over: ending the requests still in flight", "grace", shutdownGrace.String())
		cancelRequests(gateway.ErrShuttingDown)
		graceCtx, cancelGrace := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancelGrace()
		if err = srv.Shutdown(graceCtx); errors.Is(err, context.DeadlineExceeded) {
			logger.Warn("closing the connections of requests that did not end")
			err = srv.Close()
		}
	}
	// Every request is over: write the last usage records (and key
	// last-used times) out.
	closeIdle()
	if recorder != nil {
		flushCtx, cancelFlush := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancelFlush()
		if ferr := recorder.Close(flushCtx); ferr != nil {
			logger.Error("usage ledger", "error", ferr)
		}
	}
	closeRequestLog()
	logger.Info("stopped")
	return err
}

// loopback reports whether the listen address addr (valid HOST:PORT)
// is reachable from this machine only.
func loopback(addr string) bool {
	host, _, _ := net.SplitHostPort(addr)
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}

// shutdownGrace is how long requests cancelled at the end of the drain
// time have to write their error and their log line.
const shutdownGrace = 5 * time.Second

// newServer is an HTTP server with the configured read limits. A client
// has server.read_header_timeout to send its headers and
// server.read_timeout for headers and body together, so connections held
// by slow or silent clients are closed; once a body is read the deadline
// no longer applies, so long streams live. There is no write timeout for
// the same reason: the gateway sets write deadlines per request.
func newServer(cfg *config.Config, h http.Handler, logger *slog.Logger) *http.Server {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: cfg.Server.ReadHeaderTimeout,
		ReadTimeout:       cfg.Server.ReadTimeout,
		IdleTimeout:       cfg.Server.IdleTimeout,
		MaxHeaderBytes:    cfg.Server.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	if cfg.Server.H2C {
		var p http.Protocols
		p.SetHTTP1(true)
		p.SetUnencryptedHTTP2(true)
		srv.Protocols = &p
	}
	return srv
}

// Options are what Build needs besides the configuration.
type Options struct {
	MasterKey string
	// Logger receives the gateway's log and, without RequestLog, each
	// request's line.
	Logger *slog.Logger
	// RequestLog, when set, receives each request's line as JSON.
	RequestLog io.Writer
	// Store holds virtual keys and serves the admin API; nil runs with
	// the master key only.
	Store *store.Store
	// Ledger, when set, records every request.
	Ledger gateway.Ledger
	// ConfigFile is the file the configuration was read from, read again
	// by ReloadFile and POST /admin/reload; "" (the built-in
	// configuration) has nothing to reload.
	ConfigFile string
	// Lifecycles attach request-lifecycle hooks to dialects, in place of
	// the built-in one of the same dialect (the Responses API's stored
	// responses).
	Lifecycles map[*dialect.Dialect]dialect.Lifecycle
	// Now is sign-in's clock (tokens, device codes, IdP token times);
	// clock.Now when nil. Tests move it.
	Now func() time.Time
}

// Server is what Build makes.
type Server struct {
	// Handler serves server.addr: the data plane, the admin API (with a
	// Store), /readyz, and /metrics unless metrics.addr is set.
	Handler http.Handler
	// Metrics serves /metrics, taking the master key unless metrics.auth
	// is none.
	Metrics http.Handler
	// Pprof serves /debug/pprof/ next to Metrics, with its auth; nil
	// unless metrics.pprof is on.
	Pprof http.Handler
	// Close closes idle upstream connections and writes what is pending
	// (the keys' last-used times).
	Close func()
	// Reload applies cfg's providers, models (with their prices and
	// limits) and limits to the requests that start from now on; those
	// in flight end with what they started with. The rest of cfg applies
	// only at a restart (ReloadReport.RestartRequired lists what differs).
	// On an error nothing changes.
	Reload func(cfg *config.Config) (*ReloadReport, error)
	// ReloadFile reads Options.ConfigFile again and Reloads it, logging
	// the outcome; trigger (SIGHUP, the admin API) is logged with it.
	ReloadFile func(trigger string) (*ReloadReport, error)
}

// Build constructs providers, routes, the limits and the gateway for cfg:
// what serve runs, and what tests run in process.
func Build(cfg *config.Config, o Options) (*Server, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return build(cfg, o)
}

// lifecycles are the dialects' request-lifecycle hooks: the Responses
// API's stored responses, in the database when there is one (without
// one, previous_response_id is refused but where a provider forwards
// unknown ids).
func lifecycles(cfg *config.Config, db *store.Store, logger *slog.Logger, more map[*dialect.Dialect]dialect.Lifecycle) map[*dialect.Dialect]dialect.Lifecycle {
	o := storedresponses.Options{Retention: cfg.Database.ResponseRetention, Logger: logger}
	if db != nil {
		o.Store = db // not a nil *store.Store in a non-nil interface
	}
	hooks := map[*dialect.Dialect]dialect.Lifecycle{dialect.Responses: storedresponses.New(o)}
	maps.Copy(hooks, more)
	return hooks
}

// newAuthenticator checks the master key and db's virtual keys, and
// throttles failed authentications as auth configures.
func newAuthenticator(cfg *config.Config, masterKey string, keys *auth.Cache, people *identity.Service) *auth.Authenticator {
	th := auth.NewThrottle(auth.ThrottleOptions{MaxFailures: cfg.Auth.Failures(), Window: cfg.Auth.FailureWindow,
		TrustedProxies: cfg.Auth.Proxies()})
	opts := []auth.Option{auth.WithThrottle(th)}
	if people != nil {
		opts = append(opts, auth.WithPeople(people))
	}
	return auth.New(masterKey, keys, opts...)
}

// build makes what lives as long as the process (the key cache, the
// authenticator, the metrics, the tracer, the gateway and its mux) and
// the first generation of what a reload replaces (reload.go).
func build(cfg *config.Config, o Options) (*Server, error) {
	logger, db := o.Logger, o.Store
	var keys *auth.Cache
	if db != nil {
		keys = auth.NewCache(db, logger)
	}
	people, err := newIdentity(cfg, db, logger, o.Now, o.MasterKey)
	if err != nil {
		return nil, err
	}
	authn := newAuthenticator(cfg, o.MasterKey, keys, people)
	lv := &live{start: cfg, file: o.ConfigFile, db: db, keys: keys, authn: authn, identity: people, log: logger, reg: metrics.New(), done: make(chan struct{})}
	lv.access = new(accesslog.Policy)
	if err := lv.access.SetFrom(cfg.Logging.Access); err != nil {
		return nil, fmt.Errorf("logging.access: %w", err) // config.Load refuses it first
	}
	lv.redact, _ = logger.Handler().(*liveRedact)
	gen, err := lv.prepare(cfg, nil)
	if err != nil {
		return nil, err
	}
	tracer, stopTracing, err := newTracer(cfg)
	if err != nil {
		gen.stopSharing()
		return nil, err
	}
	if stats, ok := o.Ledger.(metrics.LedgerStats); ok {
		lv.reg.Ledger(stats)
	}
	lv.gw = gateway.New(gateway.Options{
		Routes:           gen.routes,
		Auth:             authn,
		MaxBodyBytes:     cfg.Server.MaxBodyBytes,
		Logger:           logger,
		RequestLog:       o.RequestLog,
		AccessLog:        lv.access,
		Ledger:           o.Ledger,
		Limits:           gen.limits,
		Metrics:          lv.reg.Requests(),
		Tracer:           tracer,
		NoTargetHeader:   cfg.Server.TargetHeader != nil && !*cfg.Server.TargetHeader,
		NoOverheadHeader: cfg.Server.OverheadHeader != nil && !*cfg.Server.OverheadHeader,
		// Derived from the master key so that replicas sharing it agree.
		Signer:     translate.NewSigner(signingKey(o.MasterKey)),
		Lifecycles: lifecycles(cfg, db, logger, o.Lifecycles),
		ConsoleURL: consoleURL(db),
	})
	lv.install(gen)
	closeAll := sync.OnceFunc(func() {
		lv.close()
		stopTracing()
		if keys != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := keys.Close(ctx); err != nil {
				logger.Warn("writing key last-used times", "error", err)
			}
		}
	})
	metricsHandler := lv.reg.Handler()
	if cfg.Metrics.Auth != config.MetricsAuthNone {
		metricsHandler = masterOnly(authn, metricsHandler)
	}
	metricsHandler = gateway.WithRequestID(metricsHandler)
	var pprofHandler http.Handler
	if cfg.Metrics.Pprof {
		pprofHandler = profiles()
		if cfg.Metrics.Auth != config.MetricsAuthNone {
			pprofHandler = masterOnlyAs(authn, "the profiles", pprofHandler)
		}
		pprofHandler = gateway.WithRequestID(pprofHandler)
	}
	mux := http.NewServeMux()
	if cfg.Metrics.Addr == "" {
		mux.Handle("GET /metrics", metricsHandler)
		if pprofHandler != nil {
			mux.Handle("/debug/pprof/", pprofHandler)
		}
	}
	ledgerHealth, _ := o.Ledger.(interface{ Healthy() error })
	mux.Handle("GET /readyz", gateway.WithRequestID(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The limiter of now: a reload may have made the first one.
		readyHandler(db, lv.limiter(), ledgerHealth).ServeHTTP(w, r)
	})))
	mux.Handle("/admin/reload", gateway.WithRequestID(masterOnlyAs(authn, "the admin API", lv.reloadHandler())))
	if db != nil {
		mux.Handle("/admin/", gateway.WithRequestID(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// The admin API checks the model names of keys against the
			// routes of now.
			(*lv.admin.Load()).ServeHTTP(w, r)
		})))
	} else {
		mux.Handle("/admin/", gateway.WithRequestID(noAdmin(authn)))
	}
	lv.mountIdentity(mux, gateway.WithRequestID)
	if err := lv.mountConsole(mux); err != nil {
		closeAll()
		return nil, err
	}
	mux.Handle("/", lv.gw.Handler())
	return &Server{Handler: mux, Metrics: metricsHandler, Pprof: pprofHandler, Close: closeAll, Reload: lv.reload, ReloadFile: lv.reloadFile}, nil
}

// noAdmin answers the admin API of a gateway without a database: the
// master key learns why there is none; other callers get the usual
// refusal for their key.
func noAdmin(a *auth.Authenticator) http.Handler {
	return masterOnlyAs(a, "the admin API", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeAdminError(w, &admin.Error{Status: http.StatusNotFound, Type: "not_found_error",
			Message: "the admin API needs a database, and this gateway runs without one (database.url: none): set database.url to sqlite://PATH or postgres://… to manage virtual keys and see usage"})
	}))
}

// masterOnly serves h to the master key alone: the metrics name every
// model and target. Refusals come in the admin API's envelope.
func masterOnly(a *auth.Authenticator, h http.Handler) http.Handler {
	return masterOnlyAs(a, "the metrics", h)
}

// masterOnlyAs is masterOnly for what, named in its refusals.
func masterOnlyAs(a *auth.Authenticator, what string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := a.Check(r)
		var e *admin.Error
		switch {
		case err != nil:
			e = &admin.Error{Status: auth.Status(err), Type: "authentication_error", Message: err.Error()}
			switch e.Status {
			case http.StatusUnauthorized:
				w.Header().Set("WWW-Authenticate", `Bearer realm="tollgate metrics"`)
			case http.StatusBadRequest:
				e.Type = "invalid_request_error"
			case http.StatusTooManyRequests:
				e.Type = "rate_limit_error"
				if d, ok := auth.RetryAfter(err); ok {
					w.Header().Set("Retry-After", strconv.Itoa(int(d/time.Second)))
				}
			case http.StatusServiceUnavailable:
				e.Type = "api_error"
			}
		case !p.Master:
			e = &admin.Error{Status: http.StatusForbidden, Type: "permission_error", Message: "only the master key may use " + what + "; virtual keys may not"}
		default:
			h.ServeHTTP(w, r)
			return
		}
		writeAdminError(w, e)
	})
}

// writeAdminError writes e in the admin API's envelope.
func writeAdminError(w http.ResponseWriter, e *admin.Error) {
	b, _ := jsonx.Marshal(admin.ErrorBody{Type: "error", Error: admin.ErrorInfo{Type: e.Type, Message: e.Message}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	w.Write(append(b, '\n'))
}

// newRoutes builds the providers and the route table of cfg; closers close
// the providers' idle connections.
func newRoutes(cfg *config.Config) (*route.Table, []func(), error) {
	routes, providers, err := buildRoutes(cfg, nil)
	if err != nil {
		return nil, nil, err
	}
	var closers []func()
	for _, p := range providers {
		if c, ok := p.(interface{ CloseIdleConnections() }); ok {
			closers = append(closers, c.CloseIdleConnections)
		}
	}
	return routes, closers, nil
}

// buildRoutes builds the route table of cfg and its providers by name.
// reuse, when set, may return an existing provider for a configuration
// (a reload keeps the connections of providers it does not change).
func buildRoutes(cfg *config.Config, reuse func(config.Provider) provider.Provider) (*route.Table, map[string]provider.Provider, error) {
	catalogue, err := loadCatalogue(cfg.Pricing.Files)
	if err != nil {
		return nil, nil, err
	}
	providers, err := buildProviders(cfg, reuse)
	if err != nil {
		return nil, nil, err
	}
	routes, err := route.New(cfg, providers, catalogue)
	if err != nil {
		return nil, nil, err
	}
	return routes, providers, nil
}

// buildProviders builds cfg's providers by name, loading and checking
// their credentials (check-config runs it too, so that it fails where
// serve would). reuse is as for buildRoutes.
func buildProviders(cfg *config.Config, reuse func(config.Provider) provider.Provider) (map[string]provider.Provider, error) {
	providers := make(map[string]provider.Provider, len(cfg.Providers))
	for _, pc := range cfg.Providers {
		var p provider.Provider
		if reuse != nil {
			p = reuse(pc)
		}
		if p == nil {
			var err error
			if p, err = provider.New(pc); err != nil {
				return nil, err
			}
		}
		providers[pc.Name] = p
	}
	return providers, nil
}

// newLogger logs to w in the configured format, with configured secrets
// hidden in warnings and errors.
func newLogger(cfg *config.Config, w io.Writer) *slog.Logger {
	var h slog.Handler = slog.NewJSONHandler(w, nil)
	if cfg.Server.LogFormat == "text" {
		h = slog.NewTextHandler(w, nil)
	}
	// Redacted through a handler a reload can tell of new credentials.
	return slog.New(newLiveRedact(h, secretReplacer(cfg)))
}

// signingKey derives the thinking-signature key from the master key.
func signingKey(masterKey string) []byte {
	sum := sha256.Sum256([]byte("tollgate thinking signature\x00" + masterKey))
	return sum[:]
}

// generateKey returns a random master key: "sk-tg-" and 32 random bytes.
func generateKey() string {
	var b [32]byte
	rand.Read(b[:])
	return "sk-tg-" + base64.RawURLEncoding.EncodeToString(b[:])
}

// breakerStates lists each model's targets with their breakers, once each.
func breakerStates(routes *route.Table) []metrics.Breaker {
	var out []metrics.Breaker
	seen := map[[2]string]bool{}
	for _, m := range routes.Models() {
		for _, t := range m.Targets {
			target := t.Provider.Name() + "/" + t.Model
			if seen[[2]string{m.Name, target}] {
				continue
			}
			seen[[2]string{m.Name, target}] = true
			out = append(out, metrics.Breaker{Model: m.Name, Target: target, State: func() int { return int(t.Breaker.State()) }})
		}
	}
	return out
}
