//go:build linux

package exepages

import (
	"os"
	"slices"
	"strings"
	"testing"
)

func TestParseSmaps(t *testing.T) {
	f, err := os.Open("testdata/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := parseSmaps(f, "/tmp/idle/tollgate")
	if err != nil {
		t.Fatal(err)
	}
	// The code and read-only data; not the writable data, the anonymous
	// mappings or the database's shared memory.
	want := []mapping{
		{start: 0x400000, end: 0x17f5000, offset: 0, rssKB: 13164},
		{start: 0x17f5000, end: 0x3237000, offset: 0x13f5000, rssKB: 10104},
	}
	if !slices.Equal(got, want) {
		t.Errorf("parseSmaps = %+v\nwant %+v", got, want)
	}
	for _, m := range got {
		if !m.clean() {
			t.Errorf("%x-%x is not clean", m.start, m.end)
		}
	}
	f.Seek(0, 0)
	if got, _ := parseSmaps(f, "/tmp/idle/tollgate2"); len(got) != 0 {
		t.Errorf("another file: %+v", got)
	}
}

// TestParseSmapsKeepsWrittenPages: a mapping with a page of its own, in
// memory or swapped out, or one smaps says nothing about, is not clean.
func TestParseSmapsKeepsWrittenPages(t *testing.T) {
	const head = "00400000-00401000 r--p 00001000 fe:00 42                         /opt/my gateway/tollgate (deleted)\nRss:                   4 kB\n"
	for _, c := range []struct {
		name, lines string
		clean       bool
	}{
		{"clean", "Anonymous:             0 kB\nSwap:                  0 kB\n", true},
		{"anonymous", "Anonymous:             4 kB\nSwap:                  0 kB\n", false},
		{"swapped", "Anonymous:             0 kB\nSwap:                  4 kB\n", false},
		{"no swap line", "Anonymous:             0 kB\n", false},
		{"no anonymous line", "Swap:                  0 kB\n", false},
	} {
		got, err := parseSmaps(strings.NewReader(head+c.lines), "/opt/my gateway/tollgate (deleted)")
		if err != nil || len(got) != 1 {
			t.Fatalf("%s: %+v, %v", c.name, got, err)
		}
		if got[0].offset != 0x1000 || got[0].clean() != c.clean {
			t.Errorf("%s: %+v, clean %v", c.name, got[0], got[0].clean())
		}
	}
}

func TestOverlaps(t *testing.T) {
	m := mapping{start: 0x1000, end: 0x3000, offset: 0x5000} // file 0x5000-0x7000
	for _, c := range []struct {
		s    span
		want bool
	}{
		{span{0x4000, 0x5000}, false},
		{span{0x4000, 0x5001}, true},
		{span{0x6000, 0x6008}, true},
		{span{0x6fff, 0x8000}, true},
		{span{0x7000, 0x8000}, false},
	} {
		if got := m.overlaps([]span{c.s}); got != c.want {
			t.Errorf("overlaps(%#x-%#x) = %v", c.s.off, c.s.end, got)
		}
	}
}

// TestTrimItself trims this test's own executable and goes on running:
// the code it runs next comes back from the file, and what it no longer
// runs is no longer resident.
func TestTrimItself(t *testing.T) {
	resident := func() (kb int64) {
		exe, err := os.Readlink("/proc/self/exe")
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Open("/proc/self/smaps")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		maps, err := parseSmaps(f, exe)
		if err != nil || len(maps) == 0 {
			t.Fatalf("the executable's mappings: %v, %v", maps, err)
		}
		for _, m := range maps {
			kb += m.rssKB
		}
		return kb
	}
	before := resident()
	st, err := Trim(false)
	if err != nil {
		t.Fatal(err)
	}
	after := resident()
	t.Logf("resident: %d KB before, %d KB after; %+v", before, after, st)
	if st.Mappings == 0 {
		t.Errorf("Trim: %+v, with %d KB resident before", st, before)
	}
	if st.Skipped == 0 && before > 2048 && after > before/2 {
		t.Errorf("still resident after Trim: %d KB of %d", after, before)
	}
	// And again, dropping the page cache: everything keeps working.
	if _, err := Trim(true); err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(slices.Values([]int{3, 1, 2})); !slices.Equal(got, []int{1, 2, 3}) {
		t.Fatal(got)
	}
}
