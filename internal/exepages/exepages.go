// Package exepages gives back the pages of the gateway's own executable
// that it mapped but no longer uses.
//
// Most of an idle gateway's resident memory is its executable: tens of MB
// of code, read-only data and function tables, faulted in at start by the
// runtime's and every package's initialisation (and, where a disk reads
// ahead by megabytes, by each fault's read-around), then never touched
// again. Those pages are clean copies of the file: unmapping them loses
// nothing, they stay in the page cache, and a page used again comes back
// with a minor fault. Trim unmaps them, so that resident memory is what
// the gateway uses rather than what starting it touched.
package exepages

// Stats is what Trim found and gave back.
type Stats struct {
	// Mappings is how many of the executable's read-only mappings were
	// trimmed; Skipped, how many held private (modified) pages and were
	// left alone.
	Mappings, Skipped int
	// ResidentKB is what those mappings held resident before.
	ResidentKB int64
}
