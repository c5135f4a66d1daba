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
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/tollgate/tollgate/internal/accesslog"
	"github.com/tollgate/tollgate/internal/admin"
	"github.com/tollgate/tollgate/internal/auth"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/gateway"
	"github.com/tollgate/tollgate/internal/ledger"
	"github.com/tollgate/tollgate/internal/metrics"
	"github.com/tollgate/tollgate/internal/pricing"
	"github.com/tollgate/tollgate/internal/provider"
	"github.com/tollgate/tollgate/internal/route"
	"github.com/tollgate/tollgate/internal/store"
	"github.com/tollgate/tollgate/internal/translate"
)

func serve(args []string, stderr io.Writer) error {
	fs := newFlagSet("serve", stderr)
	cfgFlag := fs.String("config", "", "configuration file (default $TOLLGATE_CONFIG; none: the built-in echo model)")
	addrFlag := fs.String("addr", "", "listen address HOST:PORT (overrides server.addr; default "+config.DefaultAddr+")")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("serve: unexpected argument %q", fs.Arg(0))
	}
	cfg, err := loadConfig(*cfgFlag)
	if err != nil {
		return err
	}
	if *addrFlag != "" {
		cfg.Server.Addr = *addrFlag
	}
	logger := newLogger(cfg, stderr)

	masterKey := cfg.Auth.MasterKey
	if masterKey == "" {
		masterKey = os.Getenv("TOLLGATE_MASTER_KEY")
	}
	if masterKey == "" {
		// Nobody chose a key: make one, show it once, and stay on loopback
		// so a forgotten test instance is not an open relay.
		masterKey = generateKey()
		host, port, _ := net.SplitHostPort(cfg.Server.Addr)
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			logger.Warn("no master key configured: binding to loopback only", "requested_addr", cfg.Server.Addr)
			cfg.Server.Addr = net.JoinHostPort("127.0.0.1", port)
		}
		fmt.Fprintf(stderr, "\n  No master key configured; generated one for this run:\n\n    %s\n\n  Set auth.master_key or TOLLGATE_MASTER_KEY to choose your own.\n\n", masterKey)
	}

	var reqLog *accesslog.Writer
	if cfg.Server.LogFormat == "json" {
		reqLog = accesslog.New(stderr)
		defer reqLog.Close()
	}
	var db *store.Store
	var recorder *ledger.Recorder
	if cfg.Database.URL == config.NoDatabase {
		logger.Warn("database: none: only the master key is accepted, and no usage is recorded")
	} else {
		if db, err = openDatabase(cfg); err != nil {
			return err
		}
		defer db.Close()
		if recorder, err = ledger.New(db, ledger.Options{SpillPath: cfg.Database.SpillPath, Logger: logger}); err != nil {
			return err
		}
	}
	handler, closeIdle, err := build(cfg, masterKey, logger, reqLog, ledgerOrNil(recorder), db)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Server.Addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	logger.Info("tollgate listening", "addr", ln.Addr().String(), "version", Version, "models", len(cfg.Models))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	stop() // a second signal kills at once
	logger.Info("shutting down: draining in-flight requests", "drain_timeout", cfg.Server.DrainTimeout.String())
	drainCtx, cancel := context.WithTimeout(context.Background(), cfg.Server.DrainTimeout)
	defer cancel()
	err = srv.Shutdown(drainCtx)
	if errors.Is(err, context.DeadlineExceeded) {
		logger.Warn("drain time over: closing remaining connections")
		err = srv.Close()
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
	logger.Info("stopped")
	return err
}

// ledgerOrNil keeps a nil *ledger.Recorder from becoming a non-nil
// gateway.Ledger.
func ledgerOrNil(r *ledger.Recorder) gateway.Ledger {
	if r == nil {
		return nil
	}
	return r
}

