package logictest

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

var (
	corpusFlag = flag.String("corpus", "",
		"comma-separated corpus files for TestCorpus, as paths under ../shared/extern/sqllogictest/test "+
			"without .test (select1, evidence/in1), directories (random/expr) for every file under them, or all")
	corpusTimeout = flag.Duration("corpus-timeout", 10*time.Minute,
		"time budget of each corpus file in TestCorpus; records left when it runs out count as not run")
	corpusPeer = flag.String("corpus-peer", "",
		"run TestCorpus on a peer engine instead of DefaultOpener, with the corpus as written: "+
			"sqlite (Python's sqlite3) or postgresql (through psql, at STRATA_PG_PEER)")
)

// pendingConformance lists the conformance files expected to fail for now,
// with the reason. TestConformance fails when one of them passes, so the
// list only shrinks: delete a line as soon as its file passes.
var pendingConformance = map[string]string{}

// pendingSQL is the same list for test/sql.
var pendingSQL = map[string]string{}

const noEngine = "no engine registered: logictest.DefaultOpener is nil until the engine sets it " +
	"from a test file in internal/logictest (see db.go)"

func TestConformance(t *testing.T) { runSuite(t, conformanceDir(t), pendingConformance) }

func TestSQL(t *testing.T) { runSuite(t, sqlDir(t), pendingSQL) }

// runSuite runs every *.slt in dir on DefaultOpener: a file not pending must
// pass (its failures are reported one by one); a pending file must fail.
func runSuite(t *testing.T, dir string, pending map[string]string) {
	files := globOrFatal(t, filepath.Join(dir, "*.slt"))
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	for name := range pending {
		if !slices.Contains(names, name) {
			t.Errorf("pending lists %s, which is not in %s: remove it", name, dir)
		}
	}
	if DefaultOpener == nil {
		t.Skip(noEngine)
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			reason, isPending := pending[name]
			if !isPending {
				RunFile(t, f, DefaultOpener, Options{})
				return
			}
			rep, err := Run(context.Background(), f, DefaultOpener, Options{MaxFailures: 3})
			if perr := pendingPasses(name, reason, rep, err); perr != nil {
				t.Error(perr)
				return
			}
			t.Logf("pending (%s): %s", reason, rep.Summary())
			if err != nil {
				t.Logf("%v", err)
			}
			for _, fl := range rep.Failures {
				t.Logf("%s", fl)
			}
		})
	}
}

// pendingPasses returns an error when a pending file ran cleanly: it must
// leave the pending list.
func pendingPasses(name, reason string, rep Report, err error) error {
	if err == nil && rep.OK() {
		return fmt.Errorf("%s passes now: remove it from the pending list (it said: %s)", name, reason)
	}
	return nil
}

func TestPendingPasses(t *testing.T) {
	if pendingPasses("a.slt", "x", Report{Records: 3, Passed: 3}, nil) == nil {
		t.Errorf("a clean pending run was accepted")
	}
	for _, c := range []struct {
		rep Report
		err error
	}{
		{Report{Records: 3, Passed: 2, Failed: 1}, nil},
		{Report{Records: 3, Passed: 1, NotRun: 2, Stopped: context.DeadlineExceeded}, nil},
		{Report{}, fmt.Errorf("open: no engine")},
	} {
		if err := pendingPasses("a.slt", "x", c.rep, c.err); err != nil {
			t.Errorf("a failing pending run (%+v, %v) was rejected: %v", c.rep, c.err, err)
		}
	}
}

// TestSuitesOnFake runs every conformance file and every test/sql script on
// a fake engine that answers each statement and query with what its record
// expects: every record must pass. It proves the runner reads, renders and
// compares the project's real scripts as they are meant (wide integers,
// three-decimal reals, values with spaces, rowsort as written, restart)
// before any engine exists.
// firstAlt matches a group of alternatives without nested groups, its
// first alternative captured.
var firstAlt = regexp.MustCompile(`\(([^()|]*)\|[^()]*\)`)

