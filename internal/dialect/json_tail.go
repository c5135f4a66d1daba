package dialect

import "bytes"

// topMember finds the value of the member key of the JSON object d by
// reading d from its end: Google writes usageMetadata after the
// candidates, so the bytes read are the few that follow it, not the
// answer's text. ok is false when d is not an object this reading can
// follow (or the key is spelled with escapes): the caller then parses d
// from its start. Of a key given twice, the last is found. d is taken
// to be one JSON value: what precedes the object is not read.
func topMember(d []byte, key string) (v []byte, found, ok bool) {
	i := trimBack(d, len(d))
	if i == 0 || d[i-1] != '}' {
		return nil, false, false
	}
	i = trimBack(d, i-1)
	if i > 0 && d[i-1] == '{' {
		return nil, false, trimBack(d, i-1) == 0 // {}
	}
	for {
		end := i
		start := valueBack(d, end)
		if start < 0 {
			return nil, false, false
		}
		i = trimBack(d, start)
		if i == 0 || d[i-1] != ':' {
			return nil, false, false
		}
		i = trimBack(d, i-1)
		ks := stringBack(d, i)
		if ks < 0 {
			return nil, false, false
		}
		k := d[ks+1 : i-1]
		if bytes.IndexByte(k, '\\') >= 0 {
			return nil, false, false
		}
		if string(k) == key {
			return d[start:end], true, true
		}
		i = trimBack(d, ks)
		switch {
		case i > 0 && d[i-1] == ',':
			i = trimBack(d, i-1)
		case i > 0 && d[i-1] == '{':
			return nil, false, trimBack(d, i-1) == 0
		default:
			return nil, false, false
		}
	}
}

// trimBack returns i less the JSON white space before it.
func trimBack(d []byte, i int) int {
	for i > 0 && (d[i-1] == ' ' || d[i-1] == '\n' || d[i-1] == '\r' || d[i-1] == '\t') {
		i--
	}
	return i
}

// stringBack returns the index of the opening quote of the string that
// ends at end (exclusive), or -1. Inside a JSON string every quote is
// escaped, so the opening one is the first unescaped quote before the
// closing one.
func stringBack(d []byte, end int) int {
	if end < 2 || d[end-1] != '"' {
		return -1
	}
	j := end - 1
	for {
		j = bytes.LastIndexByte(d[:j], '"')
		if j < 0 {
			return -1
		}
		k := j
		for k > 0 && d[k-1] == '\\' {
			k--
		}
		if (j-k)%2 == 0 {
			return j
		}
	}
}

// valueBack returns the index at which the JSON value ending at end
// (exclusive) starts, or -1.
func valueBack(d []byte, end int) int {
	if end == 0 {
		return -1
	}
	switch d[end-1] {
	case '"':
		return stringBack(d, end)
	case '}', ']':
		depth := 0
		for j := end - 1; j >= 0; j-- {
			switch d[j] {
			case '"':
				if j = stringBack(d, j+1); j < 0 {
					return -1
				}
			case '}', ']':
				depth++
			case '{', '[':
				if depth--; depth == 0 {
					return j
				}
			}
		}
		return -1
	}
	j := end
	for j > 0 {
		switch d[j-1] {
		case ' ', '\n', '\r', '\t', ':', ',', '[', '{', '"', '}', ']':
			if j == end {
				return -1
			}
			return j
		}
		j--
	}
	return -1
}
