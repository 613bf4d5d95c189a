//go:build !unix

package strata

import "time"

// processCPU is not measured off Unix: cpu-ns/op then reads 0.
func processCPU() time.Duration { return 0 }
