package tokens

import (
	"math"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	loader "github.com/pkoukk/tiktoken-go-loader"
)

// vocabulary is o200k_base's tokens (byte strings) and their merge ranks.
type vocabulary struct {
	ranks map[string]int
	pairs []int32 // rank of each two-byte token at b0<<8|b1, else noRank: the most looked up
}

// vocab is embedded in the binary and loaded on first use: about 0.2 s
// and 20 MiB that a gateway which never counts should not pay at start.
var vocab = sync.OnceValues(func() (*vocabulary, error) {
	loaded.Store(true)
	ranks, err := loader.NewOfflineLoader().LoadTiktokenBpe("o200k_base.tiktoken")
	if err != nil {
		return nil, err
	}
	v := &vocabulary{ranks: ranks, pairs: make([]int32, 1<<16)}
	for i := range v.pairs {
		v.pairs[i] = noRank
	}
	for tok, r := range ranks {
		if len(tok) == 2 {
			v.pairs[int(tok[0])<<8|int(tok[1])] = int32(r)
		}
	}
	return v, nil
})

// loaded is set once the vocabulary is being loaded.
var loaded atomic.Bool

// VocabularyLoaded reports whether this process has loaded the
// vocabulary: a start-up or a request that does not count tokens must
// not (what tests of start-up check).
func VocabularyLoaded() bool { return loaded.Load() }

// maxPiece bounds the bytes merged at once. Byte-pair merging works on a
// whole piece, and text can make one piece of anything: a megabyte of one
// letter, of lower-case letters, of white space or of punctuation is a
// single piece. A longer piece is counted in chunks of maxPiece bytes
// (cut on character boundaries), each merged on its own, so that the
// work per byte is bounded (merging is O(n log n) in the piece) and the
// merge's memory too. Pieces of ordinary text, words and runs of
// punctuation or of ideographs between two stops, are far shorter, and
// their counts are exact.
//
// How far a chunked count may be from the exact one: TestChunkedCount
// holds it to one token per chunk boundary (one per 4 KiB) on ten kinds
// of such text, which would be 3% for the text of longest tokens (white
// space, 32 tokens a chunk). Measured on 1 MiB of each, the difference is
// +0.009% for lower-case letters at random, +0.05% for "abc" repeated,
// and none for one letter (upper or lower case), one ideograph, spaces,
// newlines or one punctuation character. Digits and base64 make short
// pieces, and their counts are exact.
const maxPiece = 4 << 10

// noRank marks a pair that is not a token.
const noRank = math.MaxInt32

// merger counts the tokens of one piece by byte-pair merges, as tiktoken
// does (the lowest-ranked adjacent pair first, the leftmost of equals),
// with a heap instead of a scan for the lowest pair. Its buffers are kept
// between pieces.
type merger struct {
	next, prev []int32  // next[i], prev[i]: start of the part after, before the part at i
	rank       []int32  // rank[i]: rank of the part at i joined to the next, or noRank
	heap       []uint64 // rank<<32 | i, lowest first; stale entries skipped
	steps      int      // heap steps and rank look-ups
}

// count returns the number of tokens of piece (at least 2 bytes, not a
// token itself).
func (m *merger) count(piece string, v *vocabulary) int {
	n := len(piece)
	m.next, m.prev, m.rank = resize(m.next, n), resize(m.prev, n), resize(m.rank, n)
	m.heap = m.heap[:0]
	pair := func(i int32) int32 {
		m.steps++
		j := m.next[i]
		if int(j) >= n {
			return noRank
		}
		end := m.next[j]
		if end-i == 2 {
			return v.pairs[int(piece[i])<<8|int(piece[i+1])]
		}
		if r, ok := v.ranks[piece[i:end]]; ok {
			return int32(r)
		}
		return noRank
	}
	for i := range int32(n) {
		m.next[i], m.prev[i] = i+1, i-1
	}
	for i := range int32(n) {
		m.rank[i] = pair(i)
		m.push(m.rank[i], i)
	}
	parts := n
	for len(m.heap) > 0 {
		r, i := m.pop()
		if m.rank[i] != r {
			continue // stale: the part was merged or its pair changed
		}
		j := m.next[i]
		m.next[i] = m.next[j]
		if int(m.next[j]) < n {
			m.prev[m.next[j]] = i
		}
		m.rank[j] = noRank
		parts--
		m.rank[i] = pair(i)
		m.push(m.rank[i], i)
		if p := m.prev[i]; p >= 0 {
			m.rank[p] = pair(p)
			m.push(m.rank[p], p)
		}
	}
	return parts
}

func resize(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}

func (m *merger) push(rank, i int32) {
	if rank == noRank {
		return
	}
	h := append(m.heap, uint64(rank)<<32|uint64(i))
	k := len(h) - 1
	for k > 0 {
		m.steps++
		parent := (k - 1) / 2
		if h[parent] <= h[k] {
			break
		}
		h[parent], h[k] = h[k], h[parent]
		k = parent
	}
	m.heap = h
}

func (m *merger) pop() (rank, i int32) {
	h := m.heap
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	k := 0
	for {
		m.steps++
		least, l, r := k, 2*k+1, 2*k+2
		if l < len(h) && h[l] < h[least] {
			least = l
		}
		if r < len(h) && h[r] < h[least] {
			least = r
		}
		if least == k {
			break
		}
		h[k], h[least] = h[least], h[k]
		k = least
	}
	m.heap = h
	return int32(top >> 32), int32(top & math.MaxUint32)
}

// chunkLen returns the length of the first chunk of a piece: at most
// maxPiece bytes, ending on a character boundary.
func chunkLen(piece string) int {
	if len(piece) <= maxPiece {
		return len(piece)
	}
	end := maxPiece
	for end > maxPiece-utf8.UTFMax && !utf8.RuneStart(piece[end]) {
		end--
	}
	return end
}
