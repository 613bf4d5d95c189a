package session

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-db/strata/internal/sql/parser"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/storage"
	"github.com/strata-db/strata/internal/types"
)

// Knobs of TestTransformDiff. Every iteration runs on a seed of its own
// (the base seed plus its index), so a failing iteration is rerun alone
// with -transform.seed=<its seed> -transform.iters=1. The runner's timing
// (which source commits one step takes together) is not part of the seed,
// so a failure that depends on it may need a few reruns.
var (
	transformDiffSeed   = flag.Uint64("transform.seed", 0, "TestTransformDiff: base seed (0: $STRATA_TRANSFORM_SEED, else the clock)")
	transformDiffIters  = flag.Int("transform.iters", 0, "TestTransformDiff: number of iterations (0: as many as fit in -transform.budget)")
	transformDiffBudget = flag.Duration("transform.budget", 6*time.Second, "TestTransformDiff: time budget when -transform.iters is 0")
	transformDiffSkip   = flag.String("transform.skip", "", "TestTransformDiff: comma-separated query tags not to generate (see diffGen.tag), or alter-unread: no RENAME or DROP of a source column no transformation names while one reads the table")
)

// TestTransformDiff is a seeded, randomized differential test of continuous
// transformations (SPEC §12). Each iteration opens a fresh engine, creates a
// few MODE APPEND sources, and interleaves at random:
//
//   - CREATE TRANSFORMATION of a generated query: a row query (filters,
//     projections, UNION ALL, derived tables) into a MODE APPEND or a MODE
//     UPSERT target, or an aggregate (one outermost GROUP BY, or a
//     whole-table aggregate, with count(*), count, sum, min, max, avg) into
//     a MODE UPSERT target or one attribute group of a MODE VERSIONED target
//     (R12.1), over rows already in the sources and rows inserted later
//     (R12.2);
//   - INSERT batches of 1–50 rows (NULLs, duplicates, negative numbers),
//     sometimes two in one BEGIN … COMMIT;
//   - SYNC TRANSFORMATIONS (R12.4) followed by a check of every target;
//   - restarts (close the engine, open the directory again: the
//     transformations resume from their checkpoints, R12.2, R12.3);
//   - ALTER TABLE on a source (ADD COLUMN; ALTER COLUMN … TYPE widening an
//     INT32 to INT64, which makes the runner rebuild an aggregate's state;
//     RENAME or DROP COLUMN, refused while a transformation names the
//     column) or on a target (ADD COLUMN, ADD ATTRIBUTE GROUP) (R12.3);
//   - DROP TRANSFORMATION (after which its target must not change, R12.3),
//     sometimes followed by a new transformation of the same name (which
//     starts from nothing);
//   - direct writes into a maintained group (which must fail, naming the
//     transformation, R12.3).
//
// Iterations vary the runner's step size (maxDeltaRows) and the engine's
// memtable and WAL segment sizes, so that steps are cut into chunks and
// checkpoints move from the WAL to the manifest.
//
// After each SYNC every target is checked against its query run as a plain
// SELECT over the sources, both sides cast to the target's column types:
//
//   - an aggregate's target (its key is the GROUP BY keys) must hold exactly
//     the query's rows;
//   - an append target of a row query must hold the query's rows as a
//     multiset: each output row once (exactly once across restarts, R12.2);
//   - an upsert target of a row query must hold one row per key the query
//     outputs, and that row must be one the query outputs for the key from
//     the latest source commit that gave the key any row (later commits win,
//     R3.1; rows of one commit may win in any order);
//
// and system.transformations must show every transformation running with no
// lag and no error, and its output commits must have kind transformation
// (R12.3, R12.4).
//
// On a mismatch the test prints the iteration's whole SQL script (every
// statement in order, restarts as comments) with the difference, and stops
// after three failing iterations. By default it runs iterations for about
// 6 s (-transform.budget); -transform.skip leaves out query shapes by tag,
// for instance to look for other failures while a known one is open.
func TestTransformDiff(t *testing.T) {
	seed := *transformDiffSeed
	if seed == 0 {
		if s := os.Getenv("STRATA_TRANSFORM_SEED"); s != "" {
			v, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				t.Fatalf("STRATA_TRANSFORM_SEED=%q: %v", s, err)
			}
			seed = v
		}
	}
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -transform.seed=%d or STRATA_TRANSFORM_SEED=%d)", seed, seed, seed)
	skip := map[string]bool{}
	for _, s := range strings.Split(*transformDiffSkip, ",") {
		if s = strings.TrimSpace(s); s != "" {
			skip[s] = true
		}
	}
	// Some iterations make steps small, so that a transformation catches up
	// in several commits; set only while no engine is open.
	defaultDelta := maxDeltaRows
	t.Cleanup(func() { maxDeltaRows = defaultDelta })

	var st diffStats
	start := time.Now()
	failures := 0
	n := 0
	for i := 0; ; i++ {
		if *transformDiffIters > 0 && i >= *transformDiffIters {
			break
		}
		if *transformDiffIters == 0 && i > 0 && time.Since(start) > *transformDiffBudget {
			break
		}
		n++
		iterSeed := seed + uint64(i)
		it := &diffIter{
			t:       t,
			seed:    iterSeed,
			rng:     rand.New(rand.NewPCG(iterSeed, 0x7472616e73666f72)),
			skip:    skip,
			dir:     t.TempDir(),
			batchOf: map[int64]int{},
			stats:   &st,
		}
		maxDeltaRows = defaultDelta
		if it.rng.IntN(3) == 0 {
			maxDeltaRows = uint64(1 + it.rng.IntN(40))
		}
		// Half of the iterations flush and merge often: a flush drops
		// WAL segments and moves the checkpoints they carried into the
		// manifest (docs/transformations.md), and the steps then read
		// source rows from parts.
		it.opts = storage.Options{HugePageBytes: -1}
		if it.rng.IntN(2) == 0 {
			it.opts.MemtableBytes = int64(1 + it.rng.IntN(16<<10))
			it.opts.WALSegmentSize = 16 << 10
			it.opts.MergePartRows = 16 + it.rng.IntN(64)
		}
		err := it.open()
		if i == 0 {
			// The budget starts once the first engine is open: the
			// first storage.Open of a process can take seconds under
			// -race.
			start = time.Now()
		}
		if err == nil {
			err = it.run()
		}
		if cerr := it.close(); err == nil {
			err = cerr
		}
		if err != nil {
			failures++
			t.Errorf("iteration %d, seed %d (rerun alone: go test -count=1 -run TestTransformDiff ./internal/session/ -transform.seed=%d -transform.iters=1), step size %d rows, memtable %d bytes (0: default):\n%v\n\n-- the iteration's script, in order:\n%s",
				i, iterSeed, iterSeed, maxDeltaRows, it.opts.MemtableBytes, err, strings.Join(it.script, "\n"))
			if failures >= 3 {
				break
			}
		}
	}
	t.Logf("%d iterations in %v: %d transformations (%s), %d refused, %d inserts, %d syncs, %d target checks, %d restarts, %d ALTERs, %d drops, %d direct writes refused",
		n, time.Since(start).Round(time.Millisecond), st.created, st.kinds(), st.refused, st.inserts, st.syncs, st.checks, st.restarts, st.alters, st.drops, st.direct)
	t.Logf("query tags of the transformations created: %s", diffCounts(st.byTag))
}

// diffStats counts what the iterations did, for the log.
type diffStats struct {
	created, refused, inserts, syncs, checks, restarts, alters, drops, direct int
	byKind, byTag                                                             map[string]int
}

