package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/exec"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/storage"
	"github.com/strata-db/strata/internal/system"
	"github.com/strata-db/strata/internal/types"
)

// The runner keeps an engine's transformations up to date (R12.2): one
// goroutine per engine, started with the engine's first session and ended
// when the engine closes. Each step it reads the newest snapshot and, for
// every transformation whose sources may have gained rows since its
// checkpoint, runs its delta query over the rows committed after the
// checkpoint (plan.Scan.After), turns the result into upserts of its
// target group, and commits them with the new checkpoint as one commit of
// kind transformation (storage.Txn.Checkpoints): the output and the
// progress are durable together. An aggregate's state (the merged partial
// values of each group) lives in memory; after a restart the runner
// rebuilds it by running the partial query over the sources as of the
// checkpoint, then goes on from there, so no source row is lost or counted
// twice.

// pollEvery is how often the runner looks for new commits when nothing
// wakes it: a commit becomes a transformation's output within about this.
const pollEvery = 10 * time.Millisecond

// runner runs the transformations of one engine.
type runner struct {
	eng  *storage.Engine
	wake chan struct{}
	// ctx is cancelled when the engine begins closing, so that a long
	// read (a state rebuilt after a restart) does not hold Close up.
	ctx context.Context

	mu sync.Mutex
	xs map[catalog.TransformationID]*xstate
	// stepped is closed, and replaced, at the end of every step.
	stepped chan struct{}
}

// xstate is what the runner knows of one transformation.
type xstate struct {
	name string
	// c is the query compiled against the catalog of commit compiledAt.
	c          *compiled
	compiledAt uint64
	// loaded says state holds the groups as of processed.
	loaded    bool
	processed uint64
	state     map[string][]types.Value
	// err is the last step's failure, at snapshot commit errAt; nil once a
	// step succeeds. The next attempt is at retryAt, or as soon as the
	// catalog is no longer that of errCatalog.
	err        error
	errAt      uint64
	backoff    time.Duration
	retryAt    time.Time
	errCatalog uint64
}

var runners struct {
	sync.Mutex
	m map[*storage.Engine]*runner
}

// runnerFor returns eng's runner, starting it on first use.
func runnerFor(eng *storage.Engine) *runner {
	runners.Lock()
	defer runners.Unlock()
	if r := runners.m[eng]; r != nil {
		return r
	}
	if runners.m == nil {
		runners.m = map[*storage.Engine]*runner{}
	}
	r := &runner{eng: eng, wake: make(chan struct{}, 1), xs: map[catalog.TransformationID]*xstate{}, stepped: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	r.ctx = ctx
	if !eng.Go(func() {
		go func() {
			<-eng.Closing()
			cancel()
		}()
		r.loop()
	}) {
		cancel()
		r.stepped = nil // closed: sync answers ErrClosed
		return r
	}
	runners.m[eng] = r
	return r
}

// lookupRunner returns eng's runner if it has one.
func lookupRunner(eng *storage.Engine) *runner {
	runners.Lock()
	defer runners.Unlock()
	return runners.m[eng]
}

func (r *runner) loop() {
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		// With no transformation the runner only waits to be woken (by
		// CREATE TRANSFORMATION); with some it also looks every pollEvery.
		var tick <-chan time.Time
		if r.step() {
			tick = t.C
		}
		select {
		case <-r.eng.Closing():
			runners.Lock()
			delete(runners.m, r.eng)
			runners.Unlock()
			r.mu.Lock()
			close(r.stepped)
			r.stepped = nil
			r.mu.Unlock()
			return
		case <-r.wake:
		case <-tick:
		}
	}
}

// kick asks for a step now.
func (r *runner) kick() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// checkpointName is the name a transformation's checkpoint is kept under:
// by id, which is never reused, so that a transformation created again
// under an old name starts from nothing.
func checkpointName(id catalog.TransformationID) string {
	return "transformation/" + strconv.FormatUint(uint64(id), 10)
}

