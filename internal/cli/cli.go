// Package cli implements the tollgate command: it parses arguments, loads
// configuration and wires the packages together. Nothing imports it but
// cmd/tollgate.
package cli

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// Version is set at build time with -ldflags "-X github.com/tollgate/tollgate/internal/cli.Version=…".
var Version = "dev"

const usage = `tollgate: an LLM API gateway speaking the Anthropic Messages, OpenAI Chat Completions
and OpenAI Responses APIs.

Usage:
  tollgate serve [--config FILE] [--addr HOST:PORT]   run the gateway
  tollgate check-config [--config FILE]               validate a config and print its routes
  tollgate migrate [--config FILE]                    apply database migrations and exit
  tollgate backup [--config FILE] DEST                copy the SQLite database, while serve runs, to DEST
  tollgate healthcheck [--url URL] [--path /readyz]   exit 0 when a running gateway answers 200 (containers)
  tollgate keys create|update|list|revoke …           manage virtual keys (tollgate keys help)
  tollgate users list|show|create|update|disable|enable|delete …
                                                      manage people (tollgate users help)
  tollgate teams list|show|create|update|delete|add-member|remove-member …
                                                      manage teams and their members (tollgate teams help)
  tollgate audit [--actor ID] [--action A] [--since 7d] [--limit 50]
                                                      read the audit log: who changed what
  tollgate usage [--since 24h] [--by model|key|day|provider|user|team|session] [--key NAME] [--user U] [--team T]
                [--format table|json|csv]             sum tokens and cost from the usage ledger
  tollgate sessions [--user U] [--team T] [--since 7d] list agent sessions with their cost and cache use
  tollgate prices check FILE                          validate a price file (LiteLLM's format) and list its prices
  tollgate version                                    print the version and build

keys, users, teams, audit, usage and sessions act on the database of --config FILE (default $TOLLGATE_CONFIG, else
./tollgate.db), or on a running gateway with --url URL --admin-key KEY
(default $TOLLGATE_URL and $TOLLGATE_MASTER_KEY).

Without --config (or $TOLLGATE_CONFIG) serve runs the built-in echo model, which also
answers the names coding tools send by default (claude-*, gpt-*, gemini-*, o*).
Run 'tollgate COMMAND --help' for a command's flags.
`

// Main runs the command line args (without the program name) and returns
// the process exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = serve(args[1:], stderr)
	case "check-config":
		err = checkConfig(args[1:], stdout, stderr)
	case "migrate":
		err = migrate(args[1:], stdout)
	case "backup":
		err = backup(args[1:], stdout)
	case "healthcheck":
		err = healthcheck(args[1:], stdout)
	case "keys":
		err = keys(args[1:], stdout, stderr)
	case "usage":
		err = usageCmd(args[1:], stdout, stderr)
	case "users":
		err = users(args[1:], stdout, stderr)
	case "teams":
		err = teams(args[1:], stdout, stderr)
	case "audit":
		err = auditCmd(args[1:], stdout, stderr)
	case "sessions":
		err = sessionsCmd(args[1:], stdout, stderr)
	case "prices":
		err = pricesCmd(args[1:], stdout, stderr)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, versionString())
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "tollgate: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	return exitCode(err, stdout, stderr)
}

// exitCode prints what err says and returns the exit code: 0 for none or
// for a help request (the help goes to stdout), 2 for a usage mistake
// (printed once, with where to find help), 1 for any other failure.
func exitCode(err error, stdout, stderr io.Writer) int {
	var he *helpRequest
	var ue *usageErr
	switch {
	case err == nil:
		return 0
	case errors.As(err, &he):
		he.fs.SetOutput(stdout)
		he.fs.Usage()
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "tollgate %s: %s\nRun 'tollgate %s --help' for usage.\n", ue.cmd, ue.msg, ue.cmd)
		return 2
	case errors.Is(err, errUsage):
		return 2
	}
	fmt.Fprintln(stderr, "tollgate:", err)
	return 1
}

