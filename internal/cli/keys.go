package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tollgate/tollgate/internal/admin"
	"github.com/tollgate/tollgate/internal/auth"
	"github.com/tollgate/tollgate/internal/clock"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/limit"
	"github.com/tollgate/tollgate/internal/units"
)

const keysUsage = `Usage:
  tollgate keys create --name NAME [--models a,b] [--expires 720h] [--metadata JSON] [--user USER [--team TEAM]] [LIMITS] [--json]
  tollgate keys update ID [--name NAME] [--models a,b] [--expires 720h|never] [--metadata JSON] [--user USER|none] [--team TEAM|none] [LIMITS] [--json]
  tollgate keys list [--json]
  tollgate keys revoke ID

LIMITS (0 or none removes one; with --model M they apply to the key's use of model M):
  --rpm N  --tpm N  --max-parallel N  --budget-usd AMOUNT  --budget-period total|daily|monthly|24h|30d  [--model M]

Each takes --config FILE (act on that configuration's database) or
--url URL --admin-key KEY (act through a running gateway's admin API).
`

func keys(args []string, stdout, stderr io.Writer) error {
	return dispatch("keys", keysUsage, map[string]command{"create": keysCreate, "update": keysUpdate, "list": keysList,
		"revoke": keysRevoke}, args, stdout, stderr)
}

func keysCreate(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("keys create", stderr)
	bf := addBackendFlags(fs)
	name := fs.String("name", "", "the key's name (required)")
	models := fs.String("models", "", "comma-separated models or aliases the key may use (default: all)")
	expires := fs.String("expires", "", "lifetime, such as 720h or 30d (default: never expires)")
	metadata := fs.String("metadata", "", "a JSON object stored with the key")
	user := fs.String("user", "", "the user the key belongs to (their ID, subject or email)")
	team := fs.String("team", "", "the team the key's usage is charged to (its ID or name); the user must be a member")
	lf := addLimitFlags(fs)
	asJSON := fs.Bool("json", false, "print the key as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *name == "" {
		return usageError(fs, "--name is required")
	}
	req := admin.CreateKey{Name: *name}
	if lf.any(fs) {
		var own limit.Limits
		per := map[string]limit.Limits{}
		if err := lf.apply(fs, &own, per); err != nil {
			return fmt.Errorf("keys create: %w", err)
		}
		req.Limits, req.ModelLimits = &own, per
	}
	for _, m := range strings.Split(*models, ",") {
		if m = strings.TrimSpace(m); m != "" {
			req.Models = append(req.Models, m)
		}
	}
	if *expires != "" {
		t, err := expiryFromNow(*expires)
		if err != nil {
			return usageError(fs, "%v", err)
		}
		req.ExpiresAt = &t
	}
	if *metadata != "" {
		req.Metadata = jsonx.Value(*metadata)
		if !req.Metadata.IsValid() {
			return usageError(fs, "--metadata is not valid JSON")
		}
	}
	b, closeB, err := bf.open()
	if err != nil {
		return err
	}
	defer closeB()
	ctx := adminContext()
	if *user != "" {
		if req.UserID, err = resolveUser(ctx, b, *user); err != nil {
			return err
		}
	}
	if *team != "" {
		if req.TeamID, err = resolveTeam(ctx, b, *team); err != nil {
			return err
		}
	}
	k, err := b.CreateKey(ctx, req)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, k)
	}
	fmt.Fprintf(stdout, "Created key %s (%q).\nIts secret is shown this once; store it now:\n\n    %s\n\n", k.ID, k.Name, k.Key)
	return nil
}