// step brings every transformation up to the newest commit and reports
// whether there is any.
func (r *runner) step() bool {
	defer r.signal()
	// A step brings each transformation up to the commit it began at, so
	// that commits arriving as fast as one is processed do not keep it on
	// one transformation (and SYNC waiting for a step to end).
	end := r.eng.LastCommit()
	cat := r.eng.Catalog()
	xs := cat.Transformations()
	r.mu.Lock()
	live := map[catalog.TransformationID]bool{}
	for _, x := range xs {
		live[x.ID] = true
	}
	for id := range r.xs {
		if !live[id] {
			delete(r.xs, id) // dropped
		}
	}
	r.mu.Unlock()
	for _, x := range xs {
		select {
		case <-r.eng.Closing():
			return true
		default:
		}
		// A commit racing a DDL is planned again on the new catalog; a
		// step that took part of the new commits goes on with the rest.
		for attempt := 0; attempt < maxReplans && r.ctx.Err() == nil; {
			more, err := r.advance(x.ID)
			r.signal()
			if errors.Is(err, storage.ErrSchemaChanged) {
				attempt++
				continue
			}
			if err != nil || !more || r.processed(x.ID) >= end {
				break
			}
		}
	}
	return len(xs) > 0
}

// signal wakes whoever waits for the runner's progress (sync).
func (r *runner) signal() {
	r.mu.Lock()
	if r.stepped != nil {
		close(r.stepped)
		r.stepped = make(chan struct{})
	}
	r.mu.Unlock()
}

// processed returns the commit transformation id has processed up to.
func (r *runner) processed(id catalog.TransformationID) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.xs[id]; s != nil {
		return s.processed
	}
	return 0
}

// state returns the runner's record of transformation id, made on first
// use from the engine's checkpoint.
func (r *runner) state(x *catalog.Transformation) *xstate {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.xs[x.ID]
	if s == nil {
		s = &xstate{name: x.Name}
		s.processed, _ = r.eng.Checkpoint(checkpointName(x.ID))
		r.xs[x.ID] = s
	}
	return s
}

// fail records a step's failure on snap, and when to try again.
func (r *runner) fail(s *xstate, snap *storage.Snapshot, err error) error {
	r.mu.Lock()
	s.err, s.errAt = err, snap.Commit()
	s.backoff = min(max(2*s.backoff, pollEvery), maxBackoff)
	s.retryAt = time.Now().Add(s.backoff)
	s.errCatalog = snap.Catalog().Commit()
	r.mu.Unlock()
	return err
}

// maxBackoff is the longest pause between the attempts of a failing
// transformation.
const maxBackoff = 2 * time.Second

// maxDeltaRows bounds the source rows one step of a transformation reads
// (counted by system.commits' rows of the commits that wrote a source): a
// transformation created over a large table, or one far behind, catches
// up in commits of about this many input rows, never holding all of its
// output in memory at once. A single larger source commit is one step.
var maxDeltaRows uint64 = 1 << 16

// advance processes the source rows transformation id has not seen, on the
// newest snapshot, or the first maxDeltaRows of them; more says there are
// more.
func (r *runner) advance(id catalog.TransformationID) (more bool, err error) {
	err = r.advanceTo(id, &more)
	return more, err
}

