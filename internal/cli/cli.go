// Package cli implements the tollgate command: it parses arguments, loads
// configuration and wires the packages together. Nothing imports it but
// cmd/tollgate.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// Version is set at build time with -ldflags "-X github.com/tollgate/tollgate/internal/cli.Version=…".
var Version = "dev"

const usage = `tollgate: an LLM API gateway speaking the Anthropic Messages and OpenAI Chat Completions APIs.

Usage:
  tollgate serve [--config FILE] [--addr HOST:PORT]   run the gateway
  tollgate check-config --config FILE                 validate a config and print its routes
  tollgate migrate [--config FILE]                    apply database migrations and exit
  tollgate keys create|list|revoke …                  manage virtual keys (tollgate keys help)
  tollgate usage [--since 24h] [--by model|key|day|provider] [--format table|json|csv]
                                                      sum tokens and cost from the usage ledger
  tollgate version                                    print the version

Without --config (or TOLLGATE_CONFIG) serve runs the built-in echo model.
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
		err = checkConfig(args[1:], stdout)
	case "migrate":
		err = migrate(args[1:], stdout)
	case "keys":
		err = keys(args[1:], stdout, stderr)
	case "usage":
		err = usageCmd(args[1:], stdout, stderr)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, "tollgate", Version)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "tollgate: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if err != nil {
		if errors.Is(err, errUsage) {
			return 2
		}
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "tollgate:", err)
		}
		return 1
	}
	return 0
}

func newFlagSet(name string, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(out)
	return fs
}

// errUsage is a usage mistake whose explanation is already printed.
var errUsage = errors.New("usage")

// parseFlags parses args, allowing flags after positional arguments
// ("keys revoke ID --config f.yaml").
func parseFlags(fs *flag.FlagSet, args []string) error {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	return fs.Parse(append([]string{"--"}, pos...))
}

// configPath is --config, else $TOLLGATE_CONFIG, else "" (zero-config).
func configPath(flagValue string) string {
	if flagValue != "" {
		return flagValue
	}
	return os.Getenv("TOLLGATE_CONFIG")
}