func (s *diffStats) kinds() string { return diffCounts(s.byKind) }

func diffCounts(m map[string]int) string {
	var parts []string
	for k, n := range m {
		parts = append(parts, fmt.Sprintf("%s %d", k, n))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

// diffClass is the kind of value a generated expression has.
type diffClass uint8

const (
	diffInt diffClass = iota
	diffStr
	diffDec
	diffTime
)

// targetType is the type of a target column holding values of class c:
// wide enough that no value the test generates is rounded or overflows.
func (c diffClass) targetType() string {
	switch c {
	case diffInt:
		return "INT64"
	case diffStr:
		return "STRING"
	case diffDec:
		return "DECIMAL(30, 6)"
	}
	return "DATETIME64(3, 'UTC')"
}

// diffCol is a column of a source, of a derived table or of a target.
type diffCol struct {
	name    string
	cls     diffClass
	notNull bool
	typ     string // a target's or an added source column's type
}

// diffStdCols are the columns of every derived table the generator makes
// (and the base columns of every source): id is the source row's id,
// carried unchanged through every level so that an output row can be traced
// to the commit that inserted it.
var diffStdCols = []diffCol{
	{name: "id", cls: diffInt, notNull: true},
	{name: "k", cls: diffInt, notNull: true},
	{name: "g", cls: diffStr, notNull: true},
	{name: "v", cls: diffInt},
	{name: "d", cls: diffDec},
	{name: "t", cls: diffTime},
}

// diffSource is a MODE APPEND source table.
type diffSource struct {
	name string
	cols []diffCol
	// recent are rows inserted before (values aligned with cols at the
	// time, id excluded), copied to make duplicates.
	recent [][]string
}

// diffTarget is a target table.
type diffTarget struct {
	name string
	mode string // APPEND, UPSERT or VERSIONED
	keys []diffCol
	// groups are the aggregate outputs of an aggregate's target: a
	// VERSIONED target's attribute groups, each for one transformation,
	// or an UPSERT target's one group (default).
	groups []*diffGroup
	// spare is a column no transformation writes (direct-write checks).
	spare  string
	extras int
}

// diffGroup is an attribute group of a VERSIONED target: its VALID BY
// column holds count(*) (which grows with every new row of a group, so
// every new version of a group is later than the one before).
type diffGroup struct {
	name  string
	aggs  []diffAgg
	taken bool
}

// diffAgg is an aggregate output column: fn of an argument of class arg,
// into a target column col.
type diffAgg struct {
	fn  string // count(*) is fn "count*"
	arg diffClass
	col diffCol
}

// Ways to compare a target with its query.
const (
	diffCmpExact  = iota // the same rows (a multiset)
	diffCmpLatest        // one row per key, from the key's latest source commit
)

// diffXform is a transformation the test created.
type diffXform struct {
	name  string
	tgt   *diffTarget
	group *diffGroup // nil unless the target is VERSIONED
	query string     // the query of CREATE TRANSFORMATION
	tags  []string
	// sources are the tables the query reads.
	sources []string
	// read selects the target's rows; want runs the query as a plain
	// SELECT, cast to the target's types, in read's column order (for
	// diffCmpLatest with the source row's id last).
	read, want string
	nKeys      int
	cmp        int
	dropped    bool
	frozen     []string // the target's rows when dropped
}

// diffIter is one iteration: one engine directory, its sources, targets
// and transformations, and the script of every statement run.
type diffIter struct {
	t      *testing.T
	seed   uint64
	rng    *rand.Rand
	skip   map[string]bool
	dir    string
	opts   storage.Options
	eng    *storage.Engine
	s      *Session
	script []string
	stats  *diffStats

	srcs  []*diffSource
	tgts  []*diffTarget
	xs    []*diffXform
	names int
	// nextID numbers source rows across all sources; batchOf gives the
	// commit (counted by the test: one per INSERT or transaction) that
	// inserted each.
	nextID  int64
	batch   int
	batchOf map[int64]int
}

func (it *diffIter) open() error {
	eng, err := storage.Open(it.dir, it.opts)
	if err != nil {
		return fmt.Errorf("open %s: %w", it.dir, err)
	}
	it.eng = eng
	it.s = New(eng, Options{})
	return nil
}

// close closes the engine, which waits for the runner to end.
func (it *diffIter) close() error {
	if it.eng == nil {
		return nil
	}
	err := it.eng.Close()
	it.eng, it.s = nil, nil
	if err != nil {
		return fmt.Errorf("close the engine: %w", err)
	}
	return nil
}

// restart closes the engine and opens its directory again (R12.2, R12.3).
func (it *diffIter) restart() error {
	it.script = append(it.script, "-- restart: close the engine and open the directory again")
	it.stats.restarts++
	if err := it.close(); err != nil {
		return err
	}
	return it.open()
}

// exec runs one statement and records it in the script.
func (it *diffIter) exec(sql string) (*Result, error) {
	it.script = append(it.script, sql+";")
	return it.execQuiet(sql)
}

// execQuiet runs one statement without recording it (the checks' reads).
func (it *diffIter) execQuiet(sql string) (*Result, error) {
	stmt, err := parser.Parse(sql)
	if err != nil {
		return nil, fmt.Errorf("the test generated a statement that does not parse: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return it.s.Execute(ctx, stmt, sql, nil)
}

// must runs a statement that has to succeed.
func (it *diffIter) must(sql string) error {
	if _, err := it.exec(sql); err != nil {
		return fmt.Errorf("%s: %v", sql, err)
	}
	return nil
}

// rows runs a query and returns its rows as text, one line per row, the
// values separated by " | " (a DATETIME64's text holds a space).
func (it *diffIter) rows(sql string) ([]string, error) {
	res, err := it.execQuiet(sql)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", sql, err)
	}
	lines := make([]string, 0, len(res.Rows))
	for _, r := range res.Rows {
		parts := make([]string, len(r))
		for i, v := range r {
			if v.IsNull() {
				parts[i] = "NULL"
			} else {
				parts[i] = string(types.AppendText(nil, v))
			}
		}
		lines = append(lines, strings.Join(parts, " | "))
	}
	return lines, nil
}

func (it *diffIter) name(prefix string) string {
	it.names++
	return fmt.Sprintf("%s%d", prefix, it.names)
}

// run is the iteration, on its opened engine: a random walk of statements,
// then a last check.
func (it *diffIter) run() error {
	for n := 1 + it.rng.IntN(3); n > 0; n-- {
		if err := it.createSource(); err != nil {
			return err
		}
	}
	for n := it.rng.IntN(3); n > 0; n-- {
		if err := it.insert(); err != nil {
			return err
		}
	}
	steps := 25 + it.rng.IntN(25)
	for i := 0; i < steps; i++ {
		var err error
		switch r := it.rng.IntN(100); {
		case r < 38:
			err = it.insert()
		case r < 43:
			err = it.insertTxn()
		case r < 58:
			if len(it.live()) < 5 {
				err = it.createTransformation()
			} else {
				err = it.insert()
			}
		case r < 78:
			err = it.check()
		case r < 83:
			err = it.restart()
		case r < 88:
			err = it.alterSource()
		case r < 91:
			err = it.alterTarget()
		case r < 94:
			err = it.drop()
		case r < 97:
			err = it.directWrite()
		default:
			if len(it.srcs) < 4 {
				err = it.createSource()
			}
		}
		if err != nil {
			return err
		}
	}
	if len(it.live()) == 0 {
		if err := it.createTransformation(); err != nil {
			return err
		}
		if err := it.insert(); err != nil {
			return err
		}
	}
	return it.check()
}

// live returns the transformations not dropped.
func (it *diffIter) live() []*diffXform {
	var out []*diffXform
	for _, x := range it.xs {
		if !x.dropped {
			out = append(out, x)
		}
	}
	return out
}

func (it *diffIter) createSource() error {
	s := &diffSource{name: it.name("s"), cols: slices.Clone(diffStdCols)}
	it.srcs = append(it.srcs, s)
	return it.must("CREATE TABLE " + s.name + " (id INT64 NOT NULL, k INT64 NOT NULL, g STRING NOT NULL, v INT64 NULL, " +
		"d DECIMAL(10, 2) NULL, t DATETIME64(3, 'UTC') NULL) MODE APPEND")
}

// diffStrings are the values of the sources' strings (and the literals the
// queries compare them with).
var diffStrings = []string{"a", "b", "c", "A", "B", "ab", "ä", "zz"}

// value returns a random literal for a source column.
func (it *diffIter) value(c diffCol) string {
	r := it.rng
	if !c.notNull && r.IntN(5) == 0 {
		return "NULL"
	}
	switch {
	case c.name == "k":
		return strconv.Itoa(r.IntN(18) - 5)
	case c.cls == diffInt && c.name == "v":
		if r.IntN(20) == 0 {
			return strconv.Itoa(r.IntN(40001) - 20000)
		}
		return strconv.Itoa(r.IntN(101) - 50)
	case c.cls == diffInt:
		return strconv.Itoa(r.IntN(41) - 20)
	case c.cls == diffStr:
		return "'" + diffStrings[r.IntN(len(diffStrings))] + "'"
	case c.cls == diffDec:
		return diffDecText(r.IntN(100001) - 50000)
	}
	return fmt.Sprintf("'2026-%02d-%02d %02d:%02d:%02d.%03d'", 1+r.IntN(6), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), r.IntN(1000))
}

// diffDecText writes cents as a DECIMAL(10, 2) literal.
func diffDecText(cents int) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	return fmt.Sprintf("%s%d.%02d", sign, cents/100, cents%100)
}

// insertSQL returns an INSERT of 1–50 rows into s, each numbered and
// recorded as inserted by the current batch.
func (it *diffIter) insertSQL(s *diffSource) string {
	var sb strings.Builder
	names := make([]string, len(s.cols))
	for i, c := range s.cols {
		names[i] = c.name
	}
	fmt.Fprintf(&sb, "INSERT INTO %s (%s) VALUES ", s.name, strings.Join(names, ", "))
	n := 1 + it.rng.IntN(50)
	for i := 0; i < n; i++ {
		it.nextID++
		it.batchOf[it.nextID] = it.batch
		vals := make([]string, len(s.cols)-1)
		var dup []string
		if len(s.recent) > 0 && it.rng.IntN(4) == 0 {
			dup = s.recent[it.rng.IntN(len(s.recent))]
		}
		for j := range vals {
			if j < len(dup) {
				vals[j] = dup[j]
			} else {
				vals[j] = it.value(s.cols[j+1])
			}
		}
		if len(s.recent) < 64 {
			s.recent = append(s.recent, vals)
		} else {
			s.recent[it.rng.IntN(len(s.recent))] = vals
		}
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "(%d, %s)", it.nextID, strings.Join(vals, ", "))
	}
	it.stats.inserts++
	return sb.String()
}