func (r *runner) advanceTo(id catalog.TransformationID, more *bool) error {
	snap := r.eng.ScopedSnapshot()
	defer snap.Release()
	cat := snap.Catalog()
	var x *catalog.Transformation
	for _, t := range cat.Transformations() {
		if t.ID == id {
			x = t
		}
	}
	if x == nil {
		return nil
	}
	s := r.state(x)
	at := snap.Commit()
	if s.processed >= at {
		return nil
	}
	if s.err != nil && time.Now().Before(s.retryAt) && s.errCatalog == cat.Commit() {
		// Failing: retried with a growing pause, at once after a DDL
		// (which may be what makes it work).
		return nil
	}
	ctx := r.ctx
	env := r.env(snap)
	if s.c == nil || s.compiledAt != cat.Commit() {
		target, ok := cat.TableByID(x.Target)
		if !ok {
			return r.fail(s, snap, fmt.Errorf("target table of transformation %s is gone", x.Name))
		}
		var group *catalog.Group
		if target.Keyed() {
			group, _ = target.GroupByID(x.Group)
		}
		c, err := compileTransform(x.Select, target, group, env)
		if err != nil {
			return r.fail(s, snap, err)
		}
		if s.c != nil && !slices.Equal(s.c.partTypes, c.partTypes) {
			s.loaded = false // the state's values have the old types
		}
		s.c, s.compiledAt = c, cat.Commit()
	}
	sources := sourceSet(cat, x)
	q, touched := deltaEnd(snap, sources, s.processed)
	*more = q < snap.Commit()
	if !touched {
		// Nothing was written to a source: nothing to read.
		r.mu.Lock()
		s.processed, s.err, s.backoff = q, nil, 0
		r.mu.Unlock()
		return nil
	}
	c := s.c
	if c.agg && !s.loaded {
		st := map[string][]types.Value{}
		if s.processed > 0 {
			rows, err := r.deltaRows(ctx, c, env, 0, s.processed)
			if err != nil {
				return r.fail(s, snap, err)
			}
			if st, err = mergeGroups(c, st, rows); err != nil {
				return r.fail(s, snap, err)
			}
		}
		s.state, s.loaded = st, true
	}
	var rows [][]types.Value
	var err error
	if !c.agg && c.target.Keyed() {
		// A row query into a keyed table: its rows are upserts, and a
		// later commit's must come after an earlier one's, which one
		// query over several commits (its UNION ALL branches one after
		// the other) would not keep. So the query runs once per source
		// commit, in commit order, all of them going into one output
		// commit.
		for _, c1 := range commitsOf(snap, sources, s.processed, q) {
			part, err := r.deltaRows(ctx, c, env, c1-1, c1)
			if err != nil {
				return r.fail(s, snap, err)
			}
			rows = append(rows, part...)
		}
	} else if rows, err = r.deltaRows(ctx, c, env, s.processed, q); err != nil {
		return r.fail(s, snap, err)
	}
	var changed map[string][]types.Value
	if c.agg {
		if changed, err = mergeGroups(c, s.state, rows); err != nil {
			return r.fail(s, snap, err)
		}
		rows = rows[:0]
		for _, part := range changed {
			out, err := finalRow(c, part)
			if err != nil {
				return r.fail(s, snap, err)
			}
			rows = append(rows, out)
		}
	}
	if len(rows) > 0 {
		w, err := newWriter(c.target, c.listed, c.group, len(rows), 0, envDefaults(ctx, env))
		if err != nil {
			return r.fail(s, snap, err)
		}
		cells := make([]cell, len(c.listed))
		for _, row := range rows {
			for i := range cells {
				cells[i] = cell{v: row[i]}
			}
			if err := w.add(cells); err != nil {
				return r.fail(s, snap, err)
			}
		}
		txn := w.txn(cat.Commit())
		txn.Kind = storage.KindTransformation
		txn.Checkpoints = []storage.Checkpoint{{Name: checkpointName(x.ID), Processed: q}}
		if _, err := r.eng.Commit(ctx, txn); err != nil {
			if errors.Is(err, storage.ErrSchemaChanged) {
				return err
			}
			return r.fail(s, snap, err)
		}
	}
	r.mu.Lock()
	for k, v := range changed {
		s.state[k] = v
	}
	s.processed, s.err, s.backoff = q, nil, 0
	r.mu.Unlock()
	return nil
}

// sourceSet returns the names of x's sources.
func sourceSet(cat *catalog.Catalog, x *catalog.Transformation) map[string]bool {
	m := map[string]bool{}
	for _, name := range cat.SourceNames(x) {
		m[name] = true
	}
	return m
}

// writesSource reports whether commit ci wrote one of sources.
func writesSource(ci storage.CommitInfo, sources map[string]bool) bool {
	for _, t := range ci.Tables {
		if sources[t] {
			return true
		}
	}
	return false
}

// deltaEnd returns the commit a step after processed goes up to: snap's,
// or an earlier one where the source commits after processed come to more
// than maxDeltaRows rows (at least one source commit is taken). touched says whether a commit up to it may have written a
// source: one naming a source, or any DDL, after which a source may have
// another name than the commits before it give.
func deltaEnd(snap *storage.Snapshot, sources map[string]bool, processed uint64) (end uint64, touched bool) {
	commits := snap.Commits()
	var rows uint64
	for c := processed + 1; c <= snap.Commit() && c <= uint64(len(commits)); c++ {
		ci := commits[c-1]
		if ci.Kind == storage.KindDDL {
			touched = true
			continue
		}
		if !writesSource(ci, sources) {
			continue
		}
		if rows > 0 && rows+ci.Rows > maxDeltaRows {
			return c - 1, true
		}
		rows += ci.Rows
		touched = true
	}
	return snap.Commit(), touched
}

// commitsOf returns the commits in (after, upTo] that may have written one
// of sources: those naming one, or every commit of the range when it
// holds a DDL (a rename makes the names of the commits before it
// another's).
func commitsOf(snap *storage.Snapshot, sources map[string]bool, after, upTo uint64) []uint64 {
	commits := snap.Commits()
	upTo = min(upTo, uint64(len(commits)))
	var out []uint64
	for c := after + 1; c <= upTo; c++ {
		if commits[c-1].Kind == storage.KindDDL {
			out = out[:0]
			for c := after + 1; c <= upTo; c++ {
				out = append(out, c)
			}
			return out
		}
		if writesSource(commits[c-1], sources) {
			out = append(out, c)
		}
	}
	return out
}

