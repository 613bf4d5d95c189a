// Command bench runs Strata side by side with PostgreSQL, SQLite and
// DuckDB on one deterministic workload (issue 6) and reports every measure
// as a time, a throughput and a ratio to Strata embedded, measured in the
// same run because the machine is shared and noisy.
//
//	cd bench && go run . -scale small -out ../docs/benchmarks.md
//
// It is its own module so the main module never depends on the peers'
// drivers. Every system's R2 and R3 answers must equal Strata's, and
// Strata's must equal an in-memory model of the workload, or the run exits
// with status 1 and writes nothing.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// config is the command line.
type config struct {
	scale   Scale
	seed    uint64
	systems []string
	out     string
	json    string
	lookups int
	reps    int
	minTime time.Duration
	keep    bool
	cpuProf string
	// firstProf profiles R2's first run alone; state prints each system's
	// storage state (stater) right before it, after it and before R1.
	firstProf string
	// ingestProf profiles the W1 phase (every system's ingest) alone.
	ingestProf string
	// ingestTrace is where W1's Go execution trace goes (-ingesttrace).
	ingestTrace string
	state       bool
	// quiet settles each system (its merges done) before R1 and R4.
	quiet bool
	// lookupProf profiles the lookups of R1 and R4 alone.
	lookupProf string
	// settledProf profiles the lookups of R1 settled alone.
	settledProf string
	// perfCtl is a perf record --control FIFO: recording is enabled
	// around each embedded lookup phase, and the slowest lookups' thread
	// and monotonic times are printed to match its samples to them.
	perfCtl string
	// lookupCPU measures each in-process lookup's thread CPU time and
	// page faults, with system calls around it (lookupCPUHelp).
	lookupCPU bool
	// allocProf is a heap profile written right after the first
	// system's W1, its alloc_space counting what W1 allocated.
	allocProf string
	// engineLog is a file the embedded engine's log is written to at
	// debug level (merges and why each ran, idle prewarm passes, splits,
	// warnings), with times; the strata-pg server's goes to
	// engineLog.strata-pg.
	engineLog string
	// bulk names the systems whose state is bulk-loaded instead of
	// ingested: W1 is not measured for them (bulkLoad).
	bulk map[string]bool
}

// lookupCPUHelp says what -lookup-cpu costs. Reading a thread's CPU clock
// and its page faults are system calls, four around each lookup; on a
// virtual machine with page-table isolation and no PCID (this one) every
// system call flushes the TLB, so the lookup after it starts cold: 1–3 µs
// more at the median of in-process lookups (docs/benchmarks.md, session
// of 2026-12-06, seventh). So the diagnostic is asked for, not the default.
const lookupCPUHelp = "measure each in-process lookup's thread CPU time and page faults (four system calls around each; on a machine without PCID they flush the TLB and slow the lookups they surround)"

var allSystems = []string{"strata", "strata-pg", "postgres", "sqlite", "duckdb"}

