package logictest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// Options adjust a run. The zero value is what the project's tests use.
type Options struct {
	// Dialect overrides the dialect implied by the file name.
	Dialect Dialect
	// Engine is the name skipif/onlyif lines are matched against
	// (case-insensitively); "postgresql" when empty, the engine whose
	// dialect Strata follows.
	Engine string
	// QueryTimeout bounds every statement and query through its context;
	// DefaultQueryTimeout when zero, no bound when negative.
	QueryTimeout time.Duration
	// MaxFailures is how many failures Report.Failures keeps (counts are
	// never capped); DefaultMaxFailures when zero, none when negative.
	MaxFailures int
	// OnFailure, when set, is called for every failure as it happens, also
	// for those beyond MaxFailures.
	OnFailure func(Failure)
	// Rewrite, when set, replaces the compatibility rewrite of the classic
	// dialect (the function Rewrite); it is never applied to the conformance
	// dialect. A peer engine that takes the corpus as written (SQLite,
	// PostgreSQL) passes a function that returns its argument.
	Rewrite func(sql string) string
}

// DefaultQueryTimeout is the per-record timeout when Options leave it zero.
const DefaultQueryTimeout = time.Minute

// DefaultMaxFailures is how many failures a Report keeps by default.
const DefaultMaxFailures = 100

// cancelGrace is how long the runner waits, after a record's context is done,
// for Exec to return before it declares the engine hung and stops the file.
// A variable so that the tests of a hung engine need not wait for it.
var cancelGrace = 2 * time.Second

// maxGotLines bounds the result lines a Failure keeps.
const maxGotLines = 1000

// Run runs the script at path on a fresh database: it makes an empty
// temporary directory, opens it with open, runs every record in order
// (continuing past failures), closes the database and removes the
// directory. The error is for what kept the script from running at all (it
// cannot be read or parsed, the database cannot be opened) or from being
// cleaned up; failures of records are in the Report. When ctx is done the
// run stops and the records left count as NotRun.
func Run(ctx context.Context, path string, open Opener, opts Options) (Report, error) {
	rep, _, err := runPath(ctx, path, open, opts, nil)
	return rep, err
}

// runPath is Run; when completed is not nil it also receives, by record
// index, the expected output each query that ran would have (Complete).
func runPath(ctx context.Context, path string, open Opener, opts Options, completed map[int][]string) (rep Report, script *Script, err error) {
	start := time.Now()
	rep = Report{Path: path}
	defer func() { rep.Seconds = time.Since(start).Seconds() }()
	script, err = ParseFile(path, opts.Dialect)
	if err != nil {
		return rep, nil, err
	}
	rep.Dialect = script.Dialect
	for i := range script.Records {
		if counted(script.Records[i].Kind) {
			rep.Records++
		}
	}
	dir, err := os.MkdirTemp("", "strata-logictest-")
	if err != nil {
		return rep, script, fmt.Errorf("logictest: %w", err)
	}
	defer os.RemoveAll(dir)
	db, err := open(dir)
	if err != nil {
		return rep, script, fmt.Errorf("logictest: %s: open %s: %w", path, dir, err)
	}
	r := &runner{opts: opts, script: script, rep: &rep, db: db, dir: dir, open: open,
		labels: map[string]labelSeen{}, completed: completed}
	r.fill()
	r.run(ctx)
	if r.db != nil && !r.hung {
		if err := r.db.Close(); err != nil {
			return rep, script, fmt.Errorf("logictest: %s: close: %w", path, err)
		}
	}
	return rep, script, nil
}

// RunFile runs the script at path as part of a Go test: every failure is
// reported with t.Errorf (so the test goes on to the next record), the first
// ones in full and the rest counted, and a one-line summary is logged.
func RunFile(t *testing.T, path string, open Opener, opts Options) {
	t.Helper()
	if open == nil {
		t.Fatalf("logictest: no Opener for %s", path)
	}
	limit := opts.MaxFailures
	if limit == 0 {
		limit = DefaultMaxFailures
	}
	n := 0
	user := opts.OnFailure
	opts.OnFailure = func(f Failure) {
		n++
		if n <= limit || limit < 0 {
			t.Errorf("%s", f)
		}
		if user != nil {
			user(f)
		}
	}
	rep, err := Run(context.Background(), path, open, opts)
	if err != nil {
		t.Errorf("%v", err)
	}
	if rep.Stopped != nil {
		t.Errorf("%s: stopped early: %v", path, rep.Stopped)
	}
	if limit >= 0 && n > limit {
		t.Errorf("%s: %d more failures not shown", path, n-limit)
	}
	t.Logf("%s", rep.Summary())
}

// counted reports whether records of kind k count in a Report.
func counted(k Kind) bool { return k == KindStatement || k == KindQuery || k == KindRestart }

// labelSeen is the first result seen for a label.
type labelSeen struct {
	hash string
	line int
}