// env is the query environment of the runner's reads on snap.
func (r *runner) env(snap *storage.Snapshot) *plan.Env {
	return planEnv(&QueryEnv{Snapshot: snap, Now: time.Now(), Settings: newSettings().values})
}

// deltaRows runs c's delta query over the source rows committed in
// (after, upTo] and returns its rows.
func (r *runner) deltaRows(ctx context.Context, c *compiled, env *plan.Env, after, upTo uint64) ([][]types.Value, error) {
	p, err := plan.Build(c.delta, env)
	if err != nil {
		return nil, err
	}
	setScans(p.Root, after, upTo)
	var rows [][]types.Value
	err = exec.Run(ctx, p, env, func(b *types.Batch) error {
		for i := 0; i < b.Rows; i++ {
			row := make([]types.Value, len(b.Cols))
			for j, v := range b.Cols {
				row[j] = v.Get(i)
			}
			rows = append(rows, row)
		}
		return nil
	})
	return rows, err
}

// setScans makes every table scan under n read the rows committed in
// (after, upTo]. A transformation's query reads append tables only, in
// FROM (checkTransformQuery), so every scan is of a source.
func setScans(n plan.Node, after, upTo uint64) {
	if s, ok := n.(*plan.Scan); ok {
		s.After, s.AsOf = after, upTo
	}
	for _, in := range n.Inputs() {
		setScans(in, after, upTo)
	}
}

// stateKey encodes the key columns of a partial row.
func stateKey(c *compiled, row []types.Value, buf []byte) []byte {
	for _, k := range c.keys {
		buf = types.AppendKey(buf, row[k])
	}
	return buf
}

// mergeGroups merges partial rows into state, without changing it: it
// returns the new partial values of every group the rows touch.
func mergeGroups(c *compiled, state map[string][]types.Value, rows [][]types.Value) (map[string][]types.Value, error) {
	changed := map[string][]types.Value{}
	var buf []byte
	for _, row := range rows {
		buf = stateKey(c, row, buf[:0])
		cur, ok := changed[string(buf)]
		if !ok {
			if old, had := state[string(buf)]; had {
				cur = append([]types.Value(nil), old...)
			}
		}
		if cur == nil {
			changed[string(buf)] = row
			continue
		}
		for _, o := range c.outs {
			var err error
			switch o.kind {
			case outCount:
				cur[o.part], err = addValues(cur[o.part], row[o.part])
			case outSum:
				cur[o.part], err = addValues(cur[o.part], row[o.part])
			case outAvg:
				if cur[o.part], err = addValues(cur[o.part], row[o.part]); err == nil {
					cur[o.part+1], err = addValues(cur[o.part+1], row[o.part+1])
				}
			case outMin, outMax:
				want := 1
				if o.kind == outMin {
					want = -1
				}
				if n := row[o.part]; !n.IsNull() && (cur[o.part].IsNull() || types.Compare(n, cur[o.part]) == want) {
					cur[o.part] = n
				}
			}
			if err != nil {
				return nil, sqlerr.OutOfRange(-1, "column %s of the transformation's output: %v", o.name, err)
			}
		}
		changed[string(buf)] = cur
	}
	// A group whose values did not change (a max not beaten, a
	// whole-table aggregate over new rows all filtered out) would write
	// the row it wrote before: skip it.
	for k, v := range changed {
		if old, ok := state[k]; ok && slices.EqualFunc(old, v, sameValue) {
			delete(changed, k)
		}
	}
	return changed, nil
}

// sameValue reports whether a and b are both NULL or equal.
func sameValue(a, b types.Value) bool {
	if a.IsNull() || b.IsNull() {
		return a.IsNull() == b.IsNull()
	}
	return types.Compare(a, b) == 0
}

// addValues adds two partial sums or counts, NULL (no value yet) being
// the identity, in a's type.
func addValues(a, b types.Value) (types.Value, error) {
	switch {
	case b.IsNull():
		return a, nil
	case a.IsNull():
		return b, nil
	}
	v, err := types.Add(a, b)
	if err == nil && v.Type() != a.Type() {
		v, err = types.Cast(v, a.Type())
	}
	return v, err
}

