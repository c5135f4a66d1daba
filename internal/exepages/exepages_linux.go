//go:build linux

package exepages

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// Trim unmaps the resident pages of the executable's read-only mappings
// (code, read-only data), which are clean copies of the file, and asks the
// kernel not to read ahead around later faults in them.
//
// A page written to is not a copy of the file, and unmapping it would
// lose the write, so a mapping is left alone when it may hold one: when
// it overlaps the executable's RELRO segment (relocations written at
// load, then made read-only: cgo and PIE builds have one), or when smaps
// shows it any anonymous or swapped page, or does not say.
//
// With dropCache, the file's pages no process maps are dropped from the
// page cache as well. Start-up's read-ahead put them in large folios,
// which a fault maps whole, so a page used again would bring its
// neighbours back with it; read again one by one, only what is used comes
// back. That costs the first requests after it some reads (tens of ms in
// all), so it is for start-up.
func Trim(dropCache bool) (Stats, error) {
	var st Stats
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return st, err
	}
	relro, err := exeRelro()
	if err != nil {
		return st, err
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return st, err
	}
	maps, err := parseSmaps(f, exe)
	f.Close()
	if err != nil {
		return st, err
	}
	for _, m := range maps {
		if !m.clean() || m.overlaps(relro) {
			st.Skipped++
			continue
		}
		// MADV_RANDOM first: a page faulted in again is read alone, not
		// with megabytes around it.
		if err := madvise(m.start, m.end, unix.MADV_RANDOM); err != nil {
			return st, fmt.Errorf("madvise random %x-%x: %w", m.start, m.end, err)
		}
		if err := madvise(m.start, m.end, unix.MADV_DONTNEED); err != nil {
			return st, fmt.Errorf("madvise dontneed %x-%x: %w", m.start, m.end, err)
		}
		st.Mappings++
		st.ResidentKB += m.rssKB
	}
	if dropCache && st.Mappings > 0 {
		if f, err := os.Open("/proc/self/exe"); err == nil {
			unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
			f.Close()
		}
	}
	return st, nil
}

// madvise advises on [start, end), given as addresses: the executable's
// mappings are not Go memory, and need no slice over them.
func madvise(start, end uintptr, advice int) error {
	if _, _, e := unix.Syscall(unix.SYS_MADVISE, start, end-start, uintptr(advice)); e != 0 {
		return e
	}
	return nil
}

// exeRelro is the executable's RELRO, read once: it does not change while
// the process runs, and Trim runs at every burst's end.
var exeRelro = sync.OnceValues(func() ([]span, error) { return relroRanges("/proc/self/exe") })

// span is a range of file offsets.
type span struct{ off, end uint64 }

// relroRanges are the file offsets of the executable's PT_GNU_RELRO
// segments.
func relroRanges(path string) ([]span, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []span
	for _, p := range f.Progs {
		if p.Type == elf.PT_GNU_RELRO {
			out = append(out, span{p.Off, p.Off + max(p.Filesz, p.Memsz)})
		}
	}
	return out, nil
}

// mapping is one of the executable's readable, non-writable, private
// mappings.
type mapping struct {
	start, end     uintptr
	offset         uint64 // of the file, at start
	rssKB          int64
	anonKB, swapKB int64 // -1 when smaps did not say
}

// clean reports whether smaps says the mapping holds only the file's own
// pages.
func (m mapping) clean() bool { return m.anonKB == 0 && m.swapKB == 0 }

// overlaps reports whether the file offsets the mapping covers meet any
// of spans.
func (m mapping) overlaps(spans []span) bool {
	lo, hi := m.offset, m.offset+uint64(m.end-m.start)
	for _, s := range spans {
		if lo < s.end && s.off < hi {
			return true
		}
	}
	return false
}

// parseSmaps reads /proc/self/smaps for the mappings of the file at path
// (as /proc/self/exe names it) that are readable, private and not
// writable (r-xp, r--p).
func parseSmaps(r io.Reader, path string) ([]mapping, error) {
	var out []mapping
	var cur *mapping
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if hdr, ok := parseHeader(line); ok {
			cur = nil
			perms := hdr.perms
			if hdr.path != path || len(perms) < 4 || perms[0] != 'r' || perms[1] != '-' || perms[3] != 'p' {
				continue
			}
			out = append(out, mapping{start: hdr.start, end: hdr.end, offset: hdr.offset, anonKB: -1, swapKB: -1})
			cur = &out[len(out)-1]
			continue
		}
		if cur == nil {
			continue
		}
		name, rest, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) == 0 {
			continue
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			continue
		}
		switch string(name) {
		case "Rss":
			cur.rssKB = kb
		case "Anonymous":
			cur.anonKB = kb
		case "Swap":
			cur.swapKB = kb
		}
	}
	return out, sc.Err()
}

type header struct {
	start, end uintptr
	perms      string
	offset     uint64
	path       string
}

// parseHeader reads a mapping's first line in smaps:
//
//	start-end perms offset dev inode [path]
//
// The path is the rest of the line and may hold spaces.
func parseHeader(line []byte) (header, bool) {
	var h header
	rest := line
	field := func() []byte {
		rest = bytes.TrimLeft(rest, " ")
		i := bytes.IndexByte(rest, ' ')
		if i < 0 {
			f := rest
			rest = nil
			return f
		}
		f := rest[:i]
		rest = rest[i:]
		return f
	}
	lo, hi, ok := bytes.Cut(field(), []byte("-"))
	if !ok {
		return h, false
	}
	start, err1 := strconv.ParseUint(string(lo), 16, 64)
	end, err2 := strconv.ParseUint(string(hi), 16, 64)
	if err1 != nil || err2 != nil || end <= start {
		return h, false
	}
	h.start, h.end = uintptr(start), uintptr(end)
	h.perms = string(field())
	off, err := strconv.ParseUint(string(field()), 16, 64)
	if err != nil {
		return h, false
	}
	h.offset = off
	field() // dev
	if _, err := strconv.ParseUint(string(field()), 10, 64); err != nil {
		return h, false
	}
	h.path = string(bytes.TrimSpace(rest))
	return h, true
}