// runner is the state of one run of one script.
type runner struct {
	opts   Options
	script *Script
	rep    *Report
	db     DB
	dir    string
	open   Opener
	labels map[string]labelSeen
	hung   bool // the engine did not return after cancellation: never touch db again
	// threshold is the classic hash-threshold in force (upstream's default
	// is 8); it only shapes completed output.
	threshold int
	// completed, when not nil, collects Complete's output per record index.
	completed map[int][]string
}

// fill turns zero options into their defaults.
func (r *runner) fill() {
	if r.opts.Engine == "" {
		r.opts.Engine = "postgresql"
	}
	if r.opts.QueryTimeout == 0 {
		r.opts.QueryTimeout = DefaultQueryTimeout
	}
	if r.opts.MaxFailures == 0 {
		r.opts.MaxFailures = DefaultMaxFailures
	}
	if r.script.Dialect == Classic {
		r.threshold = 8
	}
}

func (r *runner) run(ctx context.Context) {
	recs := r.script.Records
	for i := range recs {
		rec := &recs[i]
		if err := ctx.Err(); err != nil {
			r.stop(i, fmt.Errorf("before line %d: %w", rec.Line, err))
			return
		}
		if r.skipped(rec) {
			if counted(rec.Kind) {
				r.rep.Skipped++
			}
			if rec.Kind == KindQuery && rec.Label != "" {
				r.checkSkippedLabel(rec)
			}
			continue
		}
		switch rec.Kind {
		case KindHashThreshold:
			// The comparison follows the form of the expected output; the
			// threshold only shapes completed output (doc.go, "Comparison").
			r.threshold = rec.Threshold
		case KindHalt:
			r.rep.Halted = true
			r.notRun(i + 1)
			return
		case KindRestart:
			if !r.restart(rec) {
				r.stop(i+1, fmt.Errorf("restart at line %d failed", rec.Line))
				return
			}
		case KindStatement:
			r.statement(ctx, rec)
		case KindQuery:
			r.query(ctx, i, rec)
		}
		if r.hung {
			r.stop(i+1, fmt.Errorf("line %d: the engine did not return within %v of its context ending", rec.Line, cancelGrace))
			return
		}
	}
}

// stop ends the run with the records from index from on left unrun.
func (r *runner) stop(from int, why error) {
	r.rep.Stopped = why
	r.notRun(from)
}

func (r *runner) notRun(from int) {
	for _, rec := range r.script.Records[from:] {
		if counted(rec.Kind) {
			r.rep.NotRun++
		}
	}
}

// skipped applies the record's skipif/onlyif lines: any matching skipif, or
// any onlyif for another engine, skips it (upstream's rule).
func (r *runner) skipped(rec *Record) bool {
	for _, c := range rec.Conditions {
		match := strings.EqualFold(c.Engine, r.opts.Engine)
		if c.Skip == match {
			return true
		}
	}
	return false
}

func (r *runner) pass() { r.rep.Passed++ }

func (r *runner) fail(f Failure) {
	r.rep.Failed++
	f.Path = r.script.Path
	if len(f.Got) > maxGotLines {
		f.Got = append(f.Got[:maxGotLines:maxGotLines], fmt.Sprintf("... %d more lines", len(f.Got)-maxGotLines))
	}
	if r.opts.MaxFailures < 0 || len(r.rep.Failures) < r.opts.MaxFailures {
		r.rep.Failures = append(r.rep.Failures, f)
	}
	if r.opts.OnFailure != nil {
		r.opts.OnFailure(f)
	}
}

// sql returns the text to send for rec, and it again when the
// compatibility rewrite changed it (for the failure report).
func (r *runner) sql(rec *Record) (send, changed string) {
	if r.script.Dialect != Classic {
		return rec.SQL, ""
	}
	rewrite := r.opts.Rewrite
	if rewrite == nil {
		rewrite = Rewrite
	}
	s := rewrite(rec.SQL)
	if s != rec.SQL {
		return s, s
	}
	return s, ""
}

// errTimeout marks a record whose context ended before the engine answered.
var errTimeout = errors.New("timed out")

// errPanic marks a statement whose Exec panicked.
var errPanic = errors.New("the engine panicked")

// exec runs one statement under the record's timeout. Exec runs in its own
// goroutine so that an engine that ignores its context cannot hang the run:
// after the context ends the runner waits cancelGrace for it, then marks the
// run hung. An error that arrives after the deadline is reported as a
// timeout wrapping errTimeout, never as the statement's own error, so a
// `statement error` record cannot pass by timing out.
func (r *runner) exec(ctx context.Context, sql string) (*Result, error) {
	qctx, cancel := ctx, context.CancelFunc(func() {})
	if r.opts.QueryTimeout > 0 {
		qctx, cancel = context.WithTimeout(ctx, r.opts.QueryTimeout)
	}
	defer cancel()
	type answer struct {
		res *Result
		err error
	}
	ch := make(chan answer, 1)
	db := r.db
	go func() {
		// A panicking engine is a bug to report at its record, with the
		// stack, not a crash of the whole test binary.
		defer func() {
			if p := recover(); p != nil {
				ch <- answer{err: fmt.Errorf("%w: %v\n%s", errPanic, p, debug.Stack())}
			}
		}()
		res, err := db.Exec(qctx, sql)
		ch <- answer{res, err}
	}()
	var a answer
	select {
	case a = <-ch:
	case <-qctx.Done():
		t := time.NewTimer(cancelGrace)
		defer t.Stop()
		select {
		case a = <-ch:
		case <-t.C:
			r.hung = true
			return nil, fmt.Errorf("%w after %v and did not stop", errTimeout, r.opts.QueryTimeout)
		}
	}
	if a.err != nil && qctx.Err() != nil {
		return nil, fmt.Errorf("%w (%v): %v", errTimeout, qctx.Err(), a.err)
	}
	return a.res, a.err
}

