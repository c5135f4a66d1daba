package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// healthcheck asks a running gateway whether it is ready: what a container
// health check runs, as the image has no shell and no curl.
func healthcheck(args []string, stdout io.Writer) error {
	fs := newFlagSet("healthcheck", stdout)
	base := fs.String("url", "http://127.0.0.1:8080", "the gateway's base URL")
	path := fs.String("path", "/readyz", "what to ask: /readyz (database, Redis, ledger) or /healthz (alive)")
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the answer")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError(fs, "unexpected argument %q", fs.Arg(0))
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(*base, "/")+*path, nil)
	if err != nil {
		return usageError(fs, "--url: %v", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %s", req.URL, resp.Status, strings.TrimSpace(string(body)))
	}
	fmt.Fprintf(stdout, "%s: %s\n", req.URL, strings.TrimSpace(string(body)))
	return nil
}
