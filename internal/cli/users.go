package cli

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/tollgate/tollgate/internal/admin"
	"github.com/tollgate/tollgate/internal/limit"
)

const usersUsage = `Usage:
  tollgate users list [--team TEAM] [--query TEXT] [--json]
  tollgate users show USER [--json]
  tollgate users create --subject SUBJECT [--email E] [--name N] [--team TEAM] [--models a,b] [--admin] [LIMITS] [--json]
  tollgate users update USER [--email E] [--name N] [--team TEAM|none] [--models a,b|*] [--admin=true|false] [LIMITS] [--json]
  tollgate users disable USER
  tollgate users enable USER
  tollgate users delete USER

USER is a user's ID, subject or email; TEAM a team's ID or name. --team is the
user's primary team, the one their usage is charged to by default.

LIMITS (0 or none removes one): --rpm N  --tpm N  --max-parallel N
  --budget-usd AMOUNT  --budget-period total|daily|monthly|24h|30d

Disabling a user signs them out everywhere; deleting one also revokes their keys.
Each takes --config FILE (act on that configuration's database) or
--url URL --admin-key KEY (act through a running gateway's admin API).
`

func users(args []string, stdout, stderr io.Writer) error {
	disable := func(verb string) command {
		return func(args []string, stdout, stderr io.Writer) error { return usersDisable(verb, args, stdout, stderr) }
	}
	return dispatch("users", usersUsage, map[string]command{"list": usersList, "show": usersShow, "create": usersCreate,
		"update": usersUpdate, "disable": disable("disable"), "enable": disable("enable"), "delete": usersDelete}, args, stdout, stderr)
}

// command runs a subcommand.
type command func(args []string, stdout, stderr io.Writer) error

// dispatch runs the subcommand of group that args name.
func dispatch(group, usage string, cmds map[string]command, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	if c := cmds[args[0]]; c != nil {
		return c(args[1:], stdout, stderr)
	}
	switch args[0] {
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprintf(stderr, "tollgate %s: unknown command %q\n\n%s", group, args[0], usage)
	return errUsage
}

// adminContext is the context of a command: a change it makes on the
// database directly is audited as the CLI's.
func adminContext() context.Context {
	return admin.WithActor(context.Background(), admin.ActorSystem, "cli")
}

// commaList splits a comma-separated flag; "*" alone is the empty list.
func commaList(s string) []string {
	list := []string{}
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" && v != "*" {
			list = append(list, v)
		}
	}
	return list
}

// openOne parses the args of a command on one user or team, opens its
// backend and resolves the user or team it names.
func openOne(fs *flag.FlagSet, bf backendFlags, args []string, resolve func(context.Context, backend, string) (string, error)) (
	ctx context.Context, b backend, id string, closeB func(), err error) {
	if err := parseFlags(fs, args); err != nil {
		return nil, nil, "", nil, err
	}
	if fs.NArg() != 1 {
		what := "one user (ID, subject or email; tollgate users list shows them)"
		if strings.HasPrefix(fs.Name(), "teams") {
			what = "one team (ID or name; tollgate teams list shows them)"
		}
		return nil, nil, "", nil, usageError(fs, "give %s", what)
	}
	if b, closeB, err = bf.open(); err != nil {
		return nil, nil, "", nil, err
	}
	ctx = adminContext()
	if id, err = resolve(ctx, b, fs.Arg(0)); err != nil {
		closeB()
		return nil, nil, "", nil, err
	}
	return ctx, b, id, closeB, nil
}

// resolveUser returns the id of the user whose id, subject or email is
// ref; a subject or email several users share is refused.
func resolveUser(ctx context.Context, b backend, ref string) (string, error) {
	if strings.HasPrefix(ref, "usr_") {
		return ref, nil
	}
	l, err := b.Users(ctx, admin.UserQuery{Query: ref})
	if err != nil {
		return "", err
	}
	var ids []string
	for _, u := range l.Data {
		if u.Subject == ref || strings.EqualFold(u.Email, ref) {
			ids = append(ids, u.ID)
		}
	}
	switch len(ids) {
	case 0:
		return "", fmt.Errorf("no user has the subject or email %q (tollgate users list shows them)", printable(ref))
	case 1:
		return ids[0], nil
	}
	return "", fmt.Errorf("%d users have the email %q (%s); pass one's ID", len(ids), printable(ref), strings.Join(ids, ", "))
}

