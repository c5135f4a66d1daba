package accesslog

import (
	"errors"
	"sync"
	"testing"

	"github.com/tollgate/tollgate/internal/outcome"
)

func TestParseMode(t *testing.T) {
	for _, c := range []struct {
		in    string
		mode  Mode
		every uint64
		bad   bool
	}{
		{"", All, 1, false},
		{"on", All, 1, false},
		{"off", None, 1, false},
		{"errors", Errors, 1, false},
		{"sample(1)", Sample, 1, false},
		{"sample(100)", Sample, 100, false},
		{"sample( 7 )", Sample, 7, false},
		{"sample(0)", All, 1, true},
		{"sample(-3)", All, 1, true},
		{"sample(1e3)", All, 1, true},
		{"sample(x)", All, 1, true},
		{"sample(5", All, 1, true},
		{"sample()", All, 1, true},
		{"sample(99999999999)", All, 1, true},
		{"ON", All, 1, true},
		{"true", All, 1, true},
		{"error", All, 1, true},
	} {
		mode, every, err := ParseMode(c.in)
		if (err != nil) != c.bad || mode != c.mode || every != c.every {
			t.Errorf("ParseMode(%q) = %v, %d, %v; want %v, %d, error %v", c.in, mode, every, err, c.mode, c.every, c.bad)
		}
	}
}

func TestPolicyKeep(t *testing.T) {
	ok := &outcome.Request{Status: 200}
	reqs := map[string]*outcome.Request{
		"ok":           ok,
		"client 4xx":   {Status: 404},
		"upstream 5xx": {Status: 502, Err: errors.New("upstream")},
		"no answer":    {Status: 0},
		"cut stream":   {Status: 200, Err: errors.New("upstream closed")},
		"client gone":  {Status: 200, ClientGone: true},
	}
	for _, c := range []struct {
		setting string
		keepOK  bool
		keepBad bool
	}{
		{"on", true, true},
		{"off", false, false},
		{"errors", false, true},
	} {
		p := new(Policy)
		if err := p.SetFrom(c.setting); err != nil {
			t.Fatal(err)
		}
		for name, r := range reqs {
			want := c.keepBad
			if r == ok {
				want = c.keepOK
			}
			if got := p.Keep(r); got != want {
				t.Errorf("%s: Keep(%s) = %v, want %v", c.setting, name, got, want)
			}
		}
	}
	var nilPolicy *Policy
	if !nilPolicy.Keep(&outcome.Request{Status: 200}) || !new(Policy).Keep(ok) {
		t.Error("a nil or zero Policy drops lines")
	}
}

func TestPolicySample(t *testing.T) {
	p := NewPolicy(Sample, 4)
	var kept []int
	for i := range 10 {
		if p.Keep(&outcome.Request{Status: 200}) {
			kept = append(kept, i)
		}
	}
	if want := []int{0, 4, 8}; len(kept) != len(want) || kept[0] != 0 || kept[1] != 4 || kept[2] != 8 {
		t.Errorf("sample(4) kept requests %v of 10, want %v", kept, want)
	}
	for range 5 {
		if !p.Keep(&outcome.Request{Status: 500}) {
			t.Fatal("sample(4) dropped a failed request")
		}
	}

	// One in N over every goroutine together.
	p = NewPolicy(Sample, 10)
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for range 8 {
		wg.Go(func() {
			n := 0
			for range 1000 {
				if p.Keep(&outcome.Request{Status: 200}) {
					n++
				}
			}
			mu.Lock()
			total += n
			mu.Unlock()
		})
	}
	wg.Wait()
	if total != 800 {
		t.Errorf("sample(10) over 8,000 concurrent requests kept %d lines, want 800", total)
	}

	// A change applies to the next request.
	p.Set(None, 1)
	if p.Keep(&outcome.Request{Status: 500}) {
		t.Error("off after Set still keeps lines")
	}
	if err := p.SetFrom("sample(0)"); err == nil || p.Keep(&outcome.Request{Status: 500}) {
		t.Errorf("a refused setting changed the policy (err %v)", err)
	}
}
