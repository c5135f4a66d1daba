// Package units reads and writes the amounts operators type: exact
// decimals with up to nine places, held as integers of billionths (nano-USD,
// or nano-USD per million tokens), and durations with a day unit.
package units

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// Errors from ParseNano.
var (
	ErrSyntax    = errors.New("not a decimal number")
	ErrPrecision = errors.New("more than nine decimal places")
	ErrRange     = errors.New("too large")
)

// ParseNano reads a non-negative decimal such as "3", "0.075" or "12.5"
// into billionths, exactly (never through a float).
func ParseNano(s string) (int64, error) {
	whole, frac, dot := strings.Cut(strings.TrimSpace(s), ".")
	if whole == "" || dot && frac == "" || !digits(whole) || !digits(frac) {
		return 0, ErrSyntax
	}
	if len(frac) > 9 {
		return 0, ErrPrecision
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || w > maxWhole {
		return 0, ErrRange
	}
	f, _ := strconv.ParseInt((frac + "000000000")[:9], 10, 64)
	return w*1e9 + f, nil
}

// maxWhole keeps whole*1e9 + fraction within an int64.
const maxWhole = (1<<63-1)/1_000_000_000 - 1

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// FormatNano writes billionths as a decimal with at least minDecimals
// places and no trailing zeros beyond them: FormatNano(1_500_000_000, 0)
// is "1.5", FormatNano(2e9, 2) is "2.00".
func FormatNano(n int64, minDecimals int) string {
	var b [32]byte
	var scratch [10]byte
	out := b[:0]
	if n < 0 {
		out, n = append(out, '-'), -n
	}
	out = strconv.AppendInt(out, n/1e9, 10)
	f := strconv.AppendInt(scratch[:0], n%1e9+1e9, 10)[1:] // nine digits, leading zeros kept
	keep := len(f)
	for keep > minDecimals && f[keep-1] == '0' {
		keep--
	}
	if keep > 0 {
		out = append(append(out, '.'), f[:keep]...)
	}
	return string(out)
}

// ParseDuration is time.ParseDuration with a day unit ("7d"), for whole
// days only; negative durations are refused.
func ParseDuration(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 || n > 100_000 {
			return 0, errors.New("invalid duration " + strconv.Quote(s))
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, errors.New("invalid duration " + strconv.Quote(s))
	}
	return d, nil
}
