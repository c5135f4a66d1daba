package embeddings

import (
	"fmt"
	"strconv"
)

// Helpers shared by the upstream request builders.

// errTokens refuses token arrays for the upstreams that only take text:
// turning tokens back into text would need the client's tokenizer.
var errTokens = &Error{Param: "input", Message: "input: this model takes text, not token arrays"}

// checkBatch refuses token inputs (the client's fault) and a batch the
// caller should have split (the gateway's).
func checkBatch(inputs []Input, max int, who string) error {
	if len(inputs) == 0 || len(inputs) > max {
		return fmt.Errorf("embeddings: %s: %d inputs in one request, want 1 to %d", who, len(inputs), max)
	}
	for _, in := range inputs {
		if in.Tokens != nil {
			return errTokens
		}
	}
	return nil
}

// textSize is what the texts take quoted, for sizing a request buffer.
func textSize(inputs []Input) int {
	n := 0
	for _, in := range inputs {
		n += len(in.Text) + 2
	}
	return n + n/16
}

// oneOf refuses dimensions outside the sizes an upstream documents.
func oneOf(dims int, allowed ...int) error {
	for _, a := range allowed {
		if dims == a {
			return nil
		}
	}
	msg := "dimensions: this model takes "
	for i, a := range allowed {
		switch {
		case i == len(allowed)-1:
			msg += " or "
		case i > 0:
			msg += ", "
		}
		msg += strconv.Itoa(a)
	}
	return &Error{Param: "dimensions", Message: msg}
}
