// Package scrub takes the identifiers of the operator's upstream accounts
// (ARNs, AWS account ids, Google projects, API keys or their fragments)
// out of upstream text before it reaches a client; the text itself goes
// to the log.
package scrub

import "regexp"

// redacted replaces an identifier of the operator's account; a pattern's
// first group, if any, is what names it ("projects/"), and stays.
const redacted = "${1}[redacted]"

// accountIDs match what names the operator's account in an upstream's
// words. None matches a quote or a backslash, so that scrubbing a JSON
// body leaves it JSON.
var accountIDs = []*regexp.Regexp{
	// AWS: ARNs (a role, an inference profile; a full stop or a bracket
	// after one ends the sentence, not the ARN), account ids, access key ids.
	regexp.MustCompile(`\barn:aws[a-z-]*:[^\s"'\\<>,;()]*[^\s"'\\<>,;().]`),
	regexp.MustCompile(`\b[0-9]{12}\b`),
	regexp.MustCompile(`\b(?:AKIA|ASIA)[A-Z0-9]{16}\b`),
	// Google: projects in resource paths, project numbers and ids in words
	// (an id has a digit or a hyphen, so that "project settings" stays),
	// service accounts, whose address names the project.
	regexp.MustCompile(`\b(projects/)[^/\s"'\\]+`),
	regexp.MustCompile(`(?i)\b(project(?:_number|_id| number| id)?[ =:]+'?)(?:[a-z][a-z0-9-]*[0-9-][a-z0-9-]*[a-z0-9]|[0-9]{6,})\b`),
	regexp.MustCompile(`[A-Za-z0-9._%+-]+@[a-z0-9-]+\.iam\.gserviceaccount\.com`),
	// Keys, whole or partly masked: Google's, OpenAI's and Anthropic's,
	// Azure's (32 hex digits).
	regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{8,}`),
	regexp.MustCompile(`\bsk-[A-Za-z0-9_*-]{8,}`),
	regexp.MustCompile(`\b[0-9a-fA-F]{32}\b`),
	// Organisations and subscriptions by UUID: Anthropic's organisation
	// ("org: 9d50ef40-…" in its rate-limit messages), Azure's subscriptions.
	regexp.MustCompile(`\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b`),
	// OpenAI: organisations and projects.
	regexp.MustCompile(`\borg-[A-Za-z0-9]{8,}`),
	regexp.MustCompile(`\bproj_[A-Za-z0-9]{8,}`),
}

// String replaces the identifiers of the operator's account in an
// upstream's text (ARNs, AWS account ids, Google projects, API keys or
// their fragments) with a neutral placeholder.
func String(s string) string {
	for _, re := range accountIDs {
		s = re.ReplaceAllString(s, redacted)
	}
	return s
}

// Bytes is String for a body; b itself when nothing matched.
func Bytes(b []byte) []byte {
	out := b
	for _, re := range accountIDs {
		if re.Match(out) {
			out = re.ReplaceAll(out, []byte(redacted))
		}
	}
	return out
}