// resolveTeam returns the id of the team whose id or name is ref.
func resolveTeam(ctx context.Context, b backend, ref string) (string, error) {
	if strings.HasPrefix(ref, "team_") {
		return ref, nil
	}
	l, err := b.Teams(ctx)
	if err != nil {
		return "", err
	}
	for _, t := range l.Data {
		if t.Name == ref {
			return t.ID, nil
		}
	}
	return "", fmt.Errorf("no team is named %q (tollgate teams list shows them)", printable(ref))
}

// ownLimits applies the limit flags to l; users have no per-model limits.
func ownLimits(fs *flag.FlagSet, lf limitFlags, l *limit.Limits) error {
	if *lf.model != "" {
		return usageError(fs, "--model: limits by model are a key's (tollgate keys update --model)")
	}
	return lf.apply(fs, l, nil)
}

func usersCreate(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("users create", stderr)
	bf := addBackendFlags(fs)
	subject := fs.String("subject", "", "the identity provider's identity of the user, as the configured user claim gives it (required)")
	email := fs.String("email", "", "the user's email address")
	name := fs.String("name", "", "the user's name")
	team := fs.String("team", "", "the user's primary team (ID or name); they are made its member")
	models := fs.String("models", "", "comma-separated models or aliases the user may use (default: as their teams allow)")
	isAdmin := fs.Bool("admin", false, "the user operates the gateway in the console")
	lf := addLimitFlags(fs)
	asJSON := fs.Bool("json", false, "print the user as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *subject == "" {
		return usageError(fs, "--subject is required")
	}
	req := admin.CreateUser{Subject: *subject, Email: *email, Name: *name, Models: commaList(*models), Admin: *isAdmin}
	if lf.any(fs) {
		var own limit.Limits
		if err := ownLimits(fs, lf, &own); err != nil {
			return err
		}
		req.Limits = &own
	}
	b, closeB, err := bf.open()
	if err != nil {
		return err
	}
	defer closeB()
	ctx := adminContext()
	if *team != "" {
		if req.PrimaryTeamID, err = resolveTeam(ctx, b, *team); err != nil {
			return err
		}
	}
	u, err := b.CreateUser(ctx, req)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, u)
	}
	fmt.Fprintf(stdout, "Created user %s (%s).\n", u.ID, printable(u.Subject))
	return nil
}

func usersUpdate(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("users update", stderr)
	bf := addBackendFlags(fs)
	email := fs.String("email", "", "a new email address")
	name := fs.String("name", "", "a new name")
	team := fs.String("team", "", "a new primary team (ID or name) the user is a member of, or \"none\"")
	models := fs.String("models", "", "comma-separated models or aliases the user may use (\"*\": as their teams allow)")
	isAdmin := fs.Bool("admin", false, "the user operates the gateway in the console (--admin=false: not)")
	lf := addLimitFlags(fs)
	asJSON := fs.Bool("json", false, "print the user as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError(fs, "give one user (ID, subject or email; tollgate users list shows them)")
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var p admin.UserPatch
	if set["email"] {
		p.Email = email
	}
	if set["name"] {
		p.Name = name
	}
	if set["models"] {
		list := commaList(*models)
		p.Models = &list
	}
	if set["admin"] {
		p.Admin = isAdmin
	}
	if p == (admin.UserPatch{}) && !set["team"] && !lf.any(fs) {
		return usageError(fs, "nothing to change; give --email, --name, --team, --models, --admin or a limit")
	}
	b, closeB, err := bf.open()
	if err != nil {
		return err
	}
	defer closeB()
	ctx := adminContext()
	id, err := resolveUser(ctx, b, fs.Arg(0))
	if err != nil {
		return err
	}
	if set["team"] {
		primary := ""
		if *team != "none" && *team != "" {
			if primary, err = resolveTeam(ctx, b, *team); err != nil {
				return err
			}
		}
		p.PrimaryTeamID = &primary
	}
	if lf.any(fs) {
		// Limits are replaced as a whole: start from the user's own.
		u, err := b.User(ctx, id)
		if err != nil {
			return err
		}
		own := u.Limits
		if err := ownLimits(fs, lf, &own); err != nil {
			return err
		}
		p.Limits = &own
	}
	u, err := b.UpdateUser(ctx, id, p)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, u)
	}
	fmt.Fprintf(stdout, "Updated user %s (%s): limits %s.\n", u.ID, printable(u.Subject), cmp.Or(strings.Join(admin.LimitWords(u.Limits), ", "), "-"))
	return nil
}

