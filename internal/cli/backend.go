package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/tollgate/tollgate/internal/admin"
	"github.com/tollgate/tollgate/internal/config"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/provider"
)

// backend is what the admin commands act on: the database named
// in the configuration (admin.Service) or a running gateway's admin API.
type backend interface {
	CreateKey(ctx context.Context, req admin.CreateKey) (admin.KeyView, error)
	Keys(ctx context.Context) (admin.KeyList, error)
	Key(ctx context.Context, id string) (admin.KeyView, error)
	UpdateKey(ctx context.Context, id string, p admin.KeyPatch) (admin.KeyView, error)
	RevokeKey(ctx context.Context, id string) (admin.KeyView, error)
	Usage(ctx context.Context, q admin.UsageQuery) (admin.UsageReport, error)
	peopleBackend
}

// backendFlags are the flags every admin command takes.
type backendFlags struct {
	config, url, adminKey *string
}

func addBackendFlags(fs *flag.FlagSet) backendFlags {
	return backendFlags{
		config:   fs.String("config", "", "configuration file whose database to use (default $TOLLGATE_CONFIG; none: sqlite://tollgate.db)"),
		url:      fs.String("url", "", "a running gateway's base URL, instead of the database (default $TOLLGATE_URL)"),
		adminKey: fs.String("admin-key", "", "the gateway's master key, with --url (default $TOLLGATE_MASTER_KEY)"),
	}
}

// open returns the backend the flags select and a func to close it.
func (f backendFlags) open() (backend, func(), error) {
	base := *f.url
	if base == "" {
		base = os.Getenv("TOLLGATE_URL")
	}
	if base != "" {
		if *f.config != "" {
			return nil, nil, errors.New("--config and --url are exclusive: use the database, or a running gateway")
		}
		key := *f.adminKey
		if key == "" {
			key = os.Getenv("TOLLGATE_MASTER_KEY")
		}
		if key == "" {
			return nil, nil, errors.New("--url needs the master key: --admin-key KEY or $TOLLGATE_MASTER_KEY")
		}
		u, err := url.Parse(base)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, nil, fmt.Errorf("--url %q: want http(s)://HOST[:PORT]", config.RedactURL(base))
		}
		return &remote{base: strings.TrimSuffix(base, "/"), key: key, client: &http.Client{Timeout: time.Minute}}, func() {}, nil
	}
	cfg, path, err := loadDatabaseConfig(*f.config)
	if err != nil {
		return nil, nil, err
	}
	db, err := openExistingDatabase(cfg, path)
	if err != nil {
		return nil, nil, err
	}
	routes, _, err := buildRoutes(cfg, inertProvider)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	// Gateways serving this database see changes within auth.HardTTL.
	return admin.New(db, routes, nil, slog.New(slog.DiscardHandler)), func() { db.Close() }, nil
}

// inertProvider stands for p in a route table that only checks model
// names and prices: nothing is sent upstream, so it needs no credentials.
func inertProvider(p config.Provider) provider.Provider { return provider.NewEcho(p.Name) }

// loadConfig reads --config, else $TOLLGATE_CONFIG, else the zero-config
// default.
func loadConfig(flagValue string) (*config.Config, error) {
	path := configPath(flagValue)
	if path == "" {
		return config.Default(), nil
	}
	return config.Load(path)
}

// loadDatabaseConfig is loadConfig for the commands that use only the
// database; it also returns the file read ("" for the default).
func loadDatabaseConfig(flagValue string) (*config.Config, string, error) {
	path := configPath(flagValue)
	if path == "" {
		return config.Default(), "", nil
	}
	cfg, err := config.LoadDatabase(path)
	return cfg, path, err
}

// remote calls a running gateway's admin API.
type remote struct {
	base, key string
	client    *http.Client
}

func (r *remote) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := jsonx.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+r.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		var e admin.ErrorBody
		if jsonx.Unmarshal(raw, &e) == nil && e.Error.Message != "" {
			return fmt.Errorf("%s %s: %d %s: %s", method, path, resp.StatusCode, printable(e.Error.Type), printable(e.Error.Message))
		}
		return fmt.Errorf("%s %s: %s", method, path, resp.Status)
	}
	if err := jsonx.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
	}
	return nil
}

func (r *remote) CreateKey(ctx context.Context, req admin.CreateKey) (admin.KeyView, error) {
	var k admin.KeyView
	return k, r.do(ctx, http.MethodPost, "/admin/keys", req, &k)
}

func (r *remote) Keys(ctx context.Context) (admin.KeyList, error) {
	var l admin.KeyList
	return l, r.do(ctx, http.MethodGet, "/admin/keys", nil, &l)
}

func (r *remote) Key(ctx context.Context, id string) (admin.KeyView, error) {
	var k admin.KeyView
	return k, r.do(ctx, http.MethodGet, "/admin/keys/"+url.PathEscape(id), nil, &k)
}

// UpdateKey sends the patch's set fields, as PATCH /admin/keys/{id} takes them.
func (r *remote) UpdateKey(ctx context.Context, id string, p admin.KeyPatch) (admin.KeyView, error) {
	body := map[string]any{}
	if p.Name != nil {
		body["name"] = *p.Name
	}
	if p.Models != nil {
		body["models"] = *p.Models
	}
	if p.Metadata != nil {
		body["metadata"] = p.Metadata
	}
	if p.ExpiresAt != nil {
		body["expires_at"] = *p.ExpiresAt
	}
	if p.Limits != nil {
		body["limits"] = *p.Limits
	}
	if p.ModelLimits != nil {
		body["model_limits"] = *p.ModelLimits
	}
	if p.UserID != nil {
		body["user_id"] = *p.UserID
	}
	if p.TeamID != nil {
		body["team_id"] = *p.TeamID
	}
	var k admin.KeyView
	return k, r.do(ctx, http.MethodPatch, "/admin/keys/"+url.PathEscape(id), body, &k)
}

func (r *remote) RevokeKey(ctx context.Context, id string) (admin.KeyView, error) {
	var k admin.KeyView
	return k, r.do(ctx, http.MethodDelete, "/admin/keys/"+url.PathEscape(id), nil, &k)
}

func (r *remote) Usage(ctx context.Context, q admin.UsageQuery) (admin.UsageReport, error) {
	v := url.Values{"since": {q.Since.UTC().Format(time.RFC3339Nano)}, "until": {q.Until.UTC().Format(time.RFC3339Nano)},
		"group_by": {string(q.GroupBy)}}
	if q.KeyID != "" {
		v.Set("key", q.KeyID)
	}
	if q.UserID != "" {
		v.Set("user_id", q.UserID)
	}
	if q.TeamID != "" {
		v.Set("team_id", q.TeamID)
	}
	var rep admin.UsageReport
	return rep, r.do(ctx, http.MethodGet, "/admin/usage?"+v.Encode(), nil, &rep)
}
