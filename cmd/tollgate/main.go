// Command tollgate is an LLM API gateway: one endpoint that speaks both the
// Anthropic Messages API and the OpenAI Chat Completions API.
package main

import (
	"os"

	"github.com/tollgate/tollgate/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