// insert inserts one batch into a random source: one commit.
func (it *diffIter) insert() error {
	it.batch++
	return it.must(it.insertSQL(it.srcs[it.rng.IntN(len(it.srcs))]))
}

// insertTxn inserts two batches, into one source or two, in one commit.
func (it *diffIter) insertTxn() error {
	it.batch++
	if err := it.must("BEGIN"); err != nil {
		return err
	}
	for i := 0; i < 2; i++ {
		if err := it.must(it.insertSQL(it.srcs[it.rng.IntN(len(it.srcs))])); err != nil {
			it.exec("ROLLBACK")
			return err
		}
	}
	return it.must("COMMIT")
}

// alterSource changes a source under its transformations (R12.3, R8.1):
// adds a nullable column (later queries may use it); widens an added INT32
// column to INT64, which changes the type of a sum over it and so makes the
// runner rebuild an aggregate's state from the sources; or renames or drops
// an added column, which must fail while a transformation reads it (its
// stored query names it) and succeed otherwise.
func (it *diffIter) alterSource() error {
	s := it.srcs[it.rng.IntN(len(it.srcs))]
	it.stats.alters++
	var added []int
	for i, c := range s.cols {
		if i >= len(diffStdCols) {
			added = append(added, i)
		}
		if c.typ == "INT32" && it.rng.IntN(2) == 0 {
			s.cols[i].typ = "INT64"
			return it.must(fmt.Sprintf("ALTER TABLE %s ALTER COLUMN %s TYPE INT64", s.name, c.name))
		}
	}
	if len(added) > 0 && it.rng.IntN(3) == 0 {
		i := added[it.rng.IntN(len(added))]
		c := s.cols[i]
		drop := it.rng.IntN(2) == 0
		sql := fmt.Sprintf("ALTER TABLE %s RENAME COLUMN %s TO %s", s.name, c.name, it.name("x"))
		if drop {
			sql = fmt.Sprintf("ALTER TABLE %s DROP COLUMN %s", s.name, c.name)
		}
		var readers, tableReaders []string
		word := regexp.MustCompile(`\b` + c.name + `\b`)
		for _, x := range it.live() {
			if !slices.Contains(x.sources, s.name) {
				continue
			}
			tableReaders = append(tableReaders, x.name)
			if word.MatchString(x.query) {
				readers = append(readers, x.name)
			}
		}
		switch {
		case len(readers) == 0 && len(tableReaders) > 0 && it.skip["alter-unread"]:
			// -transform.skip=alter-unread: no rename or drop of a
			// column of a table a transformation reads.
			return nil
		case len(readers) > 0:
			it.script = append(it.script, sql+"; -- must fail: read by transformation "+strings.Join(readers, ", "))
			_, err := it.execQuiet(sql)
			if err == nil || !strings.Contains(err.Error(), "transformation") {
				return fmt.Errorf("R12.3: %s, a column transformation %s reads: %v (want an error naming the transformation)", sql, strings.Join(readers, ", "), err)
			}
			return nil
		}
		// No transformation names the column (its stored query
		// does not; * is refused), so it may go (the catalog's
		// nameDependency checks the columns a transformation reads).
		if err := it.must(sql); err != nil {
			return fmt.Errorf("%v\n(no transformation's query names column %s; transformations reading table %s: %s)", err, c.name, s.name, strings.Join(tableReaders, ", "))
		}
		if !drop {
			s.cols[i].name = sql[strings.LastIndex(sql, " ")+1:]
			return nil
		}
		s.cols = slices.Delete(s.cols, i, i+1)
		for j, r := range s.recent {
			if i-1 < len(r) {
				s.recent[j] = slices.Delete(slices.Clone(r), i-1, i)
			}
		}
		return nil
	}
	c := diffCol{name: it.name("x"), cls: diffInt, typ: "INT64"}
	switch it.rng.IntN(3) {
	case 0:
		c.cls, c.typ = diffStr, "STRING"
	case 1:
		c.typ = "INT32"
	}
	s.cols = append(s.cols, c)
	return it.must(fmt.Sprintf("ALTER TABLE %s ADD COLUMN %s %s", s.name, c.name, c.typ))
}

