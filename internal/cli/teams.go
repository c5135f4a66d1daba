package cli

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/tollgate/tollgate/internal/admin"
	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/limit"
)

const teamsUsage = `Usage:
  tollgate teams list [--json]
  tollgate teams show TEAM [--json]
  tollgate teams create --name NAME [--idp-groups a,b] [--models a,b] [--managed-settings FILE] [LIMITS [--per-member]] [--json]
  tollgate teams update TEAM [--name NAME] [--idp-groups a,b] [--models a,b|*] [--managed-settings FILE|none] [LIMITS [--per-member]] [--json]
  tollgate teams delete TEAM
  tollgate teams add-member TEAM USER
  tollgate teams remove-member TEAM USER

TEAM is a team's ID or name; USER a user's ID, subject or email.

LIMITS (0 or none removes one) hold for all the team's members together, or with
--per-member for each member without limits of their own:
  --rpm N  --tpm N  --max-parallel N  --budget-usd AMOUNT  --budget-period total|daily|monthly|24h|30d

--managed-settings FILE is a JSON object served to the members' Claude Code as its
managed settings. Teams of the configuration file (identity.teams) are changed there;
their members can be changed here.
Each takes --config FILE (act on that configuration's database) or
--url URL --admin-key KEY (act through a running gateway's admin API).
`

func teams(args []string, stdout, stderr io.Writer) error {
	member := func(verb string) command {
		return func(args []string, stdout, stderr io.Writer) error { return teamsMember(verb, args, stdout, stderr) }
	}
	return dispatch("teams", teamsUsage, map[string]command{"list": teamsList, "show": teamsShow, "create": teamsCreate,
		"update": teamsUpdate, "delete": teamsDelete, "add-member": member("add-member"), "remove-member": member("remove-member")},
		args, stdout, stderr)
}

// teamFlags are the flags teams create and update share.
type teamFlags struct {
	name, groups, models, settings *string
	perMember                      *bool
	limits                         limitFlags
}

func addTeamFlags(fs *flag.FlagSet, update bool) teamFlags {
	f := teamFlags{
		name:      fs.String("name", "", "the team's name, unique"),
		groups:    fs.String("idp-groups", "", "comma-separated identity provider groups whose members are the team's"),
		models:    fs.String("models", "", "comma-separated models or aliases the members may use (default: all)"),
		settings:  fs.String("managed-settings", "", "a JSON file of Claude Code managed settings for the members"),
		perMember: fs.Bool("per-member", false, "the limits hold for each member, not for the team together"),
		limits:    addLimitFlags(fs),
	}
	if update {
		fs.Lookup("name").Usage = "a new name"
		fs.Lookup("models").Usage = "comma-separated models or aliases the members may use (\"*\": all)"
		fs.Lookup("managed-settings").Usage += " (none: remove them)"
	}
	return f
}

// readSettings reads --managed-settings: nil for "none".
func readSettings(fs *flag.FlagSet, path string) (*admin.ClaudeCode, error) {
	if path == "none" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--managed-settings: %w", err)
	}
	v := jsonx.Value(b)
	if !v.IsValid() || v.Kind() != '{' {
		return nil, usageError(fs, "--managed-settings %s: not a JSON object", path)
	}
	return &admin.ClaudeCode{ManagedSettings: v}, nil
}

func teamsCreate(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("teams create", stderr)
	bf := addBackendFlags(fs)
	tf := addTeamFlags(fs, false)
	asJSON := fs.Bool("json", false, "print the team as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *tf.name == "" {
		return usageError(fs, "--name is required")
	}
	req := admin.CreateTeam{Name: *tf.name, IDPGroups: commaList(*tf.groups), Models: commaList(*tf.models)}
	if tf.limits.any(fs) {
		var l limit.Limits
		if err := ownLimits(fs, tf.limits, &l); err != nil {
			return err
		}
		if *tf.perMember {
			req.MemberLimits = &l
		} else {
			req.Limits = &l
		}
	}
	if *tf.settings != "" {
		c, err := readSettings(fs, *tf.settings)
		if err != nil {
			return err
		}
		req.ClaudeCode = c
	}
	b, closeB, err := bf.open()
	if err != nil {
		return err
	}
	defer closeB()
	t, err := b.CreateTeam(adminContext(), req)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, t)
	}
	fmt.Fprintf(stdout, "Created team %s (%s).\n", t.ID, printable(t.Name))
	return nil
}

