// Package cputime reads the process's CPU time for benchmarks. On this
// project's shared 2-core machines wall time per operation mostly measures
// the neighbours; the process's CPU per operation is what the operation
// costs (including the engine's background work in the same interval).
package cputime
