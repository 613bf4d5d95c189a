package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/schollz/progressbar/v3"
)

// Measure names, in the order the table shows them.
const (
	mW1      = "W1 ingest"
	mW1Time  = "W1 time"
	mR1p50   = "R1 point p50"
	mR1p99   = "R1 point p99"
	mR2      = "R2 aggregate current"
	mR3      = "R3 aggregate AS OF middle"
	mR2first = "R2 first run"
	mR3first = "R3 first run"
	mR4p50   = "R4 AS OF point p50"
	mR4p99   = "R4 AS OF point p99"
	mR1sp50  = "R1 settled p50"
	mR1sp99  = "R1 settled p99"
	mR5      = "R5 versions of one key"
	mS1      = "S1 bytes after ingest"
	mS1v     = "S1 bytes per version"
	mSettle  = "settle time"
	mS1s     = "S1 bytes after settle"
	unitRows = "rows/s"
	unitSec  = "s"
	unitUs   = "µs"
	unitMs   = "ms"
	unitB    = "bytes"
)

var measureOrder = []string{mW1, mW1Time, mR1p50, mR1p99, mR2, mR2first, mR3, mR3first, mR4p50, mR4p99, mR5, mS1, mS1v, mSettle, mS1s, mR1sp50, mR1sp99, mR1wp50, mR1wp99}

// higherBetter lists the throughput measures; everything else is a cost.
var higherBetter = map[string]bool{mW1: true}

// Result is one measured value.
type Result struct {
	Measure string  `json:"measure"`
	System  string  `json:"system"`
	Scale   string  `json:"scale"`
	Value   float64 `json:"value"`
	Unit    string  `json:"unit"`
}

// Report is one run.
type Report struct {
	Scale       Scale
	Seed        uint64
	Systems     []string
	Results     map[string]map[string]Result // system → measure → result
	Unavailable map[string]string            // system → why it did not run
	Notes       []string
	Failures    []string
	Late, Rep   int
	Distinct    int
	Batches     int
	Machine     string
	Elapsed     time.Duration
}

func (r *Report) add(sys, measure string, v float64, unit string) {
	if r.Results[sys] == nil {
		r.Results[sys] = map[string]Result{}
	}
	r.Results[sys][measure] = Result{measure, sys, r.Scale.Name, v, unit}
}

func (r *Report) fail(format string, args ...any) {
	r.Failures = append(r.Failures, fmt.Sprintf(format, args...))
}

func newSystem(name string, cfg *config) System {
	seed := cfg.seed
	switch name {
	case "strata":
		x := newStrataEmbedded(seed)
		x.logPath = cfg.engineLog
		return x
	case "strata-pg":
		x := &strataPG{seed: seed}
		if cfg.engineLog != "" {
			x.logPath = cfg.engineLog + ".strata-pg"
		}
		return x
	case "postgres":
		return newPostgres(seed)
	case "sqlite":
		return newSQLite(seed)
	case "duckdb":
		return newDuckDB(seed)
	}
	panic("bench: unknown system " + name) // parseFlags admits only allSystems
}

