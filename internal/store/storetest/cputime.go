package storetest

import "time"

// ReportCPU reports, on b, the process's CPU time since start per record
// written (cpu-µs/record; the database's own CPU with SQLite, which runs
// in the process, the client's alone with PostgreSQL).
func ReportCPU(b interface{ ReportMetric(float64, string) }, start time.Duration, records int) {
	if used := CPUTime() - start; start > 0 && records > 0 {
		b.ReportMetric(float64(used.Nanoseconds())/float64(records)/1000, "cpu-µs/record")
	}
}