// finalRow computes a group's output row from its partial values, as the
// query's own aggregates would (exec's avg: the sum in avg's type divided
// by the count).
func finalRow(c *compiled, part []types.Value) ([]types.Value, error) {
	out := make([]types.Value, len(c.outs))
	for i, o := range c.outs {
		if o.kind != outAvg {
			out[i] = part[o.part]
			continue
		}
		sum, n := part[o.part], part[o.part+1]
		if sum.IsNull() || n.IsNull() || n.Int64() == 0 {
			out[i] = types.Null(o.typ)
			continue
		}
		v, err := avgOf(sum, n.Int64(), o.typ)
		if err != nil {
			return nil, sqlerr.OutOfRange(-1, "column %s of the transformation's output: %v", o.name, err)
		}
		out[i] = v
	}
	return out, nil
}

// avgOf is avg's result of type t from the sum and count of its values,
// computed as package exec computes it.
func avgOf(sum types.Value, n int64, t types.Type) (types.Value, error) {
	switch t.Kind {
	case types.Float64:
		f, err := types.Cast(sum, t)
		if err != nil {
			return f, err
		}
		return types.NewFloat64(f.Float64() / float64(n)), nil
	case types.Interval:
		return types.ScaleInterval(sum, float64(n), true)
	}
	s, err := types.Cast(sum, t)
	if err != nil {
		return s, err
	}
	v, err := types.Div(s, types.NewInt64(n))
	if err != nil {
		return v, err
	}
	return types.Cast(v, t)
}

// sync waits until every transformation has processed every commit up to
// target (SYNC TRANSFORMATIONS, R12.4); a transformation failing at or
// after target fails it with that error.
func (r *runner) sync(ctx context.Context, target uint64) error {
	// One kick: after it the runner steps on its own while transformations
	// exist (every pollEvery, or on retry after a failure's pause), and
	// every step signals. Kicking again on every signal would spin with a
	// transformation waiting out its pause.
	r.kick()
	for {
		r.mu.Lock()
		stepped := r.stepped
		r.mu.Unlock()
		if stepped == nil {
			return storage.ErrClosed
		}
		done, err := r.reached(target)
		if done || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-stepped:
		}
	}
}

// reached reports whether every transformation of the newest catalog has
// processed target.
func (r *runner) reached(target uint64) (bool, error) {
	xs := r.eng.Catalog().Transformations()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, x := range xs {
		s := r.xs[x.ID]
		if s != nil && s.processed >= target {
			continue
		}
		if s != nil && s.err != nil && s.errAt >= target {
			return false, transformError(x.Name, s.err)
		}
		return false, nil
	}
	return true, nil
}

// transformError is a transformation's failure as a statement reports it.
func transformError(name string, err error) error {
	var se *sqlerr.Error
	if errors.As(err, &se) {
		c := *se
		c.Message = fmt.Sprintf("transformation %s: %s", name, se.Message)
		c.Pos, c.Token = -1, ""
		return &c
	}
	return sqlerr.New(sqlerr.CodeInternal, "transformation %s: %v", name, err)
}

// transformStatus is what system.transformations shows of x: the commit
// processed up to, the source commits after it, and the last error.
func transformStatus(src system.Source, x *catalog.Transformation) system.TransformationStatus {
	snap, ok := src.(*storage.Snapshot)
	if !ok {
		return system.TransformationStatus{}
	}
	eng := snap.Engine()
	var st system.TransformationStatus
	st.Processed, _ = eng.Checkpoint(checkpointName(x.ID))
	st.Status = "running"
	if r := lookupRunner(eng); r != nil {
		r.mu.Lock()
		if s := r.xs[x.ID]; s != nil {
			st.Processed = max(st.Processed, s.processed)
			if s.err != nil {
				st.Status, st.LastError = "failing", s.err.Error()
			}
		}
		r.mu.Unlock()
	} else {
		st.Status = "stopped"
	}
	sources := sourceSet(snap.Catalog(), x)
	commits := snap.Commits()
	for i := st.Processed; i < uint64(len(commits)) && i < snap.Commit(); i++ {
		if commits[i].Kind != storage.KindDDL && writesSource(commits[i], sources) {
			st.Lag++
		}
	}
	return st
}

func init() { system.TransformationStatusOf = transformStatus }

// TransformationProgress is one transformation's progress as
// system.transformations shows it.
type TransformationProgress struct {
	Name      string
	Processed uint64
	Lag       uint64
	Failing   bool
}

// Transformations returns the progress of eng's transformations, for
// metrics.
func Transformations(eng *storage.Engine) []TransformationProgress {
	snap := eng.ScopedSnapshot()
	defer snap.Release()
	var out []TransformationProgress
	for _, x := range snap.Catalog().Transformations() {
		st := transformStatus(snap, x)
		out = append(out, TransformationProgress{Name: x.Name, Processed: st.Processed, Lag: st.Lag, Failing: st.LastError != ""})
	}
	return out
}