func parseFlags(args []string) (*config, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	scale := fs.String("scale", "small", "small (100 k keys, 1 M versions), medium (1 M / 10 M) or full (5 M / 50 M)")
	seed := fs.Uint64("seed", 1, "the workload's seed: the same seed gives the same rows")
	systems := fs.String("systems", strings.Join(allSystems, ","), "comma-separated systems to run")
	out := fs.String("out", "", "markdown file whose bench section (between the bench:begin/end markers) is rewritten")
	js := fs.String("json", "", "write the results as a JSON list of {measure, system, scale, value, unit}")
	lookups := fs.Int("lookups", 10_000, "random keys for the point lookups R1 and R4")
	reps := fs.Int("reps", 5, "timed repetitions of R2, R3 and R5, at least (the median is reported)")
	minTime := fs.Duration("min-time", 200*time.Millisecond, "repeat R2, R3 and R5 beyond -reps until their runs take this long together (at most 1 000 runs)")
	keep := fs.Bool("keep", false, "keep the data directories (their path is printed)")
	cpuProf := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	firstProf := fs.String("firstprofile", "", "write a CPU profile of R2's first run alone to this file (not with -cpuprofile)")
	ingestProf := fs.String("ingestprofile", "", "write a CPU profile of the W1 ingest phase alone to this file (not with -cpuprofile or -firstprofile)")
	ingestTrace := fs.String("ingesttrace", "", "write a Go execution trace of the W1 ingest phase alone to this file (go tool trace -pprof=sync|syscall|sched FILE says where the goroutines waited)")
	state := fs.Bool("state", false, "print each system's storage state (parts per shard) right before R2's first run, after it, and before R1")
	lookupProf := fs.String("lookupprofile", "", "write a CPU profile of R1's and R4's lookups alone to this file (not with -cpuprofile)")
	settledProf := fs.String("settledprofile", "", "write a CPU profile of R1 settled's lookups alone to this file (not with -cpuprofile)")
	perfCtl := fs.String("perfctl", "", "a FIFO that `perf record --control fifo:FIFO -D -1 -k mono` reads: recording is enabled around each in-process lookup phase, and the slowest 1 % of lookups are printed with their thread id and CLOCK_MONOTONIC times to match the samples with")
	allocProf := fs.String("allocprofile", "", "write a heap profile right after the first system's W1 ingest (its alloc_space sample is what ingest allocated, the harness's generator included)")
	bulk := fs.String("bulk", "", "comma-separated systems (duckdb) whose state is bulk-loaded rather than ingested batch by batch: every read measure, no W1 (see README)")
	lookupCPU := fs.Bool("lookup-cpu", false, lookupCPUHelp)
	engineLog := fs.String("engine-log", "", "write Strata embedded's engine log at debug level (each merge with its reason and time, idle prewarm passes, splits, and its warnings, which then do not go to standard error) to this file, and the strata-pg server's to FILE.strata-pg")
	quiet := fs.Bool("quiet-lookups", false, "let background merges finish before R1 and R4 (by default they run right after R2 and R3, possibly during post-ingest merges)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	sc, ok := Scales[*scale]
	if !ok {
		return nil, fmt.Errorf("-scale %q: want tiny, small, medium or full", *scale)
	}
	c := &config{scale: sc, seed: *seed, out: *out, json: *js, lookups: *lookups, reps: *reps, minTime: *minTime, keep: *keep, cpuProf: *cpuProf,
		firstProf: *firstProf, ingestProf: *ingestProf, ingestTrace: *ingestTrace, state: *state, quiet: *quiet, lookupProf: *lookupProf, settledProf: *settledProf, allocProf: *allocProf, perfCtl: *perfCtl, lookupCPU: *lookupCPU, engineLog: *engineLog}
	profs := 0
	for _, p := range []string{c.cpuProf, c.firstProf, c.ingestProf, c.lookupProf, c.settledProf} {
		if p != "" {
			profs++
		}
	}
	if profs > 1 {
		return nil, errors.New("-cpuprofile, -firstprofile, -ingestprofile, -lookupprofile and -settledprofile: one CPU profile at a time")
	}
	seen := map[string]bool{}
	for s := range strings.SplitSeq(*systems, ",") {
		s = strings.TrimSpace(s)
		if s == "" || seen[s] {
			continue
		}
		if !contains(allSystems, s) {
			return nil, fmt.Errorf("-systems: unknown system %q (have %s)", s, strings.Join(allSystems, ", "))
		}
		seen[s] = true
		c.systems = append(c.systems, s)
	}
	if len(c.systems) == 0 {
		return nil, errors.New("-systems: name at least one system")
	}
	c.bulk = map[string]bool{}
	for s := range strings.SplitSeq(*bulk, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		if !slices.Contains(bulkSystems, s) {
			return nil, fmt.Errorf("-bulk: %q has no bulk load (have %s)", s, strings.Join(bulkSystems, ", "))
		}
		c.bulk[s] = true
	}
	if c.lookups < 1 || c.reps < 1 {
		return nil, errors.New("-lookups and -reps must be at least 1")
	}
	return c, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func run(args []string) int {
	cfg, err := parseFlags(args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 2
	}
	if cfg.cpuProf != "" {
		f, err := os.Create(cfg.cpuProf)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			return 2
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			return 2
		}
		defer pprof.StopCPUProfile()
	}
	// An interrupt cancels the run, so the systems are still closed (the
	// PostgreSQL server stopped, the directories removed).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	m := machineInfo()
	fmt.Printf("bench: scale %s (%d keys, %d versions), seed %d, systems %s\n", cfg.scale.Name, cfg.scale.Keys, cfg.scale.Versions, cfg.seed, strings.Join(cfg.systems, ","))
	fmt.Printf("machine: %s\n", m)
	rep, err := runAll(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	rep.Machine = m
	rep.Elapsed = time.Since(start)
	fmt.Println()
	fmt.Print(rep.Table())
	fmt.Print(rep.Targets())
	if len(rep.Failures) > 0 {
		fmt.Fprintln(os.Stderr, "bench: VERIFICATION FAILED:")
		for _, f := range rep.Failures {
			fmt.Fprintln(os.Stderr, "  "+f)
		}
		return 1
	}
	fmt.Printf("verified: every system's R2 and R3 equal Strata's; Strata's equal the in-memory model (%s)\n", rep.Elapsed.Round(time.Second))
	if cfg.json != "" {
		if err := rep.WriteJSON(cfg.json); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			return 1
		}
	}
	if cfg.out != "" {
		if err := rep.WriteMarkdown(cfg.out, args); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			return 1
		}
		fmt.Printf("wrote %s\n", cfg.out)
	}
	return 0
}
