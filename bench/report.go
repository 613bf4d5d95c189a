package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// machineInfo names what the numbers were measured on.
func machineInfo() string {
	mem := "unknown memory"
	if f, err := os.Open("/proc/meminfo"); err == nil {
		s := bufio.NewScanner(f)
		for s.Scan() {
			if v, ok := strings.CutPrefix(s.Text(), "MemTotal:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				mem = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
			}
		}
		f.Close()
	}
	return fmt.Sprintf("%d cores, %s, %s %s/%s, %s", runtime.NumCPU(), mem, runtime.Version(), runtime.GOOS, runtime.GOARCH, time.Now().UTC().Format("2006-01-02 15:04 UTC"))
}

// format prints a value in its unit, compactly.
func format(r Result) string {
	v := r.Value
	switch r.Unit {
	case unitRows:
		if v >= 1e6 {
			return fmt.Sprintf("%.2f M rows/s", v/1e6)
		}
		return fmt.Sprintf("%.1f k rows/s", v/1e3)
	case unitB:
		switch {
		case v >= 1<<30:
			return fmt.Sprintf("%.2f GiB", v/(1<<30))
		case v >= 1<<20:
			return fmt.Sprintf("%.1f MiB", v/(1<<20))
		}
		return fmt.Sprintf("%.0f KiB", v/(1<<10))
	case unitUs:
		if v >= 1000 {
			return fmt.Sprintf("%.2f ms", v/1000)
		}
		return fmt.Sprintf("%.0f µs", v)
	case unitMs:
		if v >= 1000 {
			return fmt.Sprintf("%.2f s", v/1000)
		}
		if v < 10 {
			return fmt.Sprintf("%.2f ms", v)
		}
		return fmt.Sprintf("%.0f ms", v)
	case unitSec:
		return fmt.Sprintf("%.1f s", v)
	}
	return fmt.Sprintf("%.1f %s", v, r.Unit)
}

// advantage is how many times better Strata embedded is than sys on m:
// above 1, Strata wins. It is the ratio the targets are written in.
func (r *Report) advantage(sys, m string) (float64, bool) {
	s, ok1 := r.Results["strata"][m]
	x, ok2 := r.Results[sys][m]
	if !ok1 || !ok2 || s.Value == 0 || x.Value == 0 {
		return 0, false
	}
	if higherBetter[m] {
		return s.Value / x.Value, true
	}
	return x.Value / s.Value, true
}

// ran lists the systems with results, in the order asked.
func (r *Report) ran() []string {
	var out []string
	for _, s := range r.Systems {
		if r.Results[s] != nil {
			out = append(out, s)
		}
	}
	return out
}

