// Package sdk holds end-to-end tests that drive the gateway with the
// official Anthropic, OpenAI and Google Gen AI Go SDKs (and Google's
// JavaScript SDK through node), against fake upstreams that serve
// realistic provider transcripts. It has no non-test code.
package sdk
