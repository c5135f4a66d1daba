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

// SplitInputs is Split that also keeps each batch's text within maxBytes
// (0: no bound), for an upstream that bounds the tokens of a request
// (Vertex AI: 20,000). A single input larger than maxBytes is a batch of
// its own: the upstream judges it.
func SplitInputs(inputs []Input, max, maxBytes int) [][2]int {
	if maxBytes <= 0 {
		return Split(len(inputs), max)
	}
	var out [][2]int
	from, size := 0, 0
	for i, in := range inputs {
		n := len(in.Text) + 8*len(in.Tokens)
		if i > from && (i-from == max && max > 0 || size+n > maxBytes) {
			out = append(out, [2]int{from, i})
			from, size = i, 0
		}
		size += n
	}
	if from < len(inputs) {
		out = append(out, [2]int{from, len(inputs)})
	}
	return out
}
