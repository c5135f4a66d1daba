//go:build !linux

package exepages

// Trim does nothing where the executable's mappings cannot be read.
func Trim(dropCache bool) (Stats, error) { return Stats{}, nil }