// alterTarget changes a target's schema under its transformations (R12.3,
// R4.5): a new column, or for a VERSIONED target a new attribute group.
func (it *diffIter) alterTarget() error {
	if len(it.tgts) == 0 {
		return nil
	}
	tg := it.tgts[it.rng.IntN(len(it.tgts))]
	tg.extras++
	it.stats.alters++
	if tg.mode == "VERSIONED" && it.rng.IntN(2) == 0 {
		return it.must(fmt.Sprintf("ALTER TABLE %s ADD ATTRIBUTE GROUP extra%d (label%d STRING NULL, at%d INT64 NULL) VALID BY (at%d)",
			tg.name, tg.extras, tg.extras, tg.extras, tg.extras))
	}
	return it.must(fmt.Sprintf("ALTER TABLE %s ADD COLUMN extra%d STRING", tg.name, tg.extras))
}

// drop drops a transformation; its target must not change afterwards
// (R12.3).
func (it *diffIter) drop() error {
	live := it.live()
	if len(live) == 0 {
		return nil
	}
	x := live[it.rng.IntN(len(live))]
	if err := it.must("DROP TRANSFORMATION " + x.name); err != nil {
		return err
	}
	got, err := it.rows(x.read)
	if err != nil {
		return err
	}
	x.dropped, x.frozen = true, got
	it.stats.drops++
	return nil
}

// diffLiteral returns a literal of a target column's class.
func diffLiteral(c diffCol) string {
	switch c.cls {
	case diffInt:
		return "0"
	case diffStr:
		return "'direct'"
	case diffDec:
		return "0"
	}
	return "'2026-01-01 00:00:00'"
}

// directWrite writes into a group a transformation maintains, which must
// fail with an error naming the transformation (R12.3).
func (it *diffIter) directWrite() error {
	live := it.live()
	if len(live) == 0 {
		return nil
	}
	x := live[it.rng.IntN(len(live))]
	var sql string
	switch {
	case x.tgt.mode == "APPEND":
		sql = fmt.Sprintf("INSERT INTO %s (%s) VALUES ('direct')", x.tgt.name, x.tgt.spare)
	case x.group != nil:
		cols := []string{}
		vals := []string{}
		for _, k := range x.tgt.keys {
			cols, vals = append(cols, k.name), append(vals, diffLiteral(k))
		}
		for _, a := range x.group.aggs {
			cols, vals = append(cols, a.col.name), append(vals, diffLiteral(a.col))
		}
		sql = fmt.Sprintf("UPSERT INTO %s (%s) VALUES (%s) ATTRIBUTE GROUP %s", x.tgt.name, strings.Join(cols, ", "), strings.Join(vals, ", "), x.group.name)
	default:
		cols := []string{}
		vals := []string{}
		for _, k := range x.tgt.keys {
			cols, vals = append(cols, k.name), append(vals, diffLiteral(k))
		}
		cols, vals = append(cols, x.tgt.spare), append(vals, "'direct'")
		sql = fmt.Sprintf("UPSERT INTO %s (%s) VALUES (%s)", x.tgt.name, strings.Join(cols, ", "), strings.Join(vals, ", "))
	}
	it.script = append(it.script, sql+"; -- must fail: maintained by transformation "+x.name)
	_, err := it.execQuiet(sql)
	if err == nil {
		return fmt.Errorf("R12.3: a direct write into the group transformation %s maintains succeeded: %s", x.name, sql)
	}
	if !strings.Contains(err.Error(), x.name) {
		return fmt.Errorf("R12.3: a direct write into the group transformation %s maintains failed with an error that does not name it: %s: %v", x.name, sql, err)
	}
	it.stats.direct++
	return nil
}

// createTransformation creates a target (or takes a free group of a
// VERSIONED one) and a transformation of a generated query into it.
func (it *diffIter) createTransformation() error {
	var x *diffXform
	var ddl string
	for attempt := 0; ; attempt++ {
		g := &diffGen{rng: it.rng, srcs: it.srcs}
		switch r := it.rng.IntN(100); {
		case r < 35:
			x, ddl = it.genAgg(g, "UPSERT")
		case r < 55:
			x, ddl = it.genAgg(g, "VERSIONED")
		case r < 80:
			x, ddl = it.genRows(g, "APPEND")
		default:
			x, ddl = it.genRows(g, "UPSERT")
		}
		x.tags, x.sources = g.tags, g.used
		if !slices.ContainsFunc(g.tags, func(s string) bool { return it.skip[s] }) || attempt > 50 {
			break
		}
		if x.group != nil && ddl == "" {
			x.group.taken = false
		}
	}
	if ddl != "" {
		if err := it.must(ddl); err != nil {
			return err
		}
		it.tgts = append(it.tgts, x.tgt)
	}
	// A dropped transformation's name is sometimes used again: the new one
	// starts from nothing.
	x.name = it.name("x")
	for _, old := range it.xs {
		if old.dropped && it.rng.IntN(3) == 0 && !slices.ContainsFunc(it.live(), func(l *diffXform) bool { return l.name == old.name }) {
			x.name = old.name
			break
		}
	}
	sql := "CREATE TRANSFORMATION " + x.name + " INTO " + x.tgt.name
	if x.group != nil {
		sql += " ATTRIBUTE GROUP " + x.group.name
	}
	sql += " AS " + x.query
	if _, err := it.exec(sql); err != nil {
		it.stats.refused++
		if x.group != nil {
			x.group.taken = false
		}
		// docs/transformations.md refuses a GROUP BY expression that
		// is not an output: GROUP BY k where k is an input column and
		// only the alias of another output expression.
		// The tag misses some shadowing aliases (a qualified scope, an
		// expression over the column): the refusal's message tells.
		if slices.Contains(x.tags, "alias-shadow") || slices.Contains(x.tags, "group-alias") && strings.Contains(err.Error(), "which is not an output column") {
			it.t.Logf("seed %d: refused (as docs/transformations.md allows: GROUP BY names an input column): %s: %v", it.seed, sql, err)
			return nil
		}
		var se *sqlerr.Error
		if errors.As(err, &se) && se.Code == sqlerr.CodeFeatureNotSupported {
			return fmt.Errorf("refused a query of a shape docs/transformations.md supports (tags %v):\n%s\n%v", x.tags, sql, err)
		}
		it.t.Logf("seed %d: CREATE TRANSFORMATION failed, skipped (tags %v): %s: %v", it.seed, x.tags, sql, err)
		return nil
	}
	it.stats.created++
	if it.stats.byKind == nil {
		it.stats.byKind, it.stats.byTag = map[string]int{}, map[string]int{}
	}
	for _, tag := range x.tags {
		it.stats.byTag[tag]++
	}
	kind := "rows"
	if x.nKeys > 0 && x.cmp == diffCmpExact {
		kind = "aggregate"
	}
	it.stats.byKind[kind+" into "+strings.ToLower(x.tgt.mode)]++
	it.xs = append(it.xs, x)
	return nil
}

