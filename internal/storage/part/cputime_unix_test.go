//go:build unix

package part

import (
	"syscall"
	"time"
)

// processCPU is the user and system CPU time the test process has used:
// benchmarks report it per operation, which other load on a shared
// machine disturbs far less than wall time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