func teamsUpdate(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("teams update", stderr)
	bf := addBackendFlags(fs)
	tf := addTeamFlags(fs, true)
	asJSON := fs.Bool("json", false, "print the team as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError(fs, "give one team (ID or name; tollgate teams list shows them)")
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var p admin.TeamPatch
	if set["name"] {
		p.Name = tf.name
	}
	if set["idp-groups"] {
		l := commaList(*tf.groups)
		p.IDPGroups = &l
	}
	if set["models"] {
		l := commaList(*tf.models)
		p.Models = &l
	}
	if set["managed-settings"] {
		c, err := readSettings(fs, *tf.settings)
		if err != nil {
			return err
		}
		p.ClaudeCode = &c
	}
	if p == (admin.TeamPatch{}) && !tf.limits.any(fs) {
		return usageError(fs, "nothing to change; give --name, --idp-groups, --models, --managed-settings or a limit")
	}
	b, closeB, err := bf.open()
	if err != nil {
		return err
	}
	defer closeB()
	ctx := adminContext()
	id, err := resolveTeam(ctx, b, fs.Arg(0))
	if err != nil {
		return err
	}
	if tf.limits.any(fs) {
		// Limits are replaced as a whole: start from the team's.
		t, err := b.Team(ctx, id)
		if err != nil {
			return err
		}
		l := t.Limits
		if *tf.perMember {
			l = t.MemberLimits
		}
		if err := ownLimits(fs, tf.limits, &l); err != nil {
			return err
		}
		if *tf.perMember {
			p.MemberLimits = &l
		} else {
			p.Limits = &l
		}
	}
	t, err := b.UpdateTeam(ctx, id, p)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, t)
	}
	fmt.Fprintf(stdout, "Updated team %s (%s): limits %s; each member %s.\n", t.ID, printable(t.Name),
		limitsText(t.Limits), limitsText(t.MemberLimits))
	return nil
}

func limitsText(l limit.Limits) string { return cmp.Or(strings.Join(admin.LimitWords(l), ", "), "-") }

func teamsDelete(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("teams delete", stderr)
	bf := addBackendFlags(fs)
	ctx, b, id, closeB, err := openOne(fs, bf, args, resolveTeam)
	if err != nil {
		return err
	}
	defer closeB()
	t, err := b.DeleteTeam(ctx, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Deleted team %s (%s) and its %d memberships.\n", t.ID, printable(t.Name), t.Members)
	return nil
}

func teamsMember(verb string, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("teams "+verb, stderr)
	bf := addBackendFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return usageError(fs, "give a team (ID or name) and a user (ID, subject or email)")
	}
	b, closeB, err := bf.open()
	if err != nil {
		return err
	}
	defer closeB()
	ctx := adminContext()
	teamID, err := resolveTeam(ctx, b, fs.Arg(0))
	if err != nil {
		return err
	}
	userID, err := resolveUser(ctx, b, fs.Arg(1))
	if err != nil {
		return err
	}
	if verb == "add-member" {
		u, err := b.AddMember(ctx, teamID, userID)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Added %s (%s) to team %s; their teams: %s.\n", u.ID, printable(u.Subject), teamID, printable(teamNames(u)))
		return nil
	}
	u, err := b.RemoveMember(ctx, teamID, userID)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Removed %s (%s) from team %s; their teams: %s.\n", u.ID, printable(u.Subject), teamID, printable(teamNames(u)))
	return nil
}

func teamsList(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("teams list", stderr)
	bf := addBackendFlags(fs)
	asJSON := fs.Bool("json", false, "print the teams as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	b, closeB, err := bf.open()
	if err != nil {
		return err
	}
	defer closeB()
	l, err := b.Teams(adminContext())
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, l)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tMEMBERS\tIDP GROUPS\tMODELS\tLIMITS\tEACH MEMBER\tSOURCE")
	for _, t := range l.Data {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", printable(t.ID), printable(t.Name), t.Members,
			printable(cmp.Or(strings.Join(t.IDPGroups, ","), "-")), printable(cmp.Or(strings.Join(t.Models, ","), "*")),
			printable(limitsText(t.Limits)), printable(limitsText(t.MemberLimits)), t.Source)
	}
	return tw.Flush()
}

// teamDetail is teams show --json: the team and its members.
type teamDetail struct {
	admin.TeamView
	MemberList []admin.UserView `json:"member_list"`
}

func teamsShow(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("teams show", stderr)
	bf := addBackendFlags(fs)
	asJSON := fs.Bool("json", false, "print the team and its members as JSON")
	ctx, b, id, closeB, err := openOne(fs, bf, args, resolveTeam)
	if err != nil {
		return err
	}
	defer closeB()
	t, err := b.Team(ctx, id)
	if err != nil {
		return err
	}
	members, err := b.Members(ctx, id)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, teamDetail{TeamView: t, MemberList: members.Data})
	}
	settings := "-"
	if len(t.ClaudeCode.ManagedSettings) > 0 {
		settings = string(t.ClaudeCode.ManagedSettings)
	}
	if err := printFields(stdout, [][2]string{{"ID", t.ID}, {"Name", t.Name}, {"Source", t.Source},
		{"IdP groups", cmp.Or(strings.Join(t.IDPGroups, ", "), "-")}, {"Models", cmp.Or(strings.Join(t.Models, ", "), "*")},
		{"Limits", limitsText(t.Limits)}, {"Each member", limitsText(t.MemberLimits)}, {"Claude Code settings", settings},
		{"Created", shortTime(&t.CreatedAt)}, {"Updated", shortTime(&t.UpdatedAt)}}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nMembers (%d):\n", len(members.Data))
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	for _, u := range members.Data {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", printable(u.ID), printable(u.Subject), printable(cmp.Or(u.Email, "-")), userStatus(u))
	}
	return tw.Flush()
}