func bar(n int, desc string) *progressbar.ProgressBar {
	return progressbar.NewOptions(n,
		progressbar.OptionSetWriter(os.Stderr),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(250*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
}

// lookupKeys draws the keys of R1 and R4, the same for every system.
func lookupKeys(cfg *config) []int32 {
	return drawKeys(cfg.seed^0x6c6f6f6b757073, cfg.lookups, cfg.scale.Keys)
}

// warmKeys draws the keys of the warm-up before each lookup phase
// (warmLookups), from another stream than lookupKeys': random keys, a few
// of which may also be timed keys.
func warmKeys(cfg *config) []int32 {
	return drawKeys(cfg.seed^0x7761726d7570, warmLookups(cfg.lookups), cfg.scale.Keys)
}

func drawKeys(seed uint64, n, keys int) []int32 {
	r := rng{seed}
	ks := make([]int32, n)
	for i := range ks {
		ks[i] = int32(r.intn(keys))
	}
	return ks
}

// warmSummary describes a warm-up's latencies: its p50 and p99, and the
// median of its first 50 lookups, where a cold start shows.
func warmSummary(ds []time.Duration) string {
	first := slices.Clone(ds[:min(len(ds), 50)])
	slices.Sort(first)
	all := slices.Clone(ds)
	slices.Sort(all)
	return fmt.Sprintf("%d lookups of random keys: p50 %.0f µs, p99 %.0f µs; its first %d p50 %.0f µs",
		len(ds), us(quantile(all, 0.5)), us(quantile(all, 0.99)), len(first), us(quantile(first, 0.5)))
}

// warmLookups is how many warm-up lookups, timed apart from the phase's
// percentiles, precede a phase of n timed ones: a tenth of them, at most
// 1 000. On this machine the first lookups after the process or its core
// has idled (the pause probe, a settle, the other system's turn) run
// slower until the CPU's caches and the runtime's threads are warm again:
// after half a second asleep, the first 10 embedded lookups took p50 33 µs
// and the next 40 p90 27 µs against 7 and 9 µs later, and in five of
// bench/'s medium runs 40–67 of R1's slowest 100 of 10 000 fell in the
// first thousand (docs/benchmarks.md, 2026-12-06, eighth session). The
// warm-up also fills caches the phase would have filled (a system's page
// cache, for R4 its history pages). Every system gets the same warm-up;
// its own latencies are printed and noted, so the cold start stays
// visible.
func warmLookups(n int) int { return min(n/10, 1000) }

// runAll builds the model, then runs every system in turn.
func runAll(ctx context.Context, cfg *config) (*Report, error) {
	rep := &Report{Scale: cfg.scale, Seed: cfg.seed, Systems: cfg.systems,
		Results: map[string]map[string]Result{}, Unavailable: map[string]string{}}
	model := NewModel(cfg.scale.Keys)
	g := NewGenerator(cfg.scale, cfg.seed)
	rep.Batches = g.Batches()
	mid := rep.Batches / 2
	var buf []Row
	b := bar(rep.Batches, "workload model")
	for i := 1; ; i++ {
		buf = g.NextBatch(buf)
		if len(buf) == 0 {
			break
		}
		model.Apply(buf)
		if i == mid {
			model.TakeMiddle()
		}
		b.Add(1) //nolint:errcheck // progress only
	}
	b.Finish() //nolint:errcheck
	rep.Late, rep.Rep = g.Late, g.Rep
	rep.Distinct = cfg.scale.Versions - g.Rep
	fmt.Printf("workload: %d rows in %d batches of %d; %.1f %% late, %.1f %% exact re-deliveries; middle commit = batch %d\n",
		cfg.scale.Versions, rep.Batches, batchRows, pct(g.Late, cfg.scale.Versions), pct(g.Rep, cfg.scale.Versions), mid)
	want := map[bool]Agg{false: model.Aggregate(cfg.seed, false), true: model.Aggregate(cfg.seed, true)}
	keys := lookupKeys(cfg)

	root, err := os.MkdirTemp("", "strata-bench-")
	if err != nil {
		return nil, err
	}
	if cfg.keep {
		fmt.Println("data directories under", root)
	} else {
		defer os.RemoveAll(root)
	}
	var ref map[bool]Agg // Strata embedded's answers, once it has run
	refName := "the in-memory model"
	// held are the systems of R1 paired that have run, kept open until
	// the last of them has (paired.go).
	held := map[string]System{}
	defer func() {
		for _, sys := range held {
			sys.Close() //nolint:errcheck // an earlier error is returned
		}
	}()
	for _, name := range cfg.systems {
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		sys := newSystem(name, cfg)
		got, err := runSystem(ctx, cfg, rep, sys, dir, mid, model, keys)
		if err == nil && cfg.pairs() && contains(pairedSystems, name) {
			held[name] = sys
			if len(held) == len(pairedSystems) {
				var syss []System
				for _, n := range pairedSystems {
					syss = append(syss, held[n])
				}
				err = pairedLookups(ctx, rep, syss, model, cfg.seed, keys)
				for _, n := range pairedSystems {
					if cerr := held[n].Close(); err == nil && cerr != nil {
						err = fmt.Errorf("%s: close: %w", n, cerr)
					}
					delete(held, n)
				}
			}
		} else if cerr := sys.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("%s: close: %w", name, cerr)
		}
		if errors.Is(err, errNotAvailable) {
			rep.Unavailable[name] = err.Error()
			fmt.Printf("%s: %v\n", name, err)
			continue
		}
		if err != nil && ctx.Err() != nil && len(rep.Results) > 0 {
			// Interrupted (SIGINT or SIGTERM) after at least one system
			// finished: report the finished ones rather than lose an hour
			// of a medium-scale run to one slow peer.
			stopInterrupted(rep, cfg.systems, name)
			return rep, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		for _, m := range []bool{false, true} {
			label := map[bool]string{false: "R2", true: "R3"}[m]
			if !got[m].Equal(want[m]) {
				rep.fail("%s %s differs from the in-memory model:\n    got  %s\n    want %s", name, label, got[m], want[m])
			}
			if ref != nil && !got[m].Equal(ref[m]) {
				rep.fail("%s %s differs from %s:\n    got  %s\n    want %s", name, label, refName, got[m], ref[m])
			}
		}
		if name == "strata" {
			ref, refName = got, "Strata's"
		}
	}
	return rep, nil
}

// stopInterrupted marks the system that was running when the run was
// interrupted, and every system after it, as not measured, and drops what
// the interrupted one had measured so no half-run system is compared.
func stopInterrupted(rep *Report, systems []string, running string) {
	delete(rep.Results, running)
	after := false
	for _, s := range systems {
		if s == running {
			after = true
		}
		if after {
			rep.Unavailable[s] = "not measured: the run was interrupted while " + running + " ran"
		}
	}
}

func pct(n, of int) float64 { return 100 * float64(n) / float64(of) }

// maxReps bounds the timed runs of one repeated measure however short
// its runs are.
const maxReps = 1000

// repeat times f at least cfg.reps times and until the runs together take
// cfg.minTime (at most maxReps runs), returning each run's time. A read of
// a millisecond timed five times has a median one stray pause of the
// machine can move by half; a few hundred runs of it have one that stays.
func (cfg *config) repeat(f func() error) ([]time.Duration, error) {
	var ds []time.Duration
	var total time.Duration
	for len(ds) < cfg.reps || (total < cfg.minTime && len(ds) < maxReps) {
		t := time.Now()
		err := f()
		d := time.Since(t)
		if err != nil {
			return ds, err
		}
		ds = append(ds, d)
		total += d
	}
	return ds, nil
}

// repeatPair times a and b in turn, each at least cfg.reps times and
// until each one's runs take cfg.minTime together (at most maxReps runs
// each), returning each one's run times and the process's CPU over its
// runs. The first error, labelled R2 or R3, ends it.
func (cfg *config) repeatPair(a, b func() error) ([2][]time.Duration, [2]time.Duration, error) {
	var ds [2][]time.Duration
	var total, cpu [2]time.Duration
	fs := [2]func() error{a, b}
	more := func(i int) bool {
		return len(ds[i]) < cfg.reps || (total[i] < cfg.minTime && len(ds[i]) < maxReps)
	}
	for more(0) || more(1) {
		for i, f := range fs {
			if !more(i) {
				continue
			}
			c := processCPU()
			t := time.Now()
			err := f()
			d := time.Since(t)
			cpu[i] += processCPU() - c
			if err != nil {
				return ds, cpu, fmt.Errorf("%s: %w", []string{mR2, mR3}[i], err)
			}
			ds[i] = append(ds[i], d)
			total[i] += d
		}
	}
	return ds, cpu, nil
}

// median of a non-empty slice of durations.
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// quantile q in [0, 1] of a sorted slice.
func quantile(sorted []time.Duration, q float64) time.Duration {
	i := int(q * float64(len(sorted)-1))
	return sorted[i]
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// runSystem measures one system and returns its R2 and R3 answers.
func runSystem(ctx context.Context, cfg *config, rep *Report, sys System, dir string, mid int, model *Model, keys []int32) (map[bool]Agg, error) {
	name := sys.Name()
	if err := sys.Open(ctx, dir); err != nil {
		return nil, err
	}
	// W1, or the state it leaves built in bulk (-bulk, bulk.go).
	g := NewGenerator(cfg.scale, cfg.seed)
	var midCommit uint64
	var err error
	if cfg.bulk[name] {
		midCommit, err = bulkLoad(ctx, sys, g, mid)
	} else {
		midCommit, err = ingest(ctx, cfg, rep, sys, g, mid)
	}
	if err != nil {
		return nil, err
	}
	n, err := sys.Bytes(ctx)
	if err != nil {
		return nil, err
	}
	rep.add(name, mS1, float64(n), unitB)
	rep.add(name, mS1v, float64(n)/float64(rep.Distinct), "bytes/version")
	if sp, ok := sys.(bytesSplitter); ok {
		// S1 right after ingest is a moment's measure: say what it holds.
		if what, err := sp.BytesSplit(ctx, n); err != nil {
			fmt.Printf("%s: S1 after ingest, split: %v\n", name, err)
		} else {
			fmt.Printf("%s: S1 after ingest: %s\n", name, what)
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s's S1 after ingest: %s.", name, what))
		}
	}

	// R2 and R3: a first run each (its answer is the one checked; its
	// time is reported apart, since it pays for what later runs find
	// cached), then the timed runs of the two in turn, so that the ratio
	// of their medians (R3 ≤ 1.5× R2) compares runs of the same moments
	// of a machine whose speed drifts by half from one second to the next.
	got := map[bool]Agg{}
	for _, asOf := range []bool{false, true} {
		commit, m, first := uint64(0), mR2, mR2first
		if asOf {
			commit, m, first = midCommit, mR3, mR3first
		}
		if !asOf && cfg.state {
			printState(ctx, sys, "before R2's first run")
		}
		stopProf := func() {}
		if !asOf && cfg.firstProf != "" {
			f, err := os.Create(cfg.firstProf)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			if err := pprof.StartCPUProfile(f); err != nil {
				return nil, err
			}
			stopProf = pprof.StopCPUProfile
		}
		cpu := processCPU()
		t := time.Now()
		a, err := sys.Aggregate(ctx, commit)
		wall := time.Since(t)
		cpu = processCPU() - cpu
		stopProf()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m, err)
		}
		rep.add(name, first, ms(wall), unitMs)
		// The process's CPU beside the wall time says how much of the
		// first run was this process's work (the scan and any background
		// flush or merge it overlapped) and how much waiting for cores.
		fmt.Printf("%s: %s %s wall, %s CPU of this process\n", name, first, wall.Round(time.Microsecond), cpu.Round(time.Microsecond))
		if !asOf && cfg.state {
			printState(ctx, sys, "after R2's first run")
		}
		got[asOf] = a
	}

	pair, pairCPU, err := cfg.repeatPair(
		func() error { _, err := sys.Aggregate(ctx, 0); return err },
		func() error { _, err := sys.Aggregate(ctx, midCommit); return err })
	if err != nil {
		return nil, err
	}
	for i, m := range []string{mR2, mR3} {
		rep.add(name, m, ms(median(pair[i])), unitMs)
		// Each run's wall time, and the process's CPU over them: more
		// than the runs' time on one core is background work (merges
		// after ingest) or the query on more cores.
		fmt.Printf("%s: %s runs %s, %s CPU of this process\n", name, m, roundAll(pair[i]), pairCPU[i].Round(time.Microsecond))
	}

	// R1 and R4: point lookups of the same random keys, current and AS OF
	// the middle commit, each answer checked against the model.
	if cfg.quiet {
		if _, err := sys.Settle(ctx); err != nil {
			return nil, fmt.Errorf("settle: %w", err)
		}
	}
	if cfg.state {
		printState(ctx, sys, "before R1")
	}
	if cfg.lookupProf != "" {
		f, err := os.Create(cfg.lookupProf)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return nil, err
		}
		defer pprof.StopCPUProfile()
	}
	// lookups looks up every key of keys current (commit 0) or AS OF
	// commit, checks each answer against the model and reports the p50
	// and p99 of their times as p50 and p99; a warm-up of the keys of
	// warm comes first, timed apart (warmLookups).
	warm := warmKeys(cfg)
	lookups := func(commit uint64, p50, p99, label string) error {
		// What the machine takes from a busy thread right now, measured
		// just before the phase: the floor under its p99.
		pz := probePauses(pauseProbe)
		fmt.Printf("%s: before %s (%s), %s\n", name, label, time.Now().Format("15:04:05.000"), pz)
		if commit == 0 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("Before %s's %s, %s.", name, label, pz))
		}
		ds := make([]time.Duration, len(keys))
		// cs is each lookup's CPU time on its own thread: the calling
		// goroutine is locked to one, so a lookup's own work is counted
		// and background merges' is not. A slow lookup whose CPU is near
		// its wall time did work (a cold page); one whose CPU is far
		// below waited (for a core, a lock, a page another read decodes).
		cs := make([]time.Duration, len(keys))
		// fs is each lookup's page faults on its thread (minor and
		// major): CPU spent in the kernel mapping fresh memory, which
		// no trace of pages decoded shows.
		fs := make([]int64, len(keys))
		// ts is what each lookup decoded, when the system can say.
		var ts []lookupTrace
		tr, _ := sys.(tracer)
		if tr != nil {
			ts = make([]lookupTrace, len(keys))
			tr.traceLookups(true)
			defer tr.traceLookups(false)
		}
		// An in-process lookup runs on the locked thread from start to
		// end, so cs is its own CPU. A lookup over a socket parks while
		// the server answers, and a locked goroutine can only wake on its
		// own thread: the runtime's poller must hand the wake-up to it,
		// one more thread switch per lookup on a two-core machine
		// (~10-20 µs at the median, measured against Strata's server). So
		// a wire lookup is timed unlocked, as a client would run it, and
		// cs is then only the client's CPU on whatever thread it ran.
		wire := false
		if w, ok := sys.(wired); ok {
			wire = w.overWire()
		}
		// detail: each lookup's own CPU time and faults, on request
		// (-lookup-cpu, or -perfctl, whose report prints them).
		detail := !wire && (cfg.lookupCPU || cfg.perfCtl != "")
		// Unlocked on every return, the errors' included.
		locked := !wire
		if locked {
			runtime.LockOSThread()
		}
		unlock := func() {
			if locked {
				runtime.UnlockOSThread()
				locked = false
			}
		}
		defer unlock()
		// The scheduler's counts of the client (this process) and, for a
		// system behind a server process, of the server, are read around
		// the timed lookups; the server's process id is asked for before
		// the warm-up, which then follows that query as it follows
		// everything else.
		var srvPID int
		if s, ok := sys.(serving); ok && wire {
			if srvPID, err = s.serverPID(ctx); err != nil {
				return fmt.Errorf("%s: server pid: %w", label, err)
			}
		}
		// The warm-up: untimed in p50 and p99, reported on its own.
		wds := make([]time.Duration, len(warm))
		for i, k := range warm {
			chain, addr, tok := KeyOf(cfg.seed, k)
			t := time.Now()
			v, err := sys.Point(ctx, chain, addr, tok, commit)
			wds[i] = time.Since(t)
			if err != nil {
				return fmt.Errorf("%s warm-up: %w", label, err)
			}
			if want := model.Amount(k, commit > 0); v != want {
				return fmt.Errorf("%s warm-up: (%d, %s, %s) = %q, the model says %q", label, chain, addr, tok, v, want)
			}
		}
		if len(wds) > 0 {
			wu := warmSummary(wds)
			fmt.Printf("%s: %s warm-up, %s\n", name, label, wu)
			if commit == 0 {
				rep.Notes = append(rep.Notes, fmt.Sprintf("%s's %s warm-up (untimed in the measure), %s.", name, label, wu))
			}
		}
		// With -perfctl, perf records this phase alone, and each lookup's
		// start is kept as an offset from t0 (whose CLOCK_MONOTONIC time
		// is mono0, perf's clock with -k mono) to find its samples.
		var starts []time.Duration
		var t0 time.Time
		var mono0 time.Duration
		perf := cfg.perfCtl != "" && !wire
		if perf {
			starts = make([]time.Duration, len(keys))
			if err := perfControl(cfg.perfCtl, "enable"); err != nil {
				return err
			}
			t0, mono0 = time.Now(), monotonic()
		}
		wrong := 0
		cli0, _ := readSched(0)
		var srv0 schedUsage
		if srvPID > 0 {
			srv0, _ = readSched(srvPID)
		}
		rt0 := readRuntimeActivity()
		cpu0 := processCPU()
		b := bar(len(keys), name+" "+label)
		for i, k := range keys {
			chain, addr, tok := KeyOf(cfg.seed, k)
			var f int64
			var c time.Duration
			if detail {
				f, c = threadFaults(), threadCPU()
			}
			t := time.Now()
			v, err := sys.Point(ctx, chain, addr, tok, commit)
			ds[i] = time.Since(t)
			if perf {
				starts[i] = t.Sub(t0)
			}
			if detail {
				cs[i] = threadCPU() - c
				fs[i] = threadFaults() - f
			}
			if tr != nil {
				ts[i] = tr.lastTrace()
			}
			if err != nil {
				return fmt.Errorf("%s: %w", label, err)
			}
			if want := model.Amount(k, commit > 0); v != want {
				if wrong == 0 {
					rep.fail("%s %s of (%d, %s, %s) = %q, the model says %q", name, label, chain, addr, tok, v, want)
				}
				wrong++
			}
			if i%64 == 0 {
				b.Set(i) //nolint:errcheck // progress only
			}
		}
		b.Finish() //nolint:errcheck
		fmt.Printf("%s: %s ended at %s\n", name, label, time.Now().Format("15:04:05.000"))
		if perf {
			if err := perfControl(cfg.perfCtl, "disable"); err != nil {
				return err
			}
			printSlowTimes(os.Stdout, name, label, syscall.Gettid(), mono0, starts, ds, cs)
		}
		// CPU time per lookup: less sensitive to a shared machine's load
		// than wall time (background merges, if running, count too).
		fmt.Printf("%s: %s CPU %.1f µs per lookup\n", name, label, us(processCPU()-cpu0)/float64(len(keys)))
		if wire {
			if cli, err := readSched(0); err == nil {
				fmt.Printf("%s: %s client: %s\n", name, label, cli.perLookup(cli0, len(keys)))
			}
			if srvPID > 0 {
				if srv, err := readSched(srvPID); err == nil {
					fmt.Printf("%s: %s server: %s\n", name, label, srv.perLookup(srv0, len(keys)))
				}
			}
		}
		if !wire {
			// What this process's Go runtime did beside the lookups: its
			// collections, and its scavenger returning free heap to the
			// kernel (madvise, which flushes the TLB of every thread of the
			// process and splits huge pages: docs/benchmarks.md, fifth
			// session of 2026-12-06).
			fmt.Printf("%s: %s runtime: %s\n", name, label, readRuntimeActivity().since(rt0))
		}
		unlock()
		printTail(name, label, ds, cs, fs, !detail)
		if tr != nil {
			// The slowest 1 % by their own CPU: what a change can move.
			idx := make([]int, len(cs))
			for i := range idx {
				idx[i] = i
			}
			// The slowest by wall time when CPU was not measured.
			by, what := cs, "slowest 1 % by thread CPU"
			if !detail {
				by, what = ds, "slowest 1 % by wall time"
			}
			slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(by[b], by[a]) })
			printTraces(name, label, ts, idx[:max(len(idx)/100, 1)], what)
		}
		if wrong > 1 {
			rep.fail("%s %s: %d of %d answers differ from the model", name, label, wrong, len(keys))
		}
		slices.Sort(ds)
		rep.add(name, p50, us(quantile(ds, 0.50)), unitUs)
		rep.add(name, p99, us(quantile(ds, 0.99)), unitUs)
		return nil
	}
	for _, asOf := range []bool{false, true} {
		commit, p50, p99, label := uint64(0), mR1p50, mR1p99, "R1"
		if asOf {
			commit, p50, p99, label = midCommit, mR4p50, mR4p99, "R4"
		}
		if err := lookups(commit, p50, p99, label); err != nil {
			return nil, err
		}
	}

	// R5: the history of the first lookup key.
	chain, addr, tok := KeyOf(cfg.seed, keys[0])
	var rows int
	ds, err := cfg.repeat(func() error {
		n, err := sys.Versions(ctx, chain, addr, tok)
		rows = n
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("R5: %w", err)
	}
	if rows == 0 {
		rep.fail("%s R5: versions of (%d, %s, %s) returned no rows", name, chain, addr, tok)
	}
	rep.add(name, mR5, ms(median(ds)), unitMs)

	// S1 after the system's background work is done.
	t := time.Now()
	ok, err := sys.Settle(ctx)
	if err != nil {
		return nil, fmt.Errorf("settle: %w", err)
	}
	if ok {
		rep.add(name, mSettle, time.Since(t).Seconds(), unitSec)
		if n, err = sys.Bytes(ctx); err != nil {
			return nil, err
		}
		rep.add(name, mS1s, float64(n), unitB)
		// R1 again on the settled system: what lookups cost once the
		// ingest's background work is done (the first R1 runs right
		// after R2 and R3, beside it unless -quiet-lookups).
		stop, err := startProfile(cfg.settledProf)
		if err != nil {
			return nil, err
		}
		err = lookups(0, mR1sp50, mR1sp99, "R1 settled")
		stop()
		if err != nil {
			return nil, err
		}
	} else {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%s: no public call to wait for merges, so no S1 after settle", name))
	}
	fmt.Printf("%s: done\n", name)
	return got, nil
}