// genAgg generates an aggregate transformation into a new target of the
// mode, or into a free group of a VERSIONED target.
func (it *diffIter) genAgg(g *diffGen, mode string) (*diffXform, string) {
	x := &diffXform{cmp: diffCmpExact}
	var ddl string
	if mode == "VERSIONED" {
		for _, tg := range it.tgts {
			for _, gr := range tg.groups {
				if !gr.taken && x.group == nil && it.rng.IntN(2) == 0 {
					x.tgt, x.group = tg, gr
				}
			}
		}
	}
	whole := false
	if x.tgt == nil {
		tg := &diffTarget{name: it.name(strings.ToLower(mode[:1])), mode: mode}
		// The target's key is the query's GROUP BY keys. Key names k and
		// g are also the inputs' column names: GROUP BY k by alias then
		// names the input column (tag alias-shadow).
		switch it.rng.IntN(8) {
		case 0:
			tg.keys = []diffCol{{name: "k", cls: diffInt}}
		case 1:
			tg.keys = []diffCol{{name: "kx", cls: diffInt}}
		case 2:
			tg.keys = []diffCol{{name: "g", cls: diffStr}}
		case 3:
			tg.keys = []diffCol{{name: "gx", cls: diffStr}}
		case 4:
			tg.keys = []diffCol{{name: "k", cls: diffInt}, {name: "g", cls: diffStr}}
		case 5:
			tg.keys = []diffCol{{name: "kx", cls: diffInt}, {name: "gx", cls: diffStr}}
		case 6:
			tg.keys = []diffCol{{name: "kc", cls: diffInt}}
		default:
			tg.keys = []diffCol{{name: "gc", cls: diffStr}}
		}
		var cols, groups []string
		for i := range tg.keys {
			tg.keys[i].notNull = true
			tg.keys[i].typ = tg.keys[i].cls.targetType()
			cols = append(cols, tg.keys[i].name+" "+tg.keys[i].typ+" NOT NULL")
		}
		nGroups := 1
		if mode == "VERSIONED" {
			nGroups = 2
		}
		for gi := 0; gi < nGroups; gi++ {
			gr := &diffGroup{name: "default"}
			prefix := "a"
			if mode == "VERSIONED" {
				gr.name = fmt.Sprintf("grp%d", gi)
				prefix = fmt.Sprintf("g%d_", gi)
				// The VALID BY column: count(*), which grows with
				// each new row of a group.
				gr.aggs = append(gr.aggs, diffAgg{fn: "count*", col: diffCol{name: prefix + "n", cls: diffInt, typ: "INT64"}})
			}
			for n := 1 + it.rng.IntN(4); n > 0; n-- {
				a := g.aggSpec()
				a.col.name = fmt.Sprintf("%s%d", prefix, len(gr.aggs))
				gr.aggs = append(gr.aggs, a)
			}
			var names []string
			for _, a := range gr.aggs {
				cols = append(cols, a.col.name+" "+a.col.typ+" NULL")
				names = append(names, a.col.name)
			}
			if mode == "VERSIONED" {
				groups = append(groups, fmt.Sprintf("ATTRIBUTE GROUP %s (%s) VALID BY (%s)", gr.name, strings.Join(names, ", "), names[0]))
			}
			tg.groups = append(tg.groups, gr)
		}
		cols = append(cols, "spare STRING NULL")
		tg.spare = "spare"
		var keyNames []string
		for _, k := range tg.keys {
			keyNames = append(keyNames, k.name)
		}
		cols = append(cols, "PRIMARY KEY ("+strings.Join(keyNames, ", ")+")")
		cols = append(cols, groups...)
		ddl = fmt.Sprintf("CREATE TABLE %s (%s) MODE %s", tg.name, strings.Join(cols, ", "), mode)
		x.tgt = tg
		x.group = tg.groups[0]
	}
	x.group.taken = true
	if x.tgt.mode != "VERSIONED" {
		x.group = nil
	}
	gr := x.tgt.groups[0]
	if x.group != nil {
		gr = x.group
	}
	whole = x.tgt.keys[0].name == "kc" || x.tgt.keys[0].name == "gc"
	x.nKeys = len(x.tgt.keys)
	x.query = g.aggQuery(x.tgt.keys, gr.aggs, whole)

	var readCols, wantCols []string
	for _, k := range x.tgt.keys {
		readCols = append(readCols, k.name)
		wantCols = append(wantCols, fmt.Sprintf("CAST(q.%s AS %s)", k.name, k.typ))
	}
	for _, a := range gr.aggs {
		readCols = append(readCols, a.col.name)
		wantCols = append(wantCols, fmt.Sprintf("CAST(q.%s AS %s)", a.col.name, a.col.typ))
	}
	x.read = fmt.Sprintf("SELECT %s FROM %s", strings.Join(readCols, ", "), x.tgt.name)
	if x.group != nil {
		// Only the keys this group has a version for.
		x.read += fmt.Sprintf(" WHERE %s IS NOT NULL", gr.aggs[0].col.name)
	}
	x.want = diffWant(wantCols, x.query)
	return x, ddl
}

// genRows generates a row query into a new APPEND or UPSERT target.
func (it *diffIter) genRows(g *diffGen, mode string) (*diffXform, string) {
	tg := &diffTarget{name: it.name(strings.ToLower(mode[:1])), mode: mode, spare: "spare"}
	x := &diffXform{tgt: tg, cmp: diffCmpExact}
	if mode == "UPSERT" {
		x.cmp = diffCmpLatest
	}
	// Output columns: named as the standard columns, in a random order;
	// an UPSERT target's key is one or two of the never-NULL ones.
	outs := slices.Clone(diffStdCols)
	it.rng.Shuffle(len(outs), func(i, j int) { outs[i], outs[j] = outs[j], outs[i] })
	outs = outs[:1+it.rng.IntN(len(outs))]
	if mode == "UPSERT" {
		var keys, rest []diffCol
		for _, c := range outs {
			if c.notNull && len(keys) < 2 {
				keys = append(keys, c)
			} else {
				c.notNull = false
				rest = append(rest, c)
			}
		}
		if len(keys) == 0 {
			keys = []diffCol{diffStdCols[1+it.rng.IntN(2)]} // k or g
		}
		tg.keys = keys
		outs = append(slices.Clone(keys), rest...)
	} else {
		for i := range outs {
			outs[i].notNull = false
		}
	}
	var cols, keyNames, readCols, wantCols []string
	for i := range outs {
		outs[i].typ = outs[i].cls.targetType()
		null := " NULL"
		if i < len(tg.keys) {
			null = " NOT NULL"
			keyNames = append(keyNames, outs[i].name)
		}
		cols = append(cols, outs[i].name+" "+outs[i].typ+null)
		readCols = append(readCols, outs[i].name)
		wantCols = append(wantCols, fmt.Sprintf("CAST(q.%s AS %s)", outs[i].name, outs[i].typ))
	}
	cols = append(cols, "spare STRING NULL")
	if mode == "UPSERT" {
		cols = append(cols, "PRIMARY KEY ("+strings.Join(keyNames, ", ")+")")
	}
	ddl := fmt.Sprintf("CREATE TABLE %s (%s) MODE %s", tg.name, strings.Join(cols, ", "), mode)
	x.nKeys = len(tg.keys)
	q := g.rowQuery(outs)
	if mode == "UPSERT" && slices.Contains(g.tags, "union") {
		// Rows of two branches, into keys that later commits win: one
		// step's output must still let the later source commit win.
		g.tag("upsert-union")
	}
	x.query = q.render(false)
	x.read = fmt.Sprintf("SELECT %s FROM %s", strings.Join(readCols, ", "), tg.name)
	if mode == "UPSERT" {
		x.want = diffWant(append(wantCols, "q.zz_id"), q.render(true))
	} else {
		x.want = diffWant(wantCols, x.query)
	}
	return x, ddl
}