// synopses head each command's help.
var synopses = map[string]string{
	"serve":               "tollgate serve [--config FILE] [--addr HOST:PORT]\n\nRun the gateway until SIGINT or SIGTERM, then drain in-flight requests.",
	"check-config":        "tollgate check-config [--config FILE]\n\nValidate a configuration and print its models, targets and limits (secrets masked);\nwarn, on stderr, of the targets nothing prices.",
	"migrate":             "tollgate migrate [--config FILE]\n\nApply the database migrations and exit (serve applies them too).",
	"backup":              "tollgate backup [--config FILE] DEST\n\nCopy the SQLite database to the new file DEST with SQLite's online backup API: a consistent copy\nwhile the gateway runs. Restore: stop the gateway, put the copy in the database's place (remove its\n-wal and -shm files), start it. PostgreSQL: use pg_dump.",
	"healthcheck":         "tollgate healthcheck [--url http://127.0.0.1:8080] [--path /readyz]\n\nAsk a running gateway whether it is ready; exit code 0 on 200, else 1 (for container health checks).",
	"keys create":         "tollgate keys create --name NAME [--models a,b] [--expires 720h] [--metadata JSON] [--user USER [--team TEAM]] [LIMITS] [--json]\n\nCreate a virtual key and print it (once: only its hash is stored).",
	"keys update":         "tollgate keys update ID [--name NAME] [--models a,b] [--expires 720h|never] [--user USER|none] [--team TEAM|none] [LIMITS] [--json]\n\nChange a virtual key; flags not given are left as they are.",
	"keys list":           "tollgate keys list [--json]\n\nList the virtual keys.",
	"keys revoke":         "tollgate keys revoke ID\n\nRevoke a virtual key: it is refused from then on (gateways notice within a few seconds).",
	"users list":          "tollgate users list [--team TEAM] [--query TEXT] [--json]\n\nList the users.",
	"users show":          "tollgate users show USER [--json]\n\nShow a user (ID, subject or email), their teams and their keys.",
	"users create":        "tollgate users create --subject SUBJECT [--email E] [--name N] [--team TEAM] [--models a,b] [--admin] [LIMITS] [--json]\n\nCreate a user; --team makes them a member of their primary team.",
	"users update":        "tollgate users update USER [--email E] [--name N] [--team TEAM|none] [--models a,b|*] [--admin=true|false] [LIMITS] [--json]\n\nChange a user; flags not given are left as they are.",
	"users disable":       "tollgate users disable USER\n\nDisable a user: their sign-in tokens are revoked and they are refused until enabled.",
	"users enable":        "tollgate users enable USER\n\nEnable a disabled user; they sign in again.",
	"users delete":        "tollgate users delete USER\n\nDelete a user and their memberships, and revoke their keys and sign-in tokens. Their usage records stay.",
	"teams list":          "tollgate teams list [--json]\n\nList the teams.",
	"teams show":          "tollgate teams show TEAM [--json]\n\nShow a team (ID or name) and its members.",
	"teams create":        "tollgate teams create --name NAME [--idp-groups a,b] [--models a,b] [--managed-settings FILE] [LIMITS [--per-member]] [--json]\n\nCreate a team.",
	"teams update":        "tollgate teams update TEAM [--name NAME] [--idp-groups a,b] [--models a,b|*] [--managed-settings FILE|none] [LIMITS [--per-member]] [--json]\n\nChange a team; flags not given are left as they are. Teams of the configuration file are changed there.",
	"teams delete":        "tollgate teams delete TEAM\n\nDelete a team and its memberships.",
	"teams add-member":    "tollgate teams add-member TEAM USER\n\nMake a user a member of a team (sign-ins leave the membership alone).",
	"teams remove-member": "tollgate teams remove-member TEAM USER\n\nEnd a user's membership of a team.",
	"audit":               "tollgate audit [--actor ID] [--action A] [--target ID] [--since 7d] [--until T] [--limit 50] [--before ID] [--json]\n\nList the audit log, newest first: who created, changed or revoked keys, users and teams, and who signed in.",
	"prices check":        "tollgate prices check FILE [--model ID]\n\nRead a price file in LiteLLM's model_prices_and_context_window.json format and list what it prices, per million tokens;\nentries it cannot use are listed on stderr. Exit code 1 when the file prices nothing.",
	"usage":               "tollgate usage [--since 24h] [--by model|key|day|provider|user|team|session] [--key NAME] [--user USER] [--team TEAM] [--format table|json|csv]\n\nSum tokens and cost from the usage ledger.",
	"sessions":            "tollgate sessions [--user USER] [--team TEAM] [--key NAME] [--since 7d] [--until T] [--limit 50] [--json]\n\nList agent sessions (the session ids clients such as Claude Code send), the most recently active first,\nwith their requests, tokens, cost and the share of their prompt read from the cache.",
}

// newFlagSet is a command's flag set. It prints nothing itself: parse
// errors and help requests come back as errors for exitCode.
func newFlagSet(name string, _ io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: %s\n\nFlags:\n", cmp.Or(synopses[name], "tollgate "+name+" [flags]"))
		fs.PrintDefaults()
	}
	return fs
}

// errUsage is a usage mistake whose explanation is already printed.
var errUsage = errors.New("usage")

// usageErr is a usage mistake in a command: exit code 2.
type usageErr struct{ cmd, msg string }

func (e *usageErr) Error() string { return e.cmd + ": " + e.msg }

// usageError reports a usage mistake in fs's command.
func usageError(fs *flag.FlagSet, format string, args ...any) error {
	return &usageErr{cmd: fs.Name(), msg: fmt.Sprintf(format, args...)}
}

// helpRequest is -h or --help: the command's help, exit code 0.
type helpRequest struct{ fs *flag.FlagSet }

func (h *helpRequest) Error() string { return "help requested" }

// flagError turns a parse error into a help request or a usage mistake.
func flagError(fs *flag.FlagSet, err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return &helpRequest{fs}
	}
	return &usageErr{cmd: fs.Name(), msg: err.Error()}
}

// parseFlags parses args, allowing flags after positional arguments
// ("keys revoke ID --config f.yaml").
func parseFlags(fs *flag.FlagSet, args []string) error {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return flagError(fs, err)
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if err := fs.Parse(append([]string{"--"}, pos...)); err != nil {
		return flagError(fs, err)
	}
	return nil
}

// configPath is --config, else $TOLLGATE_CONFIG, else "" (zero-config).
func configPath(flagValue string) string {
	if flagValue != "" {
		return flagValue
	}
	return os.Getenv("TOLLGATE_CONFIG")
}