// Table renders the results as a markdown table: one row per measure, one
// column per system, each cell the value and (for peers) Strata's
// advantage.
func (r *Report) Table() string {
	sys := r.ran()
	var b strings.Builder
	b.WriteString("| measure |")
	for _, s := range sys {
		b.WriteString(" " + s + " |")
	}
	b.WriteString("\n|---|")
	for range sys {
		b.WriteString("---|")
	}
	b.WriteByte('\n')
	for _, m := range measureOrder {
		if m == mW1Time {
			continue // shown in the W1 cell
		}
		any := false
		for _, s := range sys {
			if _, ok := r.Results[s][m]; ok {
				any = true
			}
		}
		if !any {
			continue
		}
		b.WriteString("| " + m + " |")
		for _, s := range sys {
			res, ok := r.Results[s][m]
			if !ok {
				b.WriteString(" — |")
				continue
			}
			cell := format(res)
			if m == mW1 {
				cell += fmt.Sprintf(" (%s)", format(r.Results[s][mW1Time]))
			}
			if s != "strata" {
				if a, ok := r.advantage(s, m); ok {
					cell += fmt.Sprintf(", Strata %s", ratio(a))
				}
			}
			b.WriteString(" " + cell + " |")
		}
		b.WriteByte('\n')
	}
	for _, s := range r.Systems {
		if why, ok := r.Unavailable[s]; ok {
			fmt.Fprintf(&b, "\n%s: %s\n", s, firstLine(why))
		}
	}
	return b.String()
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

// ratio prints Strata's advantage: "12.3× better" or "2.5× worse".
func ratio(a float64) string {
	if a >= 1 {
		return fmt.Sprintf("%.3g× better", a)
	}
	return fmt.Sprintf("%.3g× worse", 1/a)
}

// Targets checks issue 6 item 5's targets against this run's ratios.
func (r *Report) Targets() string {
	var b strings.Builder
	line := func(what string, ok bool, detail string) {
		mark := "not met"
		if ok {
			mark = "met"
		}
		fmt.Fprintf(&b, "- %s: **%s** (%s)\n", what, mark, detail)
	}
	get := func(s, m string) (float64, bool) { x, ok := r.Results[s][m]; return x.Value, ok }
	if _, ok := r.Results["strata"]; !ok {
		return ""
	}
	b.WriteString("\nTargets of issue 6 item 5, as ratios in this run:\n\n")
	for _, peer := range []struct {
		name string
		want float64
	}{{"postgres", 10}, {"duckdb", 20}, {"sqlite", 20}} {
		if a, ok := r.advantage(peer.name, mW1); ok {
			line(fmt.Sprintf("W1 ≥ %.0f× %s", peer.want, peer.name), a >= peer.want, fmt.Sprintf("%.2f×", a))
		}
	}
	if a, ok := r.advantage("duckdb", mR2); ok {
		line("R2 at least as fast as DuckDB", a >= 1, fmt.Sprintf("DuckDB/Strata = %.2f×", a))
	}
	if r3, ok := get("strata", mR3); ok {
		r2, _ := get("strata", mR2)
		line("R3 ≤ 1.5× Strata's own R2", r3 <= 1.5*r2, fmt.Sprintf("R3/R2 = %.2f", r3/r2))
	}
	for _, p := range []string{"postgres", "sqlite", "duckdb"} {
		if a, ok := r.advantage(p, mR3); ok {
			line("R3 ≥ 10× faster than "+p+"'s AS OF", a >= 10, fmt.Sprintf("%.2f×", a))
		}
	}
	if p99, ok := get("strata", mR1p99); ok {
		line("R1 p99 ≤ 50 µs embedded, right after ingest", p99 <= 50, fmt.Sprintf("%.0f µs", p99))
	}
	if p99, ok := get("strata", mR1sp99); ok {
		line("R1 p99 ≤ 50 µs embedded, settled", p99 <= 50, fmt.Sprintf("%.0f µs", p99))
	}
	for _, m := range []struct{ measure, when string }{{mR1p99, ""}, {mR1sp99, ", settled"}, {mR1wp99, ", paired (settled, interleaved)"}} {
		if sp, ok := get("strata-pg", m.measure); ok {
			if pp, ok := get("postgres", m.measure); ok {
				line("R1 p99 over pgwire no slower than PostgreSQL's"+m.when, sp <= pp, fmt.Sprintf("%.0f µs vs %.0f µs", sp, pp))
			}
		}
	}
	if a, ok := r.advantage("postgres", mS1); ok {
		line("S1 ≤ 1/5 of PostgreSQL's bytes (after ingest)", a >= 5, fmt.Sprintf("PostgreSQL/Strata = %.2f×", a))
	}
	if a, ok := r.advantage("postgres", mS1s); ok {
		line("S1 ≤ 1/5 of PostgreSQL's bytes (settled)", a >= 5, fmt.Sprintf("PostgreSQL/Strata = %.2f×", a))
	}
	return b.String()
}

// WriteJSON writes every result as a list of {measure, system, scale,
// value, unit}.
func (r *Report) WriteJSON(path string) error {
	var out []Result
	for _, s := range r.Systems {
		for _, m := range measureOrder {
			if x, ok := r.Results[s][m]; ok {
				out = append(out, x)
			}
		}
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// The markers of the section of docs/benchmarks.md the harness owns.
const (
	beginMarker = "<!-- bench:begin -->"
	endMarker   = "<!-- bench:end -->"
)

// Markdown renders the report's section, markers excluded.
func (r *Report) Markdown(args []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Side by side with PostgreSQL, SQLite and DuckDB (bench/, %s scale)\n\n", r.Scale.Name)
	b.WriteString("Written by the harness; do not edit by hand. Re-run with\n")
	fmt.Fprintf(&b, "`cd bench && go run . %s`.\n\n", strings.Join(args, " "))
	fmt.Fprintf(&b, "Machine: %s. The run took %s.\n\n", r.Machine, r.Elapsed.Round(time.Second))
	fmt.Fprintf(&b, "Workload (seed %d): %d keys, %d rows in %d batches of %d (one commit each), %.1f %% late, %.1f %% exact re-deliveries (%d distinct versions); AS OF reads the commit of batch %d.\n\n",
		r.Seed, r.Scale.Keys, r.Scale.Versions, r.Batches, batchRows, pct(r.Late, r.Scale.Versions), pct(r.Rep, r.Scale.Versions), r.Distinct, r.Batches/2)
	b.WriteString("Each cell is the median of the timed repetitions (R2, R3, R5), a percentile over the random keys (R1, R4) or one measurement (W1, S1, and the first run of R2 and R3, which pays for what the timed repetitions find in caches), followed by Strata embedded's advantage over that system (\"better\" above 1). Every system's R2 and R3 answers equalled Strata's, and Strata's equalled the in-memory model.\n\n")
	b.WriteString(r.Table())
	b.WriteString(r.Targets())
	if len(r.Notes) > 0 {
		b.WriteString("\nNotes:\n\n")
		for _, n := range r.Notes {
			b.WriteString("- " + n + "\n")
		}
	}
	return b.String()
}

// WriteMarkdown rewrites the bench section of path, appending the markers
// at the end when the file has none; the rest of the file is kept as is.
func (r *Report) WriteMarkdown(path string, args []string) error {
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	out, err := replaceSection(string(old), r.Markdown(args))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, []byte(out), 0o644)
}

// replaceSection puts body between the markers of doc.
func replaceSection(doc, body string) (string, error) {
	i := strings.Index(doc, beginMarker)
	j := strings.Index(doc, endMarker)
	switch {
	case i < 0 && j < 0:
		if doc != "" && !strings.HasSuffix(doc, "\n") {
			doc += "\n"
		}
		return doc + "\n" + beginMarker + "\n" + body + endMarker + "\n", nil
	case i < 0 || j < i:
		return "", fmt.Errorf("the %s and %s markers are missing or out of order", beginMarker, endMarker)
	}
	return doc[:i+len(beginMarker)] + "\n" + body + doc[j:], nil
}