// diffWant returns the query that reads query's rows as cols. The query is
// a WITH, not a derived table: the parser does not take a derived table
// whose query starts with a parenthesised SELECT followed by UNION ALL
// (FROM ((SELECT …) UNION ALL …) AS q), a shape the generated queries have.
func diffWant(cols []string, query string) string {
	return fmt.Sprintf("WITH q AS (%s) SELECT %s FROM q", query, strings.Join(cols, ", "))
}

// check runs SYNC TRANSFORMATIONS and compares every target with its query
// (R12.1, R12.2, R12.4), and system.transformations with what the test
// expects (R12.3).
func (it *diffIter) check() error {
	it.stats.syncs++
	if _, err := it.exec("SYNC TRANSFORMATIONS"); err != nil {
		st, _ := it.rows("SELECT name, processed_commit, lag, status, last_error FROM system.transformations")
		return fmt.Errorf("SYNC TRANSFORMATIONS: %v\nsystem.transformations:\n  %s", err, strings.Join(st, "\n  "))
	}
	for _, x := range it.xs {
		if err := it.checkOne(x); err != nil {
			it.script = append(it.script, "-- the check that failed: "+x.read+";", "-- against: "+x.want+";")
			return fmt.Errorf("transformation %s (into %s %s, tags %v): %v\nits query: %s\ntarget rows: %s\nquery rows:  %s",
				x.name, strings.ToLower(x.tgt.mode), x.tgt.name, x.tags, err, x.query, x.read, x.want)
		}
	}
	st, err := it.rows("SELECT name, lag, status, last_error FROM system.transformations")
	if err != nil {
		return err
	}
	var want []string
	for _, x := range it.live() {
		want = append(want, x.name+" | 0 | running | NULL")
	}
	if d := diffLines(st, want); d != "" {
		return fmt.Errorf("R12.3: system.transformations after SYNC TRANSFORMATIONS (name | lag | status | last_error) differs from what the test expects:\n%s", d)
	}
	return nil
}

func (it *diffIter) checkOne(x *diffXform) error {
	got, err := it.rows(x.read)
	if err != nil {
		return err
	}
	if x.dropped {
		if d := diffLines(got, x.frozen); d != "" {
			return fmt.Errorf("R12.3: the target changed after DROP TRANSFORMATION (- rows at the drop, + rows now):\n%s", d)
		}
		return nil
	}
	it.stats.checks++
	want, err := it.rows(x.want)
	if err != nil {
		return fmt.Errorf("the query as a plain SELECT failed: %v", err)
	}
	if len(got) > 0 {
		// R12.4: the output commits have kind transformation.
		n, err := it.rows(fmt.Sprintf("SELECT count(*) FROM system.commits WHERE kind = 'transformation' AND tables = '%s'", x.tgt.name))
		if err != nil {
			return err
		}
		if len(n) != 1 || n[0] == "0" {
			return fmt.Errorf("R12.4: target %s has rows but system.commits has no commit of kind transformation writing it (%v)", x.tgt.name, n)
		}
	}
	if x.cmp == diffCmpExact {
		if d := diffLines(got, want); d != "" {
			return fmt.Errorf("the target differs from the query (- in the query only, + in the target only):\n%s", d)
		}
		return nil
	}
	return it.checkLatest(x, got, want)
}

// checkLatest checks an upsert target of a row query: the same keys as the
// query's rows, and for each the row of one of the query's rows for that key
// from the latest source commit that gave the key a row.
func (it *diffIter) checkLatest(x *diffXform, got, want []string) error {
	type cands struct {
		batch int
		rows  map[string]bool
		all   map[string][]int // every row for the key, with its batches
	}
	byKey := map[string]*cands{}
	for _, line := range want {
		f := strings.Split(line, " | ")
		id, err := strconv.ParseInt(f[len(f)-1], 10, 64)
		if err != nil {
			return fmt.Errorf("row %q of the query: source id: %v", line, err)
		}
		b, ok := it.batchOf[id]
		if !ok {
			return fmt.Errorf("row %q of the query: no source row has id %d", line, id)
		}
		row := strings.Join(f[:len(f)-1], " | ")
		key := strings.Join(f[:x.nKeys], " | ")
		c := byKey[key]
		if c == nil {
			c = &cands{batch: -1, rows: map[string]bool{}, all: map[string][]int{}}
			byKey[key] = c
		}
		c.all[row] = append(c.all[row], b)
		switch {
		case b > c.batch:
			c.batch, c.rows = b, map[string]bool{row: true}
		case b == c.batch:
			c.rows[row] = true
		}
	}
	var problems []string
	seen := map[string]bool{}
	for _, line := range got {
		f := strings.Split(line, " | ")
		key := strings.Join(f[:x.nKeys], " | ")
		if seen[key] {
			problems = append(problems, fmt.Sprintf("key %s: two rows in the target", key))
		}
		seen[key] = true
		c := byKey[key]
		switch {
		case c == nil:
			problems = append(problems, fmt.Sprintf("key %s: in the target (%s), but no row of the query has it", key, line))
		case !c.rows[line]:
			var want []string
			for r := range c.rows {
				want = append(want, r)
			}
			slices.Sort(want)
			problems = append(problems, fmt.Sprintf("key %s: the target has %s (query rows from source commits %v), want one of the rows of its latest source commit (#%d): %s",
				key, line, c.all[line], c.batch, strings.Join(want, "; ")))
		}
	}
	for key := range byKey {
		if !seen[key] {
			problems = append(problems, fmt.Sprintf("key %s: the query has it, the target does not", key))
		}
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		if len(problems) > 20 {
			problems = append(problems[:20], fmt.Sprintf("… %d more", len(problems)-20))
		}
		return fmt.Errorf("the upsert target differs from its query's latest row per key (source commits numbered by the test, one per INSERT or transaction):\n  %s",
			strings.Join(problems, "\n  "))
	}
	return nil
}

// diffLines compares two multisets of lines; it returns "" when equal, else
// the lines only in want (-) and only in got (+), at most 30 of each.
func diffLines(got, want []string) string {
	count := map[string]int{}
	for _, l := range want {
		count[l]++
	}
	for _, l := range got {
		count[l]--
	}
	var minus, plus []string
	for l, n := range count {
		for ; n > 0; n-- {
			minus = append(minus, "- "+l)
		}
		for ; n < 0; n++ {
			plus = append(plus, "+ "+l)
		}
	}
	if len(minus)+len(plus) == 0 {
		return ""
	}
	slices.Sort(minus)
	slices.Sort(plus)
	cut := func(s []string) []string {
		if len(s) > 30 {
			return append(s[:30], fmt.Sprintf("  … %d more", len(s)-30))
		}
		return s
	}
	return fmt.Sprintf("  (%d rows in the target, %d in the query)\n  %s", len(got), len(want),
		strings.Join(append(cut(minus), cut(plus)...), "\n  "))
}

// diffGen generates queries over the sources. Every query is of a shape
// docs/transformations.md supports; tags say which constructs it uses (and
// -transform.skip drops queries by tag).
type diffGen struct {
	rng     *rand.Rand
	srcs    []*diffSource
	aliases int
	tags    []string
	used    []string // the sources read
}

// tag records that the query uses a construct: derived, union, paren,
// where, nomatch, group-pos, group-text, group-alias, alias-shadow, whole,
// avg, avg-rounded, min-max, sum, count, upsert-union.
func (g *diffGen) tag(s string) {
	if !slices.Contains(g.tags, s) {
		g.tags = append(g.tags, s)
	}
}