func usersDisable(verb string, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("users "+verb, stderr)
	bf := addBackendFlags(fs)
	ctx, b, id, closeB, err := openOne(fs, bf, args, resolveUser)
	if err != nil {
		return err
	}
	defer closeB()
	disabled := verb == "disable"
	u, err := b.UpdateUser(ctx, id, admin.UserPatch{Disabled: &disabled})
	if err != nil {
		return err
	}
	if disabled {
		fmt.Fprintf(stdout, "Disabled user %s (%s): signed out everywhere, and refused until enabled.\n", u.ID, printable(u.Subject))
	} else {
		fmt.Fprintf(stdout, "Enabled user %s (%s).\n", u.ID, printable(u.Subject))
	}
	return nil
}

func usersDelete(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("users delete", stderr)
	bf := addBackendFlags(fs)
	ctx, b, id, closeB, err := openOne(fs, bf, args, resolveUser)
	if err != nil {
		return err
	}
	defer closeB()
	u, err := b.DeleteUser(ctx, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Deleted user %s (%s); their keys are revoked and their sign-ins ended. Their usage records stay.\n",
		u.ID, printable(u.Subject))
	return nil
}

func usersList(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("users list", stderr)
	bf := addBackendFlags(fs)
	team := fs.String("team", "", "only the members of this team (ID or name)")
	query := fs.String("query", "", "only users whose subject, email or name contains this")
	asJSON := fs.Bool("json", false, "print the users as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	b, closeB, err := bf.open()
	if err != nil {
		return err
	}
	defer closeB()
	ctx := adminContext()
	q := admin.UserQuery{Query: *query}
	if *team != "" {
		if q.TeamID, err = resolveTeam(ctx, b, *team); err != nil {
			return err
		}
	}
	l, err := b.Users(ctx, q)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, l)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSUBJECT\tEMAIL\tNAME\tTEAMS\tLIMITS\tSOURCE\tLAST SEEN\tSTATUS")
	for _, u := range l.Data {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", printable(u.ID), printable(u.Subject), printable(cmp.Or(u.Email, "-")),
			printable(cmp.Or(u.Name, "-")), printable(teamNames(u)), printable(cmp.Or(strings.Join(admin.LimitWords(u.Limits), ", "), "-")),
			u.Source, shortTime(u.LastSeenAt), userStatus(u))
	}
	return tw.Flush()
}

// teamNames lists a user's teams, the primary one marked with *.
func teamNames(u admin.UserView) string {
	names := make([]string, len(u.Teams))
	for i, t := range u.Teams {
		names[i] = t.Name
		if u.PrimaryTeamID != nil && *u.PrimaryTeamID == t.ID {
			names[i] += "*"
		}
	}
	return cmp.Or(strings.Join(names, ","), "-")
}

func userStatus(u admin.UserView) string {
	switch {
	case u.Disabled:
		return "disabled"
	case u.Admin:
		return "active, admin"
	}
	return "active"
}

// printFields prints name: value rows, the values aligned and escaped.
func printFields(w io.Writer, rows [][2]string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, row := range rows {
		fmt.Fprintf(tw, "%s:\t%s\n", row[0], printable(row[1]))
	}
	return tw.Flush()
}

// userDetail is users show --json: the user and their keys.
type userDetail struct {
	admin.UserView
	Keys []admin.KeyView `json:"keys"`
}

func usersShow(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("users show", stderr)
	bf := addBackendFlags(fs)
	asJSON := fs.Bool("json", false, "print the user and their keys as JSON")
	ctx, b, id, closeB, err := openOne(fs, bf, args, resolveUser)
	if err != nil {
		return err
	}
	defer closeB()
	u, err := b.User(ctx, id)
	if err != nil {
		return err
	}
	keys, err := b.UserKeys(ctx, id)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, userDetail{UserView: u, Keys: keys.Data})
	}
	models := cmp.Or(strings.Join(u.Models, ","), "* (as their teams allow)")
	if err := printFields(stdout, [][2]string{{"ID", u.ID}, {"Subject", u.Subject}, {"Email", cmp.Or(u.Email, "-")}, {"Name", cmp.Or(u.Name, "-")},
		{"Teams", teamNames(u) + " (* primary)"}, {"Models", models},
		{"Limits", cmp.Or(strings.Join(admin.LimitWords(u.Limits), ", "), "-")}, {"Status", userStatus(u)}, {"Source", u.Source},
		{"Created", shortTime(&u.CreatedAt)}, {"Last seen", shortTime(u.LastSeenAt)}}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nKeys (%d):\n", len(keys.Data))
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	for _, k := range keys.Data {
		status := "active"
		if k.Revoked {
			status = "revoked"
		}
		team := "-"
		if k.TeamID != nil {
			team = *k.TeamID
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s…\tteam %s\t%s\n", printable(k.ID), printable(k.Name), printable(k.Prefix), printable(team), status)
	}
	return tw.Flush()
}
