package cli

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/tollgate/tollgate/internal/admin"
	"github.com/tollgate/tollgate/internal/clock"
)

// windowFlags are --since, --until and --limit of the commands that list
// the newest of something.
type windowFlags struct {
	since, until *string
	limit        *int
}

// addWindowFlags adds them; since is --since's default ("": the
// beginning), what names what is listed.
func addWindowFlags(fs *flag.FlagSet, since, what string) windowFlags {
	from := "start: a duration ago (24h, 7d), a date or an RFC 3339 time"
	if since == "" {
		from += " (default: the beginning)"
	}
	return windowFlags{
		since: fs.String("since", since, from),
		until: fs.String("until", "", "end (exclusive), in the same forms (default: now)"),
		limit: fs.Int("limit", 50, fmt.Sprintf("at most this many %s, the latest (1 to %d)", what, admin.MaxPage)),
	}
}

// read returns the window the flags give (zero times: unbounded).
func (f windowFlags) read(fs *flag.FlagSet) (since, until time.Time, limit int, err error) {
	if *f.limit < 1 || *f.limit > admin.MaxPage {
		return since, until, 0, usageError(fs, "--limit %d: want 1 to %d", *f.limit, admin.MaxPage)
	}
	now := clock.Now()
	if since, err = admin.ParseTime(*f.since, now, time.Time{}); err != nil {
		return since, until, 0, usageError(fs, "--since: %v", err)
	}
	if until, err = admin.ParseTime(*f.until, now, time.Time{}); err != nil {
		return since, until, 0, usageError(fs, "--until: %v", err)
	}
	return since, until, *f.limit, nil
}

func auditCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("audit", stderr)
	bf := addBackendFlags(fs)
	actor := fs.String("actor", "", "only what this actor did (a user's ID; the master key and the CLI have none)")
	action := fs.String("action", "", "only this action, such as key_created, user_disabled or signin")
	target := fs.String("target", "", "only what was done to this key, user or team (its ID)")
	wf := addWindowFlags(fs, "", "events")
	before := fs.Int64("before", 0, "only events older than this event ID (the next page)")
	asJSON := fs.Bool("json", false, "print the events as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	q := admin.AuditQuery{ActorID: *actor, Action: *action, TargetID: *target, Before: *before}
	var err error
	if q.Since, q.Until, q.Limit, err = wf.read(fs); err != nil {
		return err
	}
	b, closeB, err := bf.open()
	if err != nil {
		return err
	}
	defer closeB()
	page, err := b.Audit(adminContext(), q)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, page)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTIME\tACTOR\tACTION\tTARGET\tCLIENT\tDETAIL")
	for _, e := range page.Data {
		who := e.ActorKind
		if e.ActorID != nil {
			who += " " + *e.ActorID
		}
		what := "-"
		if e.TargetID != nil {
			what = e.TargetKind + " " + *e.TargetID
		}
		detail := string(e.Detail)
		if detail == "{}" {
			detail = "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", e.ID, e.Time.UTC().Format(time.RFC3339), printable(who), printable(e.Action),
			printable(what), printable(cmp.Or(e.ClientIP, "-")), printable(detail))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if page.HasMore {
		fmt.Fprintf(stdout, "\nOlder events: add --before %d.\n", *page.LastID)
	}
	return nil
}
