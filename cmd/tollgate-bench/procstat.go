package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// CPU accounting of a measured process.
//
// Two sources are read at each sample:
//
//   - /proc/PID/task/*/schedstat, first field: nanoseconds each thread has
//     spent on a CPU. /proc/PID/schedstat alone covers only the main thread,
//     so the per-thread values are summed. This is precise to the nanosecond
//     but loses the time of threads that exit between two samples.
//   - /proc/PID/stat, fields utime+stime: the whole thread group, exited
//     threads included, but in clock ticks (USER_HZ, which the kernel ABI
//     fixes at 100 on Linux: 10 ms per tick).
//
// The delta of the summed schedstat is used, unless the stat delta exceeds
// it by more than two ticks plus 2%: then a thread has exited in between and
// the coarser but complete stat delta is used. The method chosen is
// reported with each result.

// userHZ is sysconf(_SC_CLK_TCK): 100 on every Linux architecture Go runs on.
const userHZ = 100

type cpuSample struct {
	schedNS int64 // sum over threads of schedstat run time
	statNS  int64 // (utime+stime) ticks converted to ns
}

func readCPU(pid int) (cpuSample, error) {
	var s cpuSample
	var err error
	if s.statNS, err = readStatCPU(pid); err != nil {
		return s, err
	}
	if s.schedNS, err = readSchedstatCPU(pid); err != nil {
		return s, err
	}
	return s, nil
}

// cpuDelta returns the CPU nanoseconds between two samples and the source used.
func cpuDelta(before, after cpuSample) (int64, string) {
	sched := after.schedNS - before.schedNS
	stat := after.statNS - before.statNS
	slack := 2*int64(1e9/userHZ) + stat/50
	if sched < 0 || stat > sched+slack {
		return stat, "stat"
	}
	return sched, "schedstat"
}

func readStatCPU(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may contain spaces and parentheses; the
	// fields after the last ')' start at field 3 (state).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64) // field 14
	stime, err2 := strconv.ParseInt(f[12], 10, 64) // field 15
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: bad utime/stime", pid)
	}
	return (utime + stime) * (1e9 / userHZ), nil
}

func readSchedstatCPU(pid int) (int64, error) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var total int64
	n := 0
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "schedstat"))
		if err != nil {
			continue // thread exited while we walked the directory
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		total += v
		n++
	}
	if n == 0 {
		return 0, fmt.Errorf("%s: no readable schedstat", dir)
	}
	return total, nil
}

// readStatusKB returns a "kB" field of /proc/PID/status, e.g. VmRSS or VmHWM.
func readStatusKB(pid int, field string) (int64, error) {
	return readStatusKBFile(fmt.Sprintf("/proc/%d/status", pid), field)
}
