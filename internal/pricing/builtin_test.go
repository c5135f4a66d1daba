package pricing

import "testing"

// The shipped catalogue parses, is dated, and prices what it lists.
func TestBuiltinCatalogue(t *testing.T) {
	c, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	if c.Taken == "" || c.Len() < 20 {
		t.Errorf("taken %q, %d model ids", c.Taken, c.Len())
	}
	for id, p := range c.models {
		if !p.Input.IsSet() || !p.Output.IsSet() {
			t.Errorf("%s: no input or output price", id)
		}
	}
}
