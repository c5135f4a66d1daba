// Package ssetest reads event streams in tests the way the gateway's
// relay reads them off the network.
package ssetest

import "github.com/tollgate/tollgate/internal/sse"

// Poison is what a poisoned buffer holds where its bytes were consumed.
const Poison = 0xFF

// Replay splits up into events as the relay does, reading it in the
// pieces next gives (at least a byte each) into one reused buffer, and
// calls event with each complete event: a slice of that buffer. When
// poisoned, an event's bytes are overwritten as soon as event returns
// (the rest of the buffer moves over them and what is left is filled with
// Poison), and so is the old array when the buffer grows: whatever keeps
// a view into an event past the call that was handed it reads garbage.
// event returns false to stop. Replay returns the bytes of up that formed
// complete events.
func Replay(up []byte, next func() int, poisoned bool, event func(ev []byte) bool) int {
	rd := make([]byte, 0, 16)
	done := 0
	for i := 0; i < len(up); {
		piece := up[i:min(i+max(next(), 1), len(up))]
		i += len(piece)
		if len(rd)+len(piece) > cap(rd) {
			grown := make([]byte, len(rd), 2*(len(rd)+len(piece)))
			copy(grown, rd)
			if poisoned {
				fill(rd[:cap(rd)])
			}
			rd = grown
		}
		rd = append(rd, piece...)
		for {
			k := sse.Split(rd)
			if k == 0 {
				break
			}
			more := event(rd[:k])
			done += k
			rest := copy(rd, rd[k:])
			if poisoned {
				fill(rd[rest:])
			}
			rd = rd[:rest]
			if !more {
				return done
			}
		}
	}
	return done
}

// Pieces returns a next for Replay that gives n bytes at a time.
func Pieces(n int) func() int { return func() int { return n } }

func fill(b []byte) {
	for i := range b {
		b[i] = Poison
	}
}