// openDatabase opens the configured database and applies migrations.
func openDatabase(cfg *config.Config) (*store.Store, error) {
	if cfg.Database.URL == config.NoDatabase {
		return nil, errors.New("the configuration has no database (database.url: none)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := store.Open(ctx, cfg.Database.URL)
	if err != nil {
		return nil, fmt.Errorf("database: %w", err)
	}
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// Build constructs providers, routes and the gateway handler for cfg,
// without a database (the master key only, no ledger, no admin API); the
// returned func closes idle upstream connections. Tests use it to run the
// gateway in process; request lines go to logger.
func Build(cfg *config.Config, masterKey string, logger *slog.Logger) (http.Handler, func(), error) {
	return build(cfg, masterKey, logger, nil, nil, nil)
}

// BuildWithLedger is Build with every request recorded in l.
func BuildWithLedger(cfg *config.Config, masterKey string, logger *slog.Logger, l gateway.Ledger) (http.Handler, func(), error) {
	return build(cfg, masterKey, logger, nil, l, nil)
}

// BuildWithStore is Build with virtual keys and the admin API on db, and
// every request recorded in l (which may be nil). The returned func also
// writes the keys' last-used times.
func BuildWithStore(cfg *config.Config, masterKey string, logger *slog.Logger, db *store.Store, l gateway.Ledger) (http.Handler, func(), error) {
	return build(cfg, masterKey, logger, nil, l, db)
}

func build(cfg *config.Config, masterKey string, logger *slog.Logger, reqLog *accesslog.Writer, l gateway.Ledger, db *store.Store) (http.Handler, func(), error) {
	routes, closers, err := newRoutes(cfg)
	if err != nil {
		return nil, nil, err
	}
	var keys *auth.Cache
	if db != nil {
		keys = auth.NewCache(db, logger)
	}
	authn := auth.New(masterKey, keys)
	limits, err := newLimits(cfg, routes, db, logger)
	if err != nil {
		return nil, nil, err
	}
	reg := metrics.New()
	reg.Breakers(routes)
	stopSharing, err := shareBreakers(cfg, routes, logger)
	if err != nil {
		return nil, nil, err
	}
	tracer, stopTracing, err := newTracer(cfg)
	if err != nil {
		return nil, nil, err
	}
	if p, ok := l.(interface{ Pending() (int, int) }); ok {
		reg.Ledger(p.Pending)
	}
	g := gateway.New(gateway.Options{
		Routes:           routes,
		Auth:             authn,
		MaxBodyBytes:     cfg.Server.MaxBodyBytes,
		Logger:           logger,
		RequestLog:       requestLog(reqLog),
		Ledger:           l,
		Limits:           limits,
		Metrics:          reg.Requests(),
		Tracer:           tracer,
		NoTargetHeader:   cfg.Server.TargetHeader != nil && !*cfg.Server.TargetHeader,
		NoOverheadHeader: cfg.Server.OverheadHeader != nil && !*cfg.Server.OverheadHeader,
		// Derived from the master key so that replicas sharing it agree.
		Signer: translate.NewSigner(signingKey(masterKey)),
	})
	closeIdle := func() {
		for _, c := range closers {
			c()
		}
		if limits.Limiter != nil {
			limits.Limiter.Close()
		}
		stopSharing()
		stopTracing()
		if keys != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := keys.Close(ctx); err != nil {
				logger.Warn("writing key last-used times", "error", err)
			}
		}
	}
	if limits.Limiter != nil {
		backend := "memory"
		if cfg.Redis.URL != "" {
			backend = "redis"
		}
		reg.Limiter(limits.Limiter, backend)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", reg.Handler())
	mux.Handle("GET /readyz", readyHandler(db, limits.Limiter))
	if db != nil {
		mux.Handle("/admin/", admin.Handler(admin.New(db, routes, keys, logger), authn))
	}
	mux.Handle("/", g.Handler())
	return mux, closeIdle, nil
}

// newRoutes builds the providers and the route table of cfg; closers close
// the providers' idle connections.
func newRoutes(cfg *config.Config) (*route.Table, []func(), error) {
	catalogue, err := pricing.Builtin()
	if err != nil {
		return nil, nil, err
	}
	providers := make(map[string]provider.Provider, len(cfg.Providers))
	var closers []func()
	for _, pc := range cfg.Providers {
		switch pc.Type {
		case config.TypeEcho:
			providers[pc.Name] = provider.NewEcho(pc.Name)
		default:
			h, err := provider.NewHTTP(pc)
			if err != nil {
				return nil, nil, err
			}
			providers[pc.Name] = h
			closers = append(closers, h.CloseIdleConnections)
		}
	}
	routes, err := route.New(cfg, providers, catalogue)
	if err != nil {
		return nil, nil, err
	}
	return routes, closers, nil
}

func newLogger(cfg *config.Config, w io.Writer) *slog.Logger {
	if cfg.Server.LogFormat == "text" {
		return slog.New(slog.NewTextHandler(w, nil))
	}
	return slog.New(slog.NewJSONHandler(w, nil))
}

// requestLog keeps a nil *accesslog.Writer from becoming a non-nil io.Writer.
func requestLog(w *accesslog.Writer) io.Writer {
	if w == nil {
		return nil
	}
	return w
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
