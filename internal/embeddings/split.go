package embeddings

// Split cuts n inputs into consecutive batches of at most max: [from, to)
// pairs, in order. n <= 0 gives none; max <= 0 means no limit (one batch).
func Split(n, max int) [][2]int {
	if n <= 0 {
		return nil
	}
	if max <= 0 || max >= n {
		return [][2]int{{0, n}}
	}
	out := make([][2]int, 0, (n+max-1)/max)
	for from := 0; from < n; from += max {
		out = append(out, [2]int{from, min(from+max, n)})
	}
	return out
}
