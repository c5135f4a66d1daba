package cli

import (
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/tollgate/tollgate/internal/pricing"
)

// loadCatalogue is the prices of models without their own: the price
// files in order, then the built-in catalogue.
func loadCatalogue(files []string) (*pricing.Catalogue, error) {
	builtin, err := pricing.Builtin()
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return builtin, nil
	}
	cats := make([]*pricing.Catalogue, 0, len(files)+1)
	for i, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("pricing.files[%d]: %w", i, err)
		}
		c, _, err := pricing.ParseLiteLLM(data)
		if err != nil {
			return nil, fmt.Errorf("pricing.files[%d] (%s): %w", i, f, err)
		}
		cats = append(cats, c)
	}
	return pricing.Merge(append(cats, builtin)...), nil
}

func pricesCmd(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "check" {
		fs := newFlagSet("prices check", stdout)
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			return &helpRequest{fs}
		}
		return usageError(fs, "want: tollgate prices check FILE")
	}
	fs := newFlagSet("prices check", stdout)
	model := fs.String("model", "", "show only this model id")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError(fs, "want one price file")
	}
	data, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	c, skipped, err := pricing.ParseLiteLLM(data)
	for _, s := range skipped {
		fmt.Fprintf(stderr, "skipped %s: %s\n", s.Model, s.Reason)
	}
	if err != nil {
		return err
	}
	ids := c.Models()
	if *model != "" {
		if c.Lookup(*model) == nil {
			return fmt.Errorf("%s prices no model %q", fs.Arg(0), *model)
		}
		ids = []string{*model}
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "model\tinput\toutput\tcache read\tcache write 5m\tcache write 1h\treasoning\tabove 200k in/out\t")
	for _, id := range ids {
		p := c.Lookup(id)
		tier := "-"
		if t := p.LongPrompt; t != nil {
			tier = t.Prices.Input.String() + " / " + t.Prices.Output.String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", id, p.Input, p.Output, p.CacheRead, p.CacheWrite5m, p.CacheWrite1h, p.Reasoning, tier)
	}
	tw.Flush()
	for _, r := range c.Rounded {
		fmt.Fprintf(stderr, "rounded %s: %s\n", r.Model, r.Detail)
	}
	fmt.Fprintf(stdout, "\n%d model ids priced (USD per million tokens), %d entries skipped, %d prices rounded to the nano-USD\n", len(ids), len(skipped), len(c.Rounded))
	return nil
}
