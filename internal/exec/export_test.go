package exec

// SetParallel turns parallel aggregation on or off (agg_parallel.go) and
// returns the previous setting.
func SetParallel(on bool) bool {
	was := !parallelOff
	parallelOff = !on
	return was
}

// ParallelRuns is the number of aggregates that have started helpers.
func ParallelRuns() int64 { return parallelRuns.Load() }
