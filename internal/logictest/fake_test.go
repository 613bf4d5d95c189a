package logictest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// answer is a canned reply of the fake engine.
type answer struct {
	res *Result
	err error
	// hang makes Exec wait for its context (ignore: wait for release even
	// after the context ends, like an engine that ignores cancellation).
	hang, ignore bool
	// panics makes Exec panic.
	panics bool
}

// fakeEngine is a scripted engine: a map from exact SQL text to a canned
// result or error. SQL it does not know fails, so a test notices a
// statement the runner sent differently from what the test expected.
type fakeEngine struct {
	mu      sync.Mutex
	answers map[string]answer
	// queued answers are given, in order, before answers: for scripts that
	// send the same SQL several times and expect different results.
	queued  map[string][]answer
	opens   []string // the directory of every open
	closes  int
	events  []string // "open <dir>" and "close", in order
	sent    []string
	release chan struct{}
	openErr error
}

func newFake() *fakeEngine {
	return &fakeEngine{answers: map[string]answer{}, queued: map[string][]answer{}, release: make(chan struct{})}
}

// queue moves the answer just set for sql to the end of its queue.
func (e *fakeEngine) queue(sql string) *fakeEngine {
	e.queued[sql] = append(e.queued[sql], e.answers[sql])
	delete(e.answers, sql)
	return e
}

// ok makes sql succeed with no result.
func (e *fakeEngine) ok(sql string) *fakeEngine { e.answers[sql] = answer{}; return e }

// fail makes sql fail with msg.
func (e *fakeEngine) fail(sql, msg string) *fakeEngine {
	e.answers[sql] = answer{err: errors.New(msg)}
	return e
}

// rows makes sql return the rows, each given as its values separated by
// '|' ("NULL" is SQL NULL).
func (e *fakeEngine) rows(sql string, ncol int, rows ...string) *fakeEngine {
	res := &Result{Columns: make([]string, ncol)}
	for k := range res.Columns {
		res.Columns[k] = fmt.Sprintf("c%d", k+1)
	}
	for _, r := range rows {
		var row []Value
		for _, v := range strings.Split(r, "|") {
			if v == "NULL" {
				row = append(row, Null)
			} else {
				row = append(row, Text(v))
			}
		}
		res.Rows = append(res.Rows, row)
	}
	e.answers[sql] = answer{res: res}
	return e
}

func (e *fakeEngine) open(dir string) (DB, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.openErr != nil {
		return nil, e.openErr
	}
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return nil, fmt.Errorf("fake: the data directory %s does not exist", dir)
	}
	e.opens = append(e.opens, dir)
	e.events = append(e.events, "open "+dir)
	return &fakeDB{e: e}, nil
}

type fakeDB struct {
	e      *fakeEngine
	closed bool
}

func (d *fakeDB) Exec(ctx context.Context, sql string) (*Result, error) {
	d.e.mu.Lock()
	if d.closed {
		d.e.mu.Unlock()
		return nil, errors.New("fake: Exec after Close")
	}
	d.e.sent = append(d.e.sent, sql)
	a, ok := d.e.answers[sql]
	if q := d.e.queued[sql]; len(q) > 0 {
		a, ok, d.e.queued[sql] = q[0], true, q[1:]
	}
	d.e.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("fake: no answer for %q", sql)
	}
	switch {
	case a.panics:
		panic("fake: index out of range")
	case a.ignore:
		<-d.e.release
		return nil, nil
	case a.hang:
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return a.res, a.err
}

func (d *fakeDB) Close() error {
	d.e.mu.Lock()
	defer d.e.mu.Unlock()
	if d.closed {
		return errors.New("fake: closed twice")
	}
	d.closed = true
	d.e.closes++
	d.e.events = append(d.e.events, "close")
	return nil
}

// writeScript writes a script into a temporary directory under name.
func writeScript(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// run runs a script on the fake and fails the test on a runner error.
func runFake(t *testing.T, e *fakeEngine, name, text string, opts Options) Report {
	t.Helper()
	rep, err := Run(context.Background(), writeScript(t, name, text), e.open, opts)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if rep.Records != rep.Passed+rep.Failed+rep.Skipped+rep.NotRun {
		t.Errorf("counts do not add up: %+v", rep)
	}
	return rep
}

// wantFailures checks the failures' lines and that each message contains
// its fragment, in order.
func wantFailures(t *testing.T, rep Report, want ...any) {
	t.Helper()
	if len(want)%2 != 0 {
		t.Fatal("wantFailures takes line, fragment pairs")
	}
	if len(rep.Failures) != len(want)/2 || rep.Failed != len(want)/2 {
		var b strings.Builder
		for _, f := range rep.Failures {
			b.WriteString(f.String() + "\n")
		}
		t.Fatalf("got %d failures (%d counted), want %d:\n%s", len(rep.Failures), rep.Failed, len(want)/2, b.String())
	}
	for k, f := range rep.Failures {
		line, frag := want[2*k].(int), want[2*k+1].(string)
		if f.Line != line || !strings.Contains(f.Message, frag) {
			t.Errorf("failure %d: got line %d %q, want line %d containing %q", k, f.Line, f.Message, line, frag)
		}
		if prefix := fmt.Sprintf("%s:%d: ", rep.Path, line); !strings.HasPrefix(f.String(), prefix) {
			t.Errorf("failure %d prints as %q, want the prefix %q", k, f.String(), prefix)
		}
	}
}