// diffScope is the columns a block's expressions can use: a source's, or a
// derived table's (diffStdCols), qualified by qual.
type diffScope struct {
	qual string
	cols []diffCol
}

func (g *diffGen) ref(sc diffScope, c diffCol) string {
	if sc.qual != "" && g.rng.IntN(3) == 0 {
		return sc.qual + "." + c.name
	}
	return c.name
}

func (g *diffGen) pickCol(sc diffScope, cls diffClass, nn bool) (diffCol, bool) {
	var cands []diffCol
	for _, c := range sc.cols {
		if c.cls == cls && (!nn || c.notNull) {
			cands = append(cands, c)
		}
	}
	if len(cands) == 0 {
		return diffCol{}, false
	}
	return cands[g.rng.IntN(len(cands))], true
}

func (g *diffGen) lit(cls diffClass) string {
	r := g.rng
	switch cls {
	case diffInt:
		return strconv.Itoa(r.IntN(21) - 5)
	case diffStr:
		return "'" + diffStrings[r.IntN(len(diffStrings))] + "'"
	case diffDec:
		return diffDecText(r.IntN(2001) - 1000)
	}
	return fmt.Sprintf("'2026-%02d-%02d %02d:00:00'::DATETIME64(3, 'UTC')", 1+r.IntN(6), 1+r.IntN(28), r.IntN(24))
}

// expr returns an expression of class cls over sc: never NULL with nn;
// mentioning a column with col (a GROUP BY key must, or its text could be a
// bare number, which GROUP BY reads as a position).
func (g *diffGen) expr(sc diffScope, cls diffClass, nn, col bool, depth int) string {
	if depth <= 0 || g.rng.IntN(3) == 0 {
		if c, ok := g.pickCol(sc, cls, nn); ok && (col || g.rng.IntN(6) > 0) {
			return g.ref(sc, c)
		}
		if !col {
			return g.lit(cls)
		}
		if depth <= 0 {
			depth = 1
		}
	}
	x := func() string { return g.expr(sc, cls, nn, col, depth-1) }
	r := g.rng
	switch cls {
	case diffInt:
		switch r.IntN(7) {
		case 0:
			return fmt.Sprintf("(%s + %d)", x(), r.IntN(21)-10)
		case 1:
			return fmt.Sprintf("(%s - %s)", x(), g.expr(sc, diffInt, nn, false, depth-1))
		case 2:
			return fmt.Sprintf("(%s * %d)", x(), r.IntN(7)-3)
		case 3:
			return fmt.Sprintf("abs(%s)", x())
		case 4:
			return fmt.Sprintf("-(%s)", x())
		case 5:
			return fmt.Sprintf("(%s %% %d)", x(), 2+r.IntN(4))
		default:
			return fmt.Sprintf("coalesce(%s, %d)", g.expr(sc, diffInt, false, col, depth-1), r.IntN(11)-5)
		}
	case diffStr:
		switch r.IntN(5) {
		case 0:
			return fmt.Sprintf("upper(%s)", x())
		case 1:
			return fmt.Sprintf("lower(%s)", x())
		case 2:
			return fmt.Sprintf("(%s || '%s')", x(), diffStrings[r.IntN(len(diffStrings))])
		case 3:
			return fmt.Sprintf("CAST(%s AS STRING)", g.expr(sc, diffInt, nn, col, depth-1))
		default:
			return fmt.Sprintf("coalesce(%s, 'none')", g.expr(sc, diffStr, false, col, depth-1))
		}
	case diffDec:
		switch r.IntN(6) {
		case 0:
			return fmt.Sprintf("(%s + 1.50)", x())
		case 1:
			return fmt.Sprintf("(%s * 2)", x())
		case 2:
			return fmt.Sprintf("-(%s)", x())
		case 3:
			return fmt.Sprintf("abs(%s)", x())
		case 4:
			return fmt.Sprintf("CAST(%s AS DECIMAL(10, 2))", g.expr(sc, diffInt, nn, col, depth-1))
		default:
			return fmt.Sprintf("coalesce(%s, 0.25)", x())
		}
	}
	switch r.IntN(3) {
	case 0:
		return fmt.Sprintf("(%s + INTERVAL '1 hour')", x())
	case 1:
		return fmt.Sprintf("(%s - INTERVAL '3 days')", x())
	}
	return fmt.Sprintf("coalesce(%s, '2026-01-01 00:00:00'::DATETIME64(3, 'UTC'))", x())
}

var diffOps = []string{"=", "<>", "<", "<=", ">", ">="}

// pred returns a filter over sc: comparisons, IS [NOT] NULL, IN, AND, OR,
// NOT, and filters that match nothing.
func (g *diffGen) pred(sc diffScope, depth int) string {
	r := g.rng.IntN(12)
	cls := diffClass(g.rng.IntN(4))
	switch {
	case depth > 0 && r < 2:
		return fmt.Sprintf("(%s AND %s)", g.pred(sc, depth-1), g.pred(sc, depth-1))
	case depth > 0 && r < 3:
		return fmt.Sprintf("(%s OR %s)", g.pred(sc, depth-1), g.pred(sc, depth-1))
	case depth > 0 && r < 4:
		return fmt.Sprintf("NOT (%s)", g.pred(sc, depth-1))
	case r < 6:
		not := ""
		if g.rng.IntN(2) == 0 {
			not = "NOT "
		}
		return fmt.Sprintf("%s IS %sNULL", g.expr(sc, cls, false, true, 1), not)
	case r < 7:
		g.tag("nomatch")
		switch g.rng.IntN(4) {
		case 0:
			return fmt.Sprintf("%s > 1000000000", g.expr(sc, diffInt, false, true, 1))
		case 1:
			x := g.expr(sc, cls, false, true, 1)
			return fmt.Sprintf("(%s IS NULL AND %s IS NOT NULL)", x, x)
		case 2:
			return "1 = 0"
		}
		return "false"
	case r < 8:
		var in []string
		for n := 1 + g.rng.IntN(3); n > 0; n-- {
			in = append(in, g.lit(diffStr))
		}
		return fmt.Sprintf("%s IN (%s)", g.expr(sc, diffStr, false, true, 1), strings.Join(in, ", "))
	}
	rhs := g.lit(cls)
	if g.rng.IntN(3) == 0 {
		rhs = g.expr(sc, cls, false, false, 1)
	}
	return fmt.Sprintf("%s %s %s", g.expr(sc, cls, false, true, 1), diffOps[g.rng.IntN(len(diffOps))], rhs)
}

// from returns a FROM item and the scope its columns give: a source (maybe
// with an alias) or, with depth left, a derived table of diffStdCols.
func (g *diffGen) from(depth int) (string, diffScope) {
	if depth > 0 && g.rng.IntN(2) == 0 {
		g.tag("derived")
		g.aliases++
		a := fmt.Sprintf("d%d", g.aliases)
		return "(" + g.stdRel(depth-1) + ") AS " + a, diffScope{qual: a, cols: diffStdCols}
	}
	s := g.srcs[g.rng.IntN(len(g.srcs))]
	if !slices.Contains(g.used, s.name) {
		g.used = append(g.used, s.name)
	}
	if g.rng.IntN(3) == 0 {
		g.aliases++
		a := fmt.Sprintf("a%d", g.aliases)
		return s.name + " AS " + a, diffScope{qual: a, cols: slices.Clone(s.cols)}
	}
	return s.name, diffScope{qual: s.name, cols: slices.Clone(s.cols)}
}