// startProfile starts a CPU profile written to path, if path is not
// empty, and returns what stops it.
func startProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// processCPU is the user and system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// processUsage returns the process's system CPU time and minor page
// faults so far: a fault of memory the process never touched costs this
// kind of virtual machine 10–20 µs of system time, so a phase that grows
// the heap pays for it in CPU (docs/benchmarks.md).
func processUsage() (sys time.Duration, faults int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Stime.Nano()), ru.Minflt
}

// bytesSplitter is a system that can say what its bytes on disk (total,
// as Bytes measured them) are made of.
type bytesSplitter interface {
	BytesSplit(ctx context.Context, total int64) (string, error)
}

// stater is a system that can describe its storage state (-state).
type stater interface {
	State(ctx context.Context) (string, error)
}

// printState prints sys's storage state, when it has one to show.
func printState(ctx context.Context, sys System, when string) {
	st, ok := sys.(stater)
	if !ok {
		return
	}
	s, err := st.State(ctx)
	if err != nil {
		fmt.Printf("%s: state %s: %v\n", sys.Name(), when, err)
		return
	}
	fmt.Printf("%s: state %s:\n%s", sys.Name(), when, s)
}

// threadCPU is the CPU time the calling thread has used, to the
// nanosecond (CLOCK_THREAD_CPUTIME_ID; getrusage's RUSAGE_THREAD counts in
// scheduler ticks, too coarse for a lookup). 0 where the clock is missing.
func threadCPU() time.Duration {
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}