func keysUpdate(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("keys update", stderr)
	bf := addBackendFlags(fs)
	name := fs.String("name", "", "a new name")
	models := fs.String("models", "", "comma-separated models or aliases the key may use (\"*\": all)")
	expires := fs.String("expires", "", "a new lifetime from now, such as 720h or 30d, or \"never\"")
	metadata := fs.String("metadata", "", "a JSON object stored with the key, replacing its metadata")
	user := fs.String("user", "", "the user the key belongs to (their ID, subject or email), or \"none\"")
	team := fs.String("team", "", "the team the key's usage is charged to (its ID or name), or \"none\"")
	lf := addLimitFlags(fs)
	asJSON := fs.Bool("json", false, "print the key as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError(fs, "give one key ID (tollgate keys list shows them)")
	}
	b, closeB, err := bf.open()
	if err != nil {
		return err
	}
	defer closeB()
	ctx := adminContext()
	var p admin.KeyPatch
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, o := range []struct {
		flag    string
		v       string
		dst     **string
		resolve func(context.Context, backend, string) (string, error)
	}{{"user", *user, &p.UserID, resolveUser}, {"team", *team, &p.TeamID, resolveTeam}} {
		if !set[o.flag] {
			continue
		}
		id := ""
		if o.v != "none" && o.v != "" {
			if id, err = o.resolve(ctx, b, o.v); err != nil {
				return err
			}
		}
		*o.dst = &id
	}
	if set["name"] {
		p.Name = name
	}
	if set["models"] {
		list := []string{}
		for _, m := range strings.Split(*models, ",") {
			if m = strings.TrimSpace(m); m != "" && m != "*" {
				list = append(list, m)
			}
		}
		p.Models = &list
	}
	if set["expires"] {
		var at *time.Time
		if *expires != "never" {
			t, err := expiryFromNow(*expires)
			if err != nil {
				return usageError(fs, "%v", err)
			}
			at = &t
		}
		p.ExpiresAt = &at
	}
	if set["metadata"] {
		if p.Metadata = jsonx.Value(*metadata); !p.Metadata.IsValid() {
			return usageError(fs, "--metadata is not valid JSON")
		}
	}
	if lf.any(fs) {
		// Limits are replaced as a whole: start from the key's own.
		k, err := b.Key(ctx, fs.Arg(0))
		if err != nil {
			return err
		}
		own, per := k.Limits, k.ModelLimits
		if per == nil {
			per = map[string]limit.Limits{}
		}
		if err := lf.apply(fs, &own, per); err != nil {
			return fmt.Errorf("keys update: %w", err)
		}
		if *lf.model == "" {
			p.Limits = &own
		} else {
			p.ModelLimits = &per
		}
	}
	if p.Name == nil && p.Models == nil && p.Limits == nil && p.ModelLimits == nil && p.ExpiresAt == nil && p.Metadata == nil &&
		p.UserID == nil && p.TeamID == nil {
		return usageError(fs, "nothing to change; give --name, --models, --expires, --metadata, --user, --team or a limit")
	}
	k, err := b.UpdateKey(ctx, fs.Arg(0), p)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, k)
	}
	expiry := "never expires"
	if k.ExpiresAt != nil {
		expiry = "expires " + k.ExpiresAt.UTC().Format(time.RFC3339)
	}
	fmt.Fprintf(stdout, "Updated key %s (%q): %s; limits %s.\n", k.ID, k.Name, expiry, describeLimits(k))
	return nil
}

func keysList(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("keys list", stderr)
	bf := addBackendFlags(fs)
	asJSON := fs.Bool("json", false, "print the keys as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	b, closeB, err := bf.open()
	if err != nil {
		return err
	}
	defer closeB()
	l, err := b.Keys(context.Background())
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, l)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tPREFIX\tMODELS\tLIMITS\tCREATED\tEXPIRES\tLAST USED\tSTATUS")
	now := clock.Now()
	for _, k := range l.Data {
		models := strings.Join(k.Models, ",")
		if models == "" {
			models = "*"
		}
		status := "active"
		switch {
		case k.Revoked:
			status = "revoked"
		case k.ExpiresAt != nil && !now.Before(*k.ExpiresAt):
			status = "expired"
		}
		// Names, models and ids are shown escaped: a name holding a newline
		// or an escape sequence must not rewrite the table or the terminal.
		fmt.Fprintf(tw, "%s\t%s\t%s…\t%s\t%s\t%s\t%s\t%s\t%s\n", printable(k.ID), printable(k.Name), printable(k.Prefix),
			printable(models), printable(describeLimits(k)), shortTime(&k.CreatedAt), shortTime(k.ExpiresAt), shortTime(k.LastUsedAt), status)
	}
	return tw.Flush()
}

func keysRevoke(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("keys revoke", stderr)
	bf := addBackendFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError(fs, "give one key ID (tollgate keys list shows them)")
	}
	b, closeB, err := bf.open()
	if err != nil {
		return err
	}
	defer closeB()
	ctx := context.Background()
	if k, err := b.Key(ctx, fs.Arg(0)); err != nil {
		return err
	} else if k.Revoked {
		return fmt.Errorf("key %s (%q) is already revoked", k.ID, printable(k.Name))
	}
	k, err := b.RevokeKey(ctx, fs.Arg(0))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Revoked key %s (%q). Gateways refuse it within %s.\n", k.ID, k.Name, auth.HardTTL)
	return nil
}

// expiryFromNow is the time a lifetime such as 720h or 30d ends.
func expiryFromNow(lifetime string) (time.Time, error) {
	d, err := units.ParseDuration(lifetime)
	if err != nil || d <= 0 {
		return time.Time{}, fmt.Errorf("--expires %q: want a positive duration such as 720h or 30d", lifetime)
	}
	return clock.Now().Add(d).UTC().Truncate(time.Millisecond), nil
}

func shortTime(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04")
}

func printJSON(w io.Writer, v any) error {
	b, err := jsonx.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
