package units

import (
	"errors"
	"testing"
	"time"
)

func TestParseNano(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		err  error
	}{
		{"3", 3e9, nil}, {"0.075", 75e6, nil}, {"0.1", 1e8, nil}, {"0.000000001", 1, nil}, {" 12.5 ", 12_500_000_000, nil},
		{"9223372035", 9_223_372_035e9, nil},
		{"", 0, ErrSyntax}, {"-1", 0, ErrSyntax}, {"1e3", 0, ErrSyntax}, {"1.", 0, ErrSyntax}, {".5", 0, ErrSyntax}, {"1.2.3", 0, ErrSyntax},
		{"0.0000000001", 0, ErrPrecision}, {"9223372036", 0, ErrRange}, {"99999999999999999999", 0, ErrRange},
	} {
		got, err := ParseNano(tc.in)
		if got != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("ParseNano(%q) = %d, %v; want %d, %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestFormatNano(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		min  int
		want string
	}{
		{0, 0, "0"}, {1, 0, "0.000000001"}, {1e9, 0, "1"}, {-5e8, 0, "-0.5"}, {12_345_000_000, 0, "12.345"},
		{0, 2, "0.00"}, {2_657_500, 2, "0.0026575"}, {12_340_000_000, 2, "12.34"}, {-5e9, 2, "-5.00"}, {1, 2, "0.000000001"},
	} {
		if got := FormatNano(tc.n, tc.min); got != tc.want {
			t.Errorf("FormatNano(%d, %d) = %q, want %q", tc.n, tc.min, got, tc.want)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{"7d": 7 * 24 * time.Hour, "90m": 90 * time.Minute, "0d": 0} {
		if got, err := ParseDuration(in); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"-1d", "-5m", "xd", "soon", "1.5d"} {
		if _, err := ParseDuration(in); err == nil {
			t.Errorf("ParseDuration(%q) accepted", in)
		}
	}
}