// threadFaults is the page faults (minor and major) of the calling
// thread so far (getrusage RUSAGE_THREAD), 0 where it cannot be read.
func threadFaults() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return ru.Minflt + ru.Majflt
}

// runtimeActivity is what the Go runtime has done so far: collections,
// the heap returned to the kernel and not taken back (kept up to date by
// the scavenger and the allocator), and the page faults of the whole
// process. (runtime/metrics' CPU classes, the scavenger's CPU among them,
// are a snapshot taken at each collection, so they say nothing of a phase
// without one.)
type runtimeActivity struct {
	cycles   uint64
	released uint64
	faults   int64
}

// runtimeSamples are the runtime/metrics runtimeActivity reads.
var runtimeSamples = []string{"/gc/cycles/total:gc-cycles", "/memory/classes/heap/released:bytes"}

// readRuntimeActivity reads runtimeActivity; a metric this Go does not
// have reads as zero.
func readRuntimeActivity() runtimeActivity {
	ss := make([]metrics.Sample, len(runtimeSamples))
	for i, n := range runtimeSamples {
		ss[i].Name = n
	}
	metrics.Read(ss)
	u := func(i int) uint64 {
		if ss[i].Value.Kind() == metrics.KindUint64 {
			return ss[i].Value.Uint64()
		}
		return 0
	}
	var ru syscall.Rusage
	var faults int64
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		faults = ru.Minflt + ru.Majflt
	}
	return runtimeActivity{cycles: u(0), released: u(1), faults: faults}
}

