package logictest

import (
	"fmt"
	"strings"
)

// Report is the outcome of one script. Records counts statements, queries
// and restarts; each ends up in exactly one of Passed, Failed, Skipped (a
// skipif/onlyif excluded it) or NotRun (after a halt, or after the run
// stopped early), so Records == Passed+Failed+Skipped+NotRun.
type Report struct {
	Path    string
	Dialect Dialect
	Records int
	Passed  int
	Failed  int
	Skipped int
	NotRun  int
	Seconds float64
	// Halted is set when a halt record ended the script.
	Halted bool
	// Stopped says why the run ended before the script did (the context's
	// deadline, an engine that ignored cancellation, a failed reopen); nil
	// when it ran to the end or to a halt.
	Stopped error
	// Failures holds the first Options.MaxFailures failures, in order.
	Failures []Failure
}

// OK reports whether the script passed: nothing failed and nothing was left
// unrun because the run stopped early.
func (r *Report) OK() bool { return r.Failed == 0 && r.Stopped == nil }

// Failure is one record that did not behave as its script says.
type Failure struct {
	Path string
	Line int
	// SQL is the record's SQL as written; Sent is what the engine was given
	// when the compatibility rewrite changed it, else "".
	SQL  string
	Sent string
	// Message says what went wrong, in one line.
	Message string
	// Expected and Got are the expected and actual lines of a query whose
	// result differs (rendered and sorted as compared); nil otherwise. Got
	// is cut after maxGotLines lines.
	Expected []string
	Got      []string
}

// String prints the failure for a person: "path:line: message", the SQL
// indented, then a diff of expected (-) against got (+) when there is one.
func (f Failure) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d: %s\n", f.Path, f.Line, f.Message)
	writeIndented(&b, f.SQL)
	if f.Sent != "" {
		b.WriteString("  sent as:\n")
		writeIndented(&b, f.Sent)
	}
	if f.Expected != nil || f.Got != nil {
		b.WriteString("  expected (-) / got (+):\n")
		for _, l := range strings.Split(strings.TrimSuffix(Diff(f.Expected, f.Got), "\n"), "\n") {
			b.WriteString("    ")
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func writeIndented(b *strings.Builder, text string) {
	for _, l := range strings.Split(text, "\n") {
		b.WriteString("    ")
		b.WriteString(l)
		b.WriteByte('\n')
	}
}

// Summary is one line with the report's counts.
func (r *Report) Summary() string {
	s := fmt.Sprintf("%s: %d records: %d passed, %d failed, %d skipped, %d not run in %.2fs",
		r.Path, r.Records, r.Passed, r.Failed, r.Skipped, r.NotRun, r.Seconds)
	if r.Halted {
		s += " (halted)"
	}
	if r.Stopped != nil {
		s += fmt.Sprintf(" (stopped: %v)", r.Stopped)
	}
	return s
}

// FormatTable prints reports as an aligned table, one row per script and a
// total row, for a person comparing runs over many files (the corpus). Paths
// are printed relative to base when they are under it.
func FormatTable(base string, reports []Report) string {
	var tot Report
	rows := [][]string{{"file", "records", "passed", "failed", "skipped", "not run", "pass %", "seconds"}}
	row := func(name string, r *Report) []string {
		pct := "-"
		if ran := r.Passed + r.Failed; ran > 0 {
			pct = fmt.Sprintf("%.1f", 100*float64(r.Passed)/float64(ran))
		}
		return []string{name, fmt.Sprint(r.Records), fmt.Sprint(r.Passed), fmt.Sprint(r.Failed),
			fmt.Sprint(r.Skipped), fmt.Sprint(r.NotRun), pct, fmt.Sprintf("%.2f", r.Seconds)}
	}
	for i := range reports {
		r := &reports[i]
		name := r.Path
		if base != "" && strings.HasPrefix(name, base+"/") {
			name = strings.TrimPrefix(name, base+"/")
		}
		if r.Stopped != nil {
			name += " (stopped)"
		}
		rows = append(rows, row(name, r))
		tot.Records += r.Records
		tot.Passed += r.Passed
		tot.Failed += r.Failed
		tot.Skipped += r.Skipped
		tot.NotRun += r.NotRun
		tot.Seconds += r.Seconds
	}
	rows = append(rows, row("total", &tot))
	width := make([]int, len(rows[0]))
	for _, r := range rows {
		for c, v := range r {
			width[c] = max(width[c], len(v))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		for c, v := range r {
			if c == 0 {
				fmt.Fprintf(&b, "%-*s", width[c], v)
			} else {
				fmt.Fprintf(&b, "  %*s", width[c], v)
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}