func TestSuitesOnFake(t *testing.T) {
	files := globOrFatal(t, filepath.Join(conformanceDir(t), "*.slt"))
	files = append(files, globOrFatal(t, filepath.Join(sqlDir(t), "*.slt"))...)
	// A message every error regex of the scripts matches: the pattern, and
	// the pattern with \b and backslashes made plain ("\bid\b" -> " id ").
	plain := strings.NewReplacer(`\b`, " ", `\`, "")
	for _, f := range files {
		s, err := ParseFile(f, DialectAuto)
		if err != nil {
			t.Fatal(err)
		}
		e := newFake()
		for _, rec := range s.Records {
			switch {
			case rec.Kind == KindStatement && rec.ExpectError:
				msg := "some error"
				if rec.Error != nil {
					msg = rec.ErrorPattern + " " + plain.Replace(rec.ErrorPattern)
					if bare := strings.Trim(plain.Replace(rec.ErrorPattern), "^$"); !rec.Error.MatchString(msg) {
						msg = bare
					}
					if !rec.Error.MatchString(msg) {
						// (a|b) c: the first alternative of each group.
						msg = firstAlt.ReplaceAllString(plain.Replace(rec.ErrorPattern), "$1")
					}
					if !rec.Error.MatchString(msg) {
						t.Errorf("%s:%d: this test cannot make up a message matching %q: teach it", f, rec.Line, rec.ErrorPattern)
					}
				}
				e.fail(rec.SQL, msg).queue(rec.SQL)
			case rec.Kind == KindStatement:
				e.ok(rec.SQL).queue(rec.SQL)
			case rec.Kind == KindQuery:
				var rows []string
				for _, l := range rec.Expected {
					vals := strings.SplitN(l, " ", len(rec.Types))
					for c, v := range vals {
						if v == "(empty)" {
							vals[c] = ""
						}
					}
					rows = append(rows, strings.Join(vals, "|"))
				}
				e.rows(rec.SQL, len(rec.Types), rows...).queue(rec.SQL)
			}
		}
		rep, err := Run(context.Background(), f, e.open, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.OK() || rep.Passed != rep.Records {
			t.Errorf("%s", rep.Summary())
			for _, fl := range rep.Failures {
				t.Errorf("%s", fl)
			}
		}
	}
}

// TestCorpus runs files of SQLite's classic corpus and prints a table of
// their counts. It is a scoreboard, not a gate: wrong results are counted
// and the first few shown, and the test fails only when a file cannot be
// run at all.
func TestCorpus(t *testing.T) {
	open, opts := DefaultOpener, Options{MaxFailures: 3}
	switch *corpusPeer {
	case "":
		if open == nil {
			t.Skip(noEngine)
		}
	case "sqlite":
		open, opts.Engine, opts.Rewrite = sqliteOpener(t), "sqlite", asWritten
	case "postgresql":
		conn := os.Getenv("STRATA_PG_PEER")
		if conn == "" {
			t.Skip("set STRATA_PG_PEER to a psql connection string")
		}
		peer := &pgPeer{conn: conn, dbs: map[string]string{}}
		t.Cleanup(peer.dropAll)
		open, opts.Engine, opts.Rewrite = peer.open, "postgresql", asWritten
	default:
		t.Fatalf("-corpus-peer %q: want sqlite or postgresql", *corpusPeer)
	}
	if *corpusFlag == "" {
		t.Skip("pass -corpus select1,select2 (or all) to run SQLite's corpus")
	}
	base := corpusDir(t)
	files, err := resolveCorpus(base, *corpusFlag)
	if err != nil {
		t.Fatal(err)
	}
	var reps []Report
	for _, f := range files {
		ctx, cancel := context.WithTimeout(context.Background(), *corpusTimeout)
		rep, err := Run(ctx, f, open, opts)
		cancel()
		if err != nil {
			t.Errorf("%v", err)
		}
		for _, fl := range rep.Failures {
			t.Logf("%s", fl)
		}
		reps = append(reps, rep)
	}
	t.Logf("\n%s", FormatTable(base, reps))
}

// resolveCorpus turns the -corpus list into files under base: "all", a
// directory (every .test file under it), or a file with or without .test.
func resolveCorpus(base, list string) ([]string, error) {
	var files []string
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if name == "all" {
			name = "."
		}
		p := filepath.Join(base, filepath.FromSlash(name))
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			err := filepath.WalkDir(p, func(q string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() && filepath.Ext(q) == ".test" {
					files = append(files, q)
				}
				return err
			})
			if err != nil {
				return nil, err
			}
			continue
		}
		if filepath.Ext(p) != ".test" {
			p += ".test"
		}
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("corpus file %q: %w", name, err)
		}
		files = append(files, p)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("-corpus %q names no files under %s", list, base)
	}
	slices.Sort(files)
	return slices.Compact(files), nil
}

func TestResolveCorpus(t *testing.T) {
	base := corpusDir(t)
	rel := func(files []string) string {
		var out []string
		for _, f := range files {
			r, _ := filepath.Rel(base, f)
			out = append(out, filepath.ToSlash(r))
		}
		return strings.Join(out, ",")
	}
	files, err := resolveCorpus(base, "select2, select1.test,select1")
	if err != nil || rel(files) != "select1.test,select2.test" {
		t.Errorf("files %s, err %v", rel(files), err)
	}
	files, err = resolveCorpus(base, "random/expr")
	if err != nil || rel(files) != "random/expr/slt_good_0.test,random/expr/slt_good_1.test,random/expr/slt_good_2.test" {
		t.Errorf("files %s, err %v", rel(files), err)
	}
	files, err = resolveCorpus(base, "all")
	if err != nil || len(files) != len(corpusFiles(t)) {
		t.Errorf("all: %d files, err %v; want %d", len(files), err, len(corpusFiles(t)))
	}
	if _, err := resolveCorpus(base, "nosuch"); err == nil {
		t.Errorf("a missing file resolved")
	}
	if _, err := resolveCorpus(base, " , "); err == nil {
		t.Errorf("an empty list resolved")
	}
}

// TestCorpusOnFake drives whole corpus files through Run with a fake engine
// that knows every statement and answers every query with the values its
// record expects, except for hashed results, which it answers with no rows.
// So every statement and every query with listed values must pass, every
// hashed query must fail, and the skipif/onlyif counts must match the file:
// the runner's bookkeeping, sorting and labels at corpus scale, without an
// engine.
func TestCorpusOnFake(t *testing.T) {
	var reps []Report
	for _, name := range []string{"select1.test", "random/expr/slt_good_0.test", "evidence/in1.test", "evidence/slt_lang_aggfunc.test"} {
		path := filepath.Join(corpusDir(t), filepath.FromSlash(name))
		s, err := ParseFile(path, DialectAuto)
		if err != nil {
			t.Fatal(err)
		}
		e := newFake()
		var wantSkipped, wantPassed, wantFailed, wantNotRun int
		r := runner{opts: Options{Engine: "postgresql"}}
		halted := false
		for i := range s.Records {
			rec := &s.Records[i]
			switch {
			case !counted(rec.Kind) && rec.Kind != KindHalt:
				continue
			case halted:
				if counted(rec.Kind) {
					wantNotRun++
				}
				continue
			case r.skipped(rec):
				if counted(rec.Kind) {
					wantSkipped++
				}
				continue
			}
			switch rec.Kind {
			case KindHalt:
				halted = true
			case KindStatement:
				if rec.ExpectError {
					e.fail(Rewrite(rec.SQL), "fake error")
				} else {
					e.ok(Rewrite(rec.SQL))
				}
				wantPassed++
			case KindQuery:
				if rec.Hashed {
					e.rows(Rewrite(rec.SQL), len(rec.Types))
					wantFailed++
					continue
				}
				var rows []string
				for k := 0; k+len(rec.Types) <= len(rec.Expected); k += len(rec.Types) {
					vals := slices.Clone(rec.Expected[k : k+len(rec.Types)])
					for c, v := range vals {
						if v == "(empty)" {
							vals[c] = ""
						}
					}
					rows = append(rows, strings.Join(vals, "|"))
				}
				e.rows(Rewrite(rec.SQL), len(rec.Types), rows...)
				wantPassed++
			}
		}
		start := time.Now()
		rep, err := Run(context.Background(), path, e.open, Options{MaxFailures: -1})
		if err != nil {
			t.Fatal(err)
		}
		elapsed := time.Since(start)
		if rep.Skipped != wantSkipped || rep.Passed != wantPassed || rep.Failed != wantFailed || rep.NotRun != wantNotRun {
			t.Errorf("%s; want %d passed, %d failed, %d skipped, %d not run", rep.Summary(), wantPassed, wantFailed, wantSkipped, wantNotRun)
			for _, f := range rep.Failures {
				if !strings.Contains(f.Message, "hash") {
					t.Logf("%s", f)
					break
				}
			}
		}
		t.Logf("%s: %d records in %v", name, rep.Records, elapsed)
		reps = append(reps, rep)
	}
	t.Logf("\n%s", FormatTable(corpusDir(t), reps))
}
