//go:build !unix

package cputime

import "time"

// Process is 0 where getrusage does not exist: benchmarks report no CPU.
func Process() time.Duration { return 0 }
