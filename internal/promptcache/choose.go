package promptcache

// MaxBreakpoints is the most cache_control marks a request may carry
// (the client's and tollgate's together).
const MaxBreakpoints = 4

// spot is a place a breakpoint can go.
type spot uint8

const (
	spotTools    spot = iota // the last tool definition
	spotSystem               // the last block of the system prompt
	spotPrevUser             // the user turn before the latest: what the previous request wrote
	spotLastUser             // the latest user turn: what the next request will read
	numSpots
)

// preference is the order spots are taken in when fewer marks are left
// than spots: the rolling pair carries the conversation, which is most of
// an agent's prompt; the tools and system marks pay off when a new
// conversation starts with the same ones.
var preference = [...]spot{spotLastUser, spotPrevUser, spotSystem, spotTools}

// layout is what the policy knows of a request.
type layout struct {
	// prefix is the estimated tokens of the prompt up to and including
	// each spot; -1 when the request has no such spot.
	prefix [numSpots]int64
	// marked: the client already marked that spot.
	marked [numSpots]bool
	// existing counts the client's marks, anywhere in the request.
	existing int
	// has5m, has1h: TTLs the client's marks use.
	has5m, has1h bool
}

func newLayout() layout {
	var l layout
	for i := range l.prefix {
		l.prefix[i] = -1
	}
	return l
}

// choose decides which spots to mark, and with which TTL.
func choose(l *layout, o Options) (picks [numSpots]bool, ttl TTL, n int) {
	ttl = o.TTL
	if l.existing > 0 {
		if o.OnlyIfNone || l.has5m && l.has1h {
			return picks, ttl, 0
		}
		// The API wants longer TTLs before shorter ones; marks of the
		// client's one TTL keep any order valid.
		if l.has1h {
			ttl = TTL1h
		} else {
			ttl = TTL5m
		}
	}
	budget := MaxBreakpoints - l.existing
	for _, s := range preference {
		if budget == 0 {
			break
		}
		if l.prefix[s] < o.min() || l.marked[s] {
			continue // absent, too short to be cached, or the client's
		}
		picks[s] = true
		budget--
		n++
	}
	return picks, ttl, n
}

// estimate is tokens for a length in bytes: about four bytes a token.
func estimate(bytes int) int64 { return int64(bytes+3) / 4 }
