// Package chaos drives the gateway against upstreams that fail at random,
// in every way an LLM API fails, and checks that clients are served
// whenever a target is healthy, that nothing hangs, and that the ledger and
// the metrics account for every attempt.
package chaos
