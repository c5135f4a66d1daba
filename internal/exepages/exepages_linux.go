//go:build linux

package exepages

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"
)

// Trim unmaps the resident pages of the executable's read-only mappings
// (code, read-only data), which are clean copies of the file, and asks the
// kernel not to read ahead around later faults in them. A mapping holding
// a page of its own (anonymous: one written to, as relocations are) is
// left alone, since unmapping it would lose the write.
//
// With dropCache, the file's pages no process maps are dropped from the
// page cache as well. Start-up's read-ahead put them in large folios,
// which a fault maps whole, so a page used again would bring its
// neighbours back with it; read again one by one, only what is used comes
// back. That costs the first requests after it some reads (tens of ms in
// all), so it is for start-up.
func Trim(dropCache bool) (Stats, error) {
	var st Stats
	exe, err := os.Stat("/proc/self/exe")
	if err != nil {
		return st, err
	}
	sys := exe.Sys().(*syscall.Stat_t)
	file := fileID{dev: devName(uint64(sys.Dev)), ino: sys.Ino}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return st, err
	}
	defer f.Close()
	maps, err := parseSmaps(f, file)
	if err != nil {
		return st, err
	}
	defer func() {
		if st.Mappings == 0 || !dropCache {
			return
		}
		if exe, err := os.Open("/proc/self/exe"); err == nil {
			fadvise(exe.Fd(), 4 /* POSIX_FADV_DONTNEED */)
			exe.Close()
		}
	}()
	for _, m := range maps {
		if m.anonKB > 0 {
			st.Skipped++
			continue
		}
		// MADV_RANDOM first: a page faulted in again is read alone, not
		// with megabytes around it.
		if err := madvise(m.start, m.end-m.start, syscall.MADV_RANDOM); err != nil {
			return st, fmt.Errorf("madvise random %x-%x: %w", m.start, m.end, err)
		}
		if err := madvise(m.start, m.end-m.start, syscall.MADV_DONTNEED); err != nil {
			return st, fmt.Errorf("madvise dontneed %x-%x: %w", m.start, m.end, err)
		}
		st.Mappings++
		st.ResidentKB += m.rssKB
	}
	return st, nil
}

func fadvise(fd uintptr, advice int) {
	syscall.Syscall6(syscall.SYS_FADVISE64, fd, 0, 0, uintptr(advice), 0, 0)
}

func madvise(addr, n uintptr, advice int) error {
	if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, addr, n, uintptr(advice)); e != 0 {
		return e
	}
	return nil
}

// mapping is one of the executable's read-only, non-writable mappings.
type mapping struct {
	start, end    uintptr
	rssKB, anonKB int64
}

// fileID names a file as /proc/PID/smaps does: its device as "major:minor"
// in hex, and its inode.
type fileID struct {
	dev string
	ino uint64
}

// devName writes a device number as smaps does.
func devName(dev uint64) string {
	major := (dev>>8)&0xfff | (dev>>32)&^0xfff
	minor := dev&0xff | (dev>>12)&^0xff
	return fmt.Sprintf("%02x:%02x", major, minor)
}

// parseSmaps reads /proc/self/smaps for the mappings of file that are
// readable and not writable (r-xp, r--p).
func parseSmaps(r io.Reader, file fileID) ([]mapping, error) {
	var out []mapping
	var cur *mapping
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		fields := bytes.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if isHeader(fields[0]) {
			cur = nil
			// start-end perms offset dev inode [path]
			if len(fields) < 5 {
				continue
			}
			perms := fields[1]
			n, err := strconv.ParseUint(string(fields[4]), 10, 64)
			if err != nil || n != file.ino || string(fields[3]) != file.dev || len(perms) < 4 || perms[0] != 'r' || perms[1] != '-' || perms[3] != 'p' {
				continue
			}
			lo, hi, ok := bytes.Cut(fields[0], []byte("-"))
			if !ok {
				continue
			}
			start, err1 := strconv.ParseUint(string(lo), 16, 64)
			end, err2 := strconv.ParseUint(string(hi), 16, 64)
			if err1 != nil || err2 != nil || end <= start {
				continue
			}
			out = append(out, mapping{start: uintptr(start), end: uintptr(end)})
			cur = &out[len(out)-1]
			continue
		}
		if cur == nil || len(fields) < 2 {
			continue
		}
		kb, err := strconv.ParseInt(string(fields[1]), 10, 64)
		if err != nil {
			continue
		}
		switch string(fields[0]) {
		case "Rss:":
			cur.rssKB = kb
		case "Anonymous:":
			cur.anonKB = kb
		}
	}
	return out, sc.Err()
}

// isHeader reports whether a smaps line's first field is an address
// range (a mapping's first line) rather than "Name:".
func isHeader(f []byte) bool {
	return len(f) > 0 && f[len(f)-1] != ':' && bytes.IndexByte(f, '-') > 0
}