// since formats what the runtime did between a and b.
func (b runtimeActivity) since(a runtimeActivity) string {
	return fmt.Sprintf("%d GC cycles, heap returned to the kernel %+.1f MiB, %d page faults in the process",
		b.cycles-a.cycles, (float64(b.released)-float64(a.released))/(1<<20), b.faults-a.faults)
}

// perfFIFO is the -perfctl FIFO, opened at its first use and kept open:
// perf stops reading commands when its writer closes.
var perfFIFO *os.File

// perfControl sends cmd ("enable" or "disable") to the perf record
// reading the FIFO at path, and waits a moment for perf to act on it.
func perfControl(path, cmd string) error {
	if perfFIFO == nil {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("-perfctl: %w", err)
		}
		perfFIFO = f
	}
	if _, err := perfFIFO.WriteString(cmd + "\n"); err != nil {
		return fmt.Errorf("-perfctl: %w", err)
	}
	time.Sleep(50 * time.Millisecond)
	return nil
}

// monotonic reads CLOCK_MONOTONIC, the clock perf record -k mono stamps
// its samples with.
func monotonic() time.Duration {
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockMonotonic, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}

// clockMonotonic is Linux's CLOCK_MONOTONIC.
const clockMonotonic = 1

// printSlowTimes writes to w the slowest 1 % of a phase's lookups (by
// wall time, slowest first) with the thread they ran on and their
// CLOCK_MONOTONIC start and end in seconds, as perf script prints sample
// times: starts are offsets from mono0, ds the wall times, cs the thread
// CPU times.
func printSlowTimes(w io.Writer, name, label string, tid int, mono0 time.Duration, starts, ds, cs []time.Duration) {
	idx := make([]int, len(ds))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(ds[b], ds[a]) })
	for _, i := range idx[:max(len(idx)/100, 1)] {
		s := mono0 + starts[i]
		fmt.Fprintf(w, "perf: %s %s lookup %d tid %d from %.6f to %.6f wall %.0f µs cpu %.0f µs\n",
			name, label, i, tid, s.Seconds(), (s + ds[i]).Seconds(), us(ds[i]), us(cs[i]))
	}
}

