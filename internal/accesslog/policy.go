package accesslog

import (
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/tollgate/tollgate/internal/outcome"
)

// Mode is which requests get a line.
type Mode uint8

const (
	// All writes a line for every request (the default).
	All Mode = iota
	// None writes no request lines: the ledger and the metrics still
	// record every request.
	None
	// Errors writes the lines of failed requests only.
	Errors
	// Sample writes every failed request's line and one in every N of
	// the others.
	Sample
)

// Policy decides which requests get a line. It is safe for concurrent
// use, and Set may change it while requests are served (a reload); the
// zero Policy, like a nil one, keeps every line.
type Policy struct {
	// setting packs the mode (top byte) and N (the rest), so that a
	// request never sees one without the other.
	setting atomic.Uint64
	seen    atomic.Uint64
}

// NewPolicy returns a Policy set to mode and every (Sample's N).
func NewPolicy(mode Mode, every uint64) *Policy {
	p := new(Policy)
	p.Set(mode, every)
	return p
}

// Set changes the policy for the requests that end from now on. every
// is Sample's N; below 1 it is 1.
func (p *Policy) Set(mode Mode, every uint64) {
	every = max(every, 1)
	p.setting.Store(uint64(mode)<<56 | every&(1<<56-1))
}

// Keep reports whether r gets a line.
func (p *Policy) Keep(r *outcome.Request) bool {
	if p == nil {
		return true
	}
	s := p.setting.Load()
	switch Mode(s >> 56) {
	case None:
		return false
	case Errors:
		return Failed(r)
	case Sample:
		if Failed(r) {
			return true
		}
		every := s & (1<<56 - 1)
		// One counter for every request: N requests in, one line out,
		// whichever goroutines they ran on.
		return (p.seen.Add(1)-1)%every == 0
	}
	return true
}

// Failed reports whether r counts as an error for the errors and sample
// modes: the client was answered with an error status, or the request
// ended with an error (an upstream that failed mid-stream, a client that
// left, a request with no answer at all).
func Failed(r *outcome.Request) bool {
	return r.Status == 0 || r.Status >= 400 || r.Err != nil || r.ClientGone
}

// ParseMode reads logging.access: on, off, errors or sample(N) with N ≥ 1
// ("" is on). It returns Sample's N as every (1 for the other modes).
func ParseMode(s string) (mode Mode, every uint64, err error) {
	switch s {
	case "", "on":
		return All, 1, nil
	case "off":
		return None, 1, nil
	case "errors":
		return Errors, 1, nil
	}
	if n, ok := strings.CutPrefix(s, "sample("); ok {
		if n, ok = strings.CutSuffix(n, ")"); ok {
			v, err := strconv.ParseUint(strings.TrimSpace(n), 10, 32)
			if err == nil && v >= 1 {
				return Sample, v, nil
			}
		}
	}
	return All, 1, fmt.Errorf("must be on, off, errors or sample(N) with N a whole number from 1, not %q", s)
}

// SetFrom sets the policy from a logging.access setting; on an error it
// is left as it was.
func (p *Policy) SetFrom(setting string) error {
	mode, every, err := ParseMode(setting)
	if err != nil {
		return err
	}
	p.Set(mode, every)
	return nil
}
