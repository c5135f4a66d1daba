package cli

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/tollgate/tollgate/internal/admin"
)

func sessionsCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sessions", stderr)
	bf := addBackendFlags(fs)
	user := fs.String("user", "", "only this user's sessions (their ID, subject or email)")
	team := fs.String("team", "", "only the sessions charged to this team (its ID or name)")
	key := fs.String("key", "", "only this key's sessions (its name or ID)")
	wf := addWindowFlags(fs, "7d", "sessions")
	asJSON := fs.Bool("json", false, "print the sessions as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var q admin.SessionQuery
	var err error
	if q.Since, q.Until, q.Limit, err = wf.read(fs); err != nil {
		return err
	}
	b, closeB, err := bf.open()
	if err != nil {
		return err
	}
	defer closeB()
	ctx := adminContext()
	if *user != "" {
		if q.UserID, err = resolveUser(ctx, b, *user); err != nil {
			return fmt.Errorf("sessions: --user %q: %w", *user, err)
		}
	}
	if *team != "" {
		if q.TeamID, err = resolveTeam(ctx, b, *team); err != nil {
			return fmt.Errorf("sessions: --team %q: %w", *team, err)
		}
	}
	keys, err := b.Keys(ctx)
	if err != nil {
		return err
	}
	names := newKeyNames(keys.Data)
	if *key != "" {
		if q.KeyID, err = names.resolve(*key); err != nil {
			return fmt.Errorf("sessions: --key %q: %w in %s", *key, err, databaseName(bf))
		}
	}
	l, err := b.Sessions(ctx, q)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, l)
	}
	subjects := map[string]string{}
	users, err := b.Users(ctx, admin.UserQuery{})
	if err != nil {
		return err
	}
	for _, u := range users.Data {
		subjects[u.ID] = u.Subject
	}
	teamNames := map[string]string{}
	teams, err := b.Teams(ctx)
	if err != nil {
		return err
	}
	for _, t := range teams.Data {
		teamNames[t.ID] = t.Name
	}
	label := func(id *string, of map[string]string) string {
		switch {
		case id == nil:
			return "-"
		case of[*id] != "":
			return of[*id]
		}
		return *id
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSION\tUSER\tTEAM\tKEY\tMODEL\tFIRST\tLAST\tREQUESTS\tINPUT\tCACHE READ\tCACHE WRITE\tOUTPUT\tREAD FROM CACHE\tCOST USD")
	for _, s := range l.Data {
		k := "(master key)"
		if s.KeyID != nil {
			k = names.label(*s.KeyID)
		}
		cost := "unknown"
		if s.CostNanoUSD != nil {
			cost = formatUSD(*s.CostNanoUSD)
		}
		t := s.Tokens
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%.0f%%\t%s\n", printable(s.SessionID),
			printable(label(s.UserID, subjects)), printable(label(s.TeamID, teamNames)), printable(k), printable(s.Model),
			shortTime(&s.FirstSeen), shortTime(&s.LastSeen), s.Requests, t.Input, t.CacheRead, t.CacheWrite, t.Output,
			100*s.CacheReadShare, cost)
	}
	return tw.Flush()
}