// rusageThread is Linux's RUSAGE_THREAD.
const rusageThread = 1

// clockThreadCPUTime is Linux's CLOCK_THREAD_CPUTIME_ID.
const clockThreadCPUTime = 3

// printTail prints where the lookups' time went: the thread CPU of the
// median lookup and, of the slowest 1 % by wall time, their wall and CPU
// time (a tail that is CPU is work; one that is not is waiting); with
// wallOnly, when no lookup's CPU was measured, their wall time alone.
func printTail(name, label string, ds, cs []time.Duration, fs []int64, wallOnly bool) {
	idx := make([]int, len(ds))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(ds[a], ds[b]) })
	sortedCPU := slices.Clone(cs)
	slices.Sort(sortedCPU)
	tail := idx[len(idx)-max(len(idx)/100, 1):]
	var wall, cpu time.Duration
	var faults, allFaults int64
	for _, f := range fs {
		allFaults += f
	}
	worked := 0
	for _, i := range tail {
		wall += ds[i]
		cpu += cs[i]
		faults += fs[i]
		if cs[i]*2 >= ds[i] {
			worked++
		}
	}
	// Where the slowest lookups sit in the sequence: a tail made of the
	// first lookups is warm-up (pools, caches), one spread evenly is not.
	var tenths [10]int
	for _, i := range tail {
		tenths[min(i*10/len(ds), 9)]++
	}
	early := tenths[0]
	fmt.Printf("%s: %s slowest 1 %% by tenth of the sequence: %v\n", name, label, tenths)
	k := time.Duration(len(tail))
	if wallOnly {
		// Not measured (-lookup-cpu), or unlocked: a thread's CPU clock
		// then says nothing about one lookup.
		fmt.Printf("%s: %s slowest 1 %% (%d): wall %.0f µs, %d in the first tenth of the sequence\n",
			name, label, len(tail), us(wall/k), early)
		return
	}
	fmt.Printf("%s: %s thread CPU p50 %.0f µs, p99 %.0f µs, %.2f page faults per lookup; slowest 1 %% (%d): wall %.0f µs, thread CPU %.0f µs, %.1f page faults on average, %d of them at least half CPU, %d in the first tenth of the sequence\n",
		name, label, us(quantile(sortedCPU, 0.5)), us(quantile(sortedCPU, 0.99)), float64(allFaults)/float64(len(fs)),
		len(tail), us(wall/k), us(cpu/k), float64(faults)/float64(len(tail)), worked, early)
}

