//go:build linux

package exepages

import (
	"os"
	"slices"
	"syscall"
	"testing"
)

func TestParseSmaps(t *testing.T) {
	f, err := os.Open("testdata/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := parseSmaps(f, fileID{dev: "fe:00", ino: 9978225})
	if err != nil {
		t.Fatal(err)
	}
	// The code and read-only data; not the writable data, the anonymous
	// mappings or the database's shared memory.
	want := []mapping{
		{start: 0x400000, end: 0x17f5000, rssKB: 13164},
		{start: 0x17f5000, end: 0x3237000, rssKB: 10104},
	}
	if !slices.Equal(got, want) {
		t.Errorf("parseSmaps = %+v\nwant %+v", got, want)
	}
	f.Seek(0, 0)
	if got, _ := parseSmaps(f, fileID{dev: "fe:01", ino: 9978225}); len(got) != 0 {
		t.Errorf("another device's file with the same inode: %+v", got)
	}
}

func TestDevName(t *testing.T) {
	for _, c := range []struct {
		dev  uint64
		want string
	}{
		{0xfe00, "fe:00"},
		{0x0803, "08:03"},
		{0x10305, "103:05"}, // a major above 0xff
	} {
		if got := devName(c.dev); got != c.want {
			t.Errorf("devName(%#x) = %s, want %s", c.dev, got, c.want)
		}
	}
}

// TestTrimItself trims this test's own executable and goes on running:
// the code it runs next comes back from the file, and what it no longer
// runs is no longer resident.
func TestTrimItself(t *testing.T) {
	resident := func() (kb int64) {
		exe, err := os.Stat("/proc/self/exe")
		if err != nil {
			t.Fatal(err)
		}
		sys := exe.Sys().(*syscall.Stat_t)
		f, err := os.Open("/proc/self/smaps")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		maps, err := parseSmaps(f, fileID{dev: devName(uint64(sys.Dev)), ino: sys.Ino})
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
	if st.Mappings == 0 || st.ResidentKB < before/2 {
		t.Errorf("Trim: %+v, with %d KB resident before", st, before)
	}
	if before > 2048 && after > before/2 {
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
