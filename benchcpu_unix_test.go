//go:build unix

package strata

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user + system) the process has used so far.
// On a loaded machine wall time per statement is mostly waiting; the
// process's CPU per statement is what the statement costs (it includes any
// background work of the engine's in the same interval, which a flushed and
// merged database no longer does).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