// ingest runs W1 on sys: every batch of g, each one commit, timed, and
// reports the rate; it returns the commit of batch mid (R3's and R4's
// commit).
func ingest(ctx context.Context, cfg *config, rep *Report, sys System, g *Generator, mid int) (uint64, error) {
	name := sys.Name()
	var buf []Row
	var midCommit uint64
	b := bar(g.Batches(), name+" W1 ingest")
	var spent time.Duration
	// The profile and the trace, when asked for, cover the W1 loop alone;
	// a second system's ingest (several systems in one run) goes to
	// FILE.<name>. A failed batch returns early: the deferred stops end
	// them (a second Stop is harmless).
	for _, rec := range []struct {
		path  string
		start func(io.Writer) error
		stop  func()
	}{{cfg.ingestProf, pprof.StartCPUProfile, pprof.StopCPUProfile}, {cfg.ingestTrace, trace.Start, trace.Stop}} {
		if rec.path == "" {
			continue
		}
		path := rec.path
		if len(cfg.systems) > 1 {
			path += "." + name
		}
		f, err := os.Create(path)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		if err := rec.start(f); err != nil {
			return 0, err
		}
		defer rec.stop()
	}
	cpu0 := processCPU()
	sys0, flt0 := processUsage()
	for i := 1; ; i++ {
		buf = g.NextBatch(buf)
		if len(buf) == 0 {
			break
		}
		t := time.Now()
		c, err := sys.Ingest(ctx, buf, i)
		spent += time.Since(t)
		if err != nil {
			return 0, fmt.Errorf("batch %d: %w", i, err)
		}
		if i == mid {
			midCommit = c
		}
		b.Add(1) //nolint:errcheck // progress only
	}
	b.Finish() //nolint:errcheck
	cpuW1 := processCPU() - cpu0
	sys1, flt1 := processUsage()
	if cfg.ingestProf != "" {
		pprof.StopCPUProfile()
	}
	if cfg.ingestTrace != "" {
		trace.Stop()
	}
	if cfg.allocProf != "" {
		if err := writeHeapProfile(cfg.allocProf); err != nil {
			return 0, err
		}
		cfg.allocProf = "" // the first system's W1 only
	}
	rep.add(name, mW1, float64(cfg.scale.Versions)/spent.Seconds(), unitRows)
	rep.add(name, mW1Time, spent.Seconds(), unitSec)
	fmt.Printf("%s: W1 %d rows in %s (%.0f rows/s); middle commit %d\n", name, cfg.scale.Versions, spent.Round(time.Millisecond), float64(cfg.scale.Versions)/spent.Seconds(), midCommit)
	fmt.Printf("%s: W1 process CPU %s (%.2f ms per commit of %d rows), of which system %s; %d minor page faults\n", name, cpuW1.Round(time.Millisecond), ms(cpuW1)/float64(g.Batches()), batchRows, (sys1 - sys0).Round(time.Millisecond), flt1-flt0)
	return midCommit, nil
}

// writeHeapProfile writes the heap profile, allocations since the process
// started included, to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// roundAll prints durations rounded to 10 µs.
func roundAll(ds []time.Duration) string {
	if len(ds) > 9 {
		s := slices.Clone(ds)
		slices.Sort(s)
		r := func(d time.Duration) string { return d.Round(10 * time.Microsecond).String() }
		return fmt.Sprintf("%d runs: min %s, p25 %s, median %s, p75 %s, max %s", len(s), r(s[0]), r(quantile(s, 0.25)), r(median(s)), r(quantile(s, 0.75)), r(s[len(s)-1]))
	}
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Round(10 * time.Microsecond).String()
	}
	return strings.Join(out, " ")
}