func (r *runner) statement(ctx context.Context, rec *Record) {
	send, changed := r.sql(rec)
	_, err := r.exec(ctx, send)
	f := Failure{Line: rec.Line, SQL: rec.SQL, Sent: changed}
	switch {
	case errors.Is(err, errTimeout) || errors.Is(err, errPanic):
		f.Message = err.Error()
	case rec.ExpectError && err == nil:
		f.Message = "expected an error, statement succeeded"
		if rec.Error != nil {
			f.Message = fmt.Sprintf("expected an error matching %q, statement succeeded", rec.ErrorPattern)
		}
	case rec.ExpectError && rec.Error != nil && !rec.Error.MatchString(err.Error()):
		f.Message = fmt.Sprintf("error %q does not match %q", err.Error(), rec.ErrorPattern)
	case !rec.ExpectError && err != nil:
		f.Message = fmt.Sprintf("expected success, got error: %v", err)
	default:
		r.pass()
		return
	}
	r.fail(f)
}

func (r *runner) query(ctx context.Context, idx int, rec *Record) {
	send, changed := r.sql(rec)
	res, err := r.exec(ctx, send)
	f := Failure{Line: rec.Line, SQL: rec.SQL, Sent: changed}
	ncol := len(rec.Types)
	switch {
	case err != nil:
		f.Message = fmt.Sprintf("query failed: %v", err)
		r.fail(f)
		return
	case res == nil:
		f.Message = "query returned no result set"
		r.fail(f)
		return
	case len(res.Columns) != 0 && len(res.Columns) != ncol:
		f.Message = fmt.Sprintf("expected %d columns (%s), got %d (%s)", ncol, rec.Types, len(res.Columns), strings.Join(res.Columns, ", "))
		r.fail(f)
		return
	}
	for k, row := range res.Rows {
		if len(row) != ncol {
			f.Message = fmt.Sprintf("expected %d columns (%s), row %d has %d", ncol, rec.Types, k+1, len(row))
			r.fail(f)
			return
		}
	}
	vals := renderValues(res.Rows, rec.Types, r.script.Dialect)
	sortValues(vals, ncol, rec.Sort)
	if r.completed != nil {
		r.completed[idx] = r.completion(rec, vals)
	}
	out := compareQuery(rec, vals, r.script.Dialect)
	labelOK := true
	if rec.Label != "" {
		labelOK = r.checkLabel(rec, hashValues(vals), &f)
	}
	switch {
	case !out.ok:
		f.Message, f.Expected, f.Got = out.msg, out.expected, out.got
		if f.Expected == nil {
			f.Expected = []string{}
		}
		if f.Got == nil {
			f.Got = []string{}
		}
		r.fail(f)
	case !labelOK:
		r.fail(f)
	default:
		r.pass()
	}
}

// checkLabel records or compares the hash of a labelled result; on a
// mismatch it fills f's message and returns false.
func (r *runner) checkLabel(rec *Record, hash string, f *Failure) bool {
	seen, ok := r.labels[rec.Label]
	if !ok {
		r.labels[rec.Label] = labelSeen{hash: hash, line: rec.Line}
		return true
	}
	if seen.hash == hash {
		return true
	}
	f.Message = fmt.Sprintf("labeled result [%s] does not agree with the result at line %d", rec.Label, seen.line)
	return false
}

// checkSkippedLabel lets a skipped labelled query take part in its label
// through its expected text, as upstream does in verify mode. A mismatch
// moves the record from skipped to failed, keeping the counts' sum.
func (r *runner) checkSkippedLabel(rec *Record) {
	hash := rec.Hash
	if !rec.Hashed {
		hash = hashLines(rec.Expected)
	}
	f := Failure{Line: rec.Line, SQL: rec.SQL}
	if r.checkLabel(rec, hash, &f) {
		return
	}
	r.rep.Skipped--
	r.fail(f)
}

// restart closes the database and opens the same directory again.
func (r *runner) restart(rec *Record) bool {
	f := Failure{Line: rec.Line, SQL: "restart"}
	if err := r.db.Close(); err != nil {
		r.db = nil
		f.Message = fmt.Sprintf("close before restart: %v", err)
		r.fail(f)
		return false
	}
	db, err := r.open(r.dir)
	if err != nil {
		r.db = nil
		f.Message = fmt.Sprintf("reopen after restart: %v", err)
		r.fail(f)
		return false
	}
	r.db = db
	r.pass()
	return true
}