// where returns " WHERE …" or "".
func (g *diffGen) where(sc diffScope) string {
	if g.rng.IntN(2) == 0 {
		return ""
	}
	g.tag("where")
	return " WHERE " + g.pred(sc, 2)
}

// stdBlock returns a SELECT of the columns diffStdCols (id unchanged).
func (g *diffGen) stdBlock(depth int) string {
	from, sc := g.from(depth)
	items := []string{g.ref(sc, diffStdCols[0]) + " AS id"}
	for _, c := range diffStdCols[1:] {
		items = append(items, g.expr(sc, c.cls, c.notNull, false, g.rng.IntN(3))+" AS "+c.name)
	}
	return "SELECT " + strings.Join(items, ", ") + " FROM " + from + g.where(sc)
}

// stdRel returns a query of diffStdCols: one block, or the UNION ALL of
// two (over the same source or two).
func (g *diffGen) stdRel(depth int) string {
	if g.rng.IntN(3) > 0 {
		return g.stdBlock(depth)
	}
	g.tag("union")
	l, r := g.stdBlock(depth), g.stdBlock(depth)
	if g.rng.IntN(4) == 0 {
		// Not the left branch: FROM ((SELECT …) UNION ALL …) AS d does
		// not parse (a parser limitation outside this test's subject).
		g.tag("paren")
		r = "(" + r + ")"
	}
	return l + " UNION ALL " + r
}

// aggSpec returns an aggregate and the type of its target column.
func (g *diffGen) aggSpec() diffAgg {
	r := g.rng
	a := diffAgg{arg: diffClass(r.IntN(4))}
	num := []diffClass{diffInt, diffDec}[r.IntN(2)]
	switch r.IntN(6) {
	case 0:
		a.fn, a.col.cls = "count*", diffInt
	case 1:
		a.fn, a.col.cls = "count", diffInt
	case 2:
		a.fn, a.arg, a.col.cls = "sum", num, num
	case 3:
		a.fn, a.arg, a.col.cls = "avg", num, diffDec
	case 4:
		a.fn, a.col.cls = "min", a.arg
	default:
		a.fn, a.col.cls = "max", a.arg
	}
	a.col.typ = a.col.cls.targetType()
	if a.fn == "avg" && r.IntN(4) == 0 {
		// Rounded: the transformation's cast and the check's must round
		// the same way.
		a.col.typ = "DECIMAL(20, 2)"
	}
	return a
}

// aggQuery returns an aggregate query with outputs keys (GROUP BY keys, or
// constants when whole) and aggs, in a random order.
func (g *diffGen) aggQuery(keys []diffCol, aggs []diffAgg, whole bool) string {
	from, sc := g.from(2)
	type item struct {
		text, expr string
		key        bool
		alias      string
	}
	var items []item
	for _, k := range keys {
		if whole {
			g.tag("whole")
			v := "7"
			if k.cls == diffStr {
				v = "'all'"
			}
			items = append(items, item{text: v + " AS " + k.name, key: true})
			continue
		}
		e := g.expr(sc, k.cls, true, true, g.rng.IntN(3))
		it := item{expr: e, key: true, alias: k.name}
		if e == k.name && g.rng.IntN(2) == 0 {
			it.text, it.alias = e, ""
		} else {
			it.text = e + " AS " + k.name
		}
		items = append(items, it)
	}
	for _, a := range aggs {
		var call string
		switch a.fn {
		case "count*":
			call = "count(*)"
			g.tag("count")
		default:
			// Mostly over columns; sometimes a constant (sum(1),
			// max('a')), whose partial values merge all the same.
			call = fmt.Sprintf("%s(%s)", a.fn, g.expr(sc, a.arg, false, g.rng.IntN(8) > 0, g.rng.IntN(3)))
			switch a.fn {
			case "avg":
				g.tag("avg")
				if a.col.typ != diffDec.targetType() {
					g.tag("avg-rounded")
				}
			case "min", "max":
				g.tag("min-max")
			default:
				g.tag(a.fn)
			}
		}
		items = append(items, item{text: call + " AS " + a.col.name})
	}
	g.rng.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
	var texts, groupBy []string
	for i, it := range items {
		texts = append(texts, it.text)
		if !it.key || whole {
			continue
		}
		switch r := g.rng.IntN(3); {
		case r == 0:
			g.tag("group-pos")
			groupBy = append(groupBy, strconv.Itoa(i+1))
		case r == 1 && it.alias != "":
			g.tag("group-alias")
			groupBy = append(groupBy, it.alias)
			// The alias is also an input column's name: GROUP BY
			// names that column (as in PostgreSQL), not the output.
			if slices.ContainsFunc(sc.cols, func(c diffCol) bool { return c.name == it.alias }) &&
				it.expr != it.alias && it.expr != sc.qual+"."+it.alias {
				g.tag("alias-shadow")
			}
		default:
			g.tag("group-text")
			groupBy = append(groupBy, it.expr)
		}
	}
	g.rng.Shuffle(len(groupBy), func(i, j int) { groupBy[i], groupBy[j] = groupBy[j], groupBy[i] })
	q := "SELECT " + strings.Join(texts, ", ") + " FROM " + from + g.where(sc)
	if len(groupBy) > 0 {
		q += " GROUP BY " + strings.Join(groupBy, ", ")
	}
	if g.rng.IntN(6) == 0 {
		g.tag("paren")
		q = "(" + q + ")"
	}
	return q
}

// diffRowQuery is a generated row query: one block or the UNION ALL of two,
// rendered with or without each block's source row id as an extra output
// zz_id (the check's copy traces output rows to source commits).
type diffRowQuery struct {
	blocks []diffRowBlock
	paren  bool
}

type diffRowBlock struct {
	items       []string
	from, where string
	id          string
	paren       bool
}

func (q diffRowQuery) render(withID bool) string {
	var parts []string
	for _, b := range q.blocks {
		items := slices.Clone(b.items)
		if withID {
			items = append(items, b.id+" AS zz_id")
		}
		s := "SELECT " + strings.Join(items, ", ") + " FROM " + b.from + b.where
		if b.paren {
			s = "(" + s + ")"
		}
		parts = append(parts, s)
	}
	s := strings.Join(parts, " UNION ALL ")
	if q.paren {
		s = "(" + s + ")"
	}
	return s
}

// rowQuery returns a row query whose outputs are outs (never NULL where
// outs says so).
func (g *diffGen) rowQuery(outs []diffCol) diffRowQuery {
	var q diffRowQuery
	n := 1
	if g.rng.IntN(3) == 0 {
		g.tag("union")
		n = 2
	}
	for i := 0; i < n; i++ {
		from, sc := g.from(2)
		b := diffRowBlock{from: from, where: g.where(sc), id: g.ref(sc, diffStdCols[0])}
		for _, c := range outs {
			e := g.expr(sc, c.cls, c.notNull, false, g.rng.IntN(3))
			if e == c.name && g.rng.IntN(2) == 0 {
				b.items = append(b.items, e)
			} else {
				b.items = append(b.items, e+" AS "+c.name)
			}
		}
		if n == 2 && g.rng.IntN(4) == 0 {
			g.tag("paren")
			b.paren = true
		}
		q.blocks = append(q.blocks, b)
	}
	if g.rng.IntN(8) == 0 {
		g.tag("paren")
		q.paren = true
	}
	return q
}
