package logictest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
)

// Complete runs the script at path like Run and returns its text with the
// expected output of every query that ran replaced by what the engine
// returned, rendered and sorted as the runner compares it, and in the
// classic dialect hashed past the hash-threshold in force (8 until a
// hash-threshold record says otherwise): upstream's completion mode. It is
// for writing a new script's expected output from an engine one trusts (the
// PostgreSQL peer for test/sql) and then reading the diff, never for
// blessing Strata's own output unread.
//
// Everything else in the file is kept byte for byte: statements, comments,
// queries that failed to run. A query without `----` gets one; a comment line
// between expected lines is dropped with them (one after the last is kept).
// The Report is that of the run, compared against the old expected output.
func Complete(ctx context.Context, path string, open Opener, opts Options) ([]byte, Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, Report{Path: path}, fmt.Errorf("logictest: %w", err)
	}
	completed := map[int][]string{}
	rep, script, err := runPath(ctx, path, open, opts, completed)
	if err != nil {
		return nil, rep, err
	}
	return splice(data, script, completed), rep, nil
}

// splice rebuilds a script's text with the expected blocks of the records in
// completed replaced.
func splice(data []byte, script *Script, completed map[int][]string) []byte {
	eol := "\n"
	if bytes.Contains(data, []byte("\r\n")) {
		eol = "\r\n"
	}
	text := string(data)
	final := strings.HasSuffix(text, "\n")
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	var b strings.Builder
	b.Grow(len(data))
	next := 1 // the next source line to copy, 1-based
	copyThrough := func(last int) {
		for ; next <= last && next <= len(lines); next++ {
			b.WriteString(lines[next-1])
			b.WriteString("\n")
		}
	}
	for i := range script.Records {
		got, ok := completed[i]
		if !ok {
			continue
		}
		rec := &script.Records[i]
		if rec.SepLine > 0 {
			copyThrough(rec.SepLine)
		} else {
			copyThrough(rec.EndLine)
			b.WriteString("----" + eol)
		}
		for _, l := range got {
			b.WriteString(l + eol)
		}
		next = rec.EndLine + 1
	}
	copyThrough(len(lines))
	out := b.String()
	if !final {
		out = strings.TrimSuffix(out, "\n")
	}
	return []byte(out)
}

// completion is the expected output a query's sorted values would be
// written as.
func (r *runner) completion(rec *Record, vals []string) []string {
	if r.script.Dialect != Classic {
		return rowLines(vals, len(rec.Types), rec.Sort, r.script.Dialect)
	}
	if rec.Hashed || (r.threshold > 0 && len(vals) > r.threshold) {
		return []string{fmt.Sprintf("%d values hashing to %s", len(vals), hashValues(vals))}
	}
	return vals
}
