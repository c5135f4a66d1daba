// Package sdk holds end-to-end tests that drive the gateway with the
// official Anthropic and OpenAI Go SDKs, against fake upstreams that serve
// realistic provider transcripts. It has no non-test code.
package sdk
