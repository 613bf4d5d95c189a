package storage

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage/manifest"
	"github.com/strata-db/strata/internal/storage/merge"
	"github.com/strata-db/strata/internal/types"
	"github.com/strata-db/strata/internal/version"
)

// Retention is what a table's retention policy (R9.3) expires at one
// instant. Reads apply it whether or not the data is still on disk, so a
// result never depends on how far the background merges have got; merges
// then drop what it expires (mergejob.go, expiry in storage/merge).
//
// A versioned table with history = d keeps every current version and the
// non-current versions that stopped counting at or after now - d: the
// horizon is the last commit made before that instant, the oldest commit
// a read AS OF may name (a read there needs no version that stopped
// counting earlier). An append table with rows = d expires rows committed
// before now - d (the same horizon; a read AS OF it or later leaves out the
// expired rows), and with rows = d, by = col the rows whose col is before
// now - d (NULL never expires), at every commit, so no AS OF is refused.
// A table keeps every binding it had (catalog.RetentionBinding), and each
// keeps expired what it expired while it was bound (retentionOf).
type Retention struct {
	// Policy is the retention policy bound now, nil for a table that never
	// had one (nothing expires).
	Policy *catalog.Policy
	// Horizon is the oldest commit a read AS OF may name; 0 when every
	// commit may be read. Versions that stopped counting at or before it
	// (version.Expired), and append rows committed at or before it, are
	// expired.
	Horizon uint64
	// Cutoff is the latest instant before which something expires (the
	// horizon's or ByCutoff); zero when nothing does.
	Cutoff time.Time
	// ByCol is the column append rows expire by (rows = d, by = col), 0
	// for none; ByCutoff is the instant before which its value expires a
	// row.
	ByCol    catalog.ColumnID
	ByCutoff time.Time
	// Period is the length of the setting bound now: data expires once it
	// is this old. 0 when only earlier settings expired something.
	Period time.Duration
}

// Active reports whether anything can expire under r.
func (r Retention) Active() bool { return !r.Cutoff.IsZero() }

// Retention returns what table t's retention policy expires as of this
// snapshot. Every call on one snapshot reads the clock at the same
// instant (the first call's), so a statement sees one cutoff for all its
// reads.
func (s *Snapshot) Retention(t catalog.TableID) Retention {
	tbl, ok := s.st.cat.TableByID(t)
	if !ok || !retains(tbl) {
		return Retention{}
	}
	return retentionOf(s.st.cat, tbl, s.retentionNow(), s.st.commit, s.Commits())
}

// retentionAt is Retention for background work on published state st:
// the clock read now.
func (e *Engine) retentionAt(st *state, tbl *catalog.Table) Retention {
	if !retains(tbl) {
		return Retention{}
	}
	return retentionOf(st.cat, tbl, e.retentionClock(), st.commit, st.commits[:min(len(st.commits), int(st.commit))])
}

// retains reports whether table t has ever had a retention policy bound:
// only then can anything of it expire. It costs no allocation, which the
// reads of every table ask it for.
func retains(t *catalog.Table) bool {
	return len(t.RetentionLog) > 0 || t.Policies.Retention != catalog.DefaultPolicyName && t.Policies.Retention != ""
}

// retentionNow is the instant retention is judged at for this snapshot.
func (s *Snapshot) retentionNow() time.Time {
	if v := s.retainAt.Load(); v != 0 {
		return time.Unix(0, v)
	}
	now := s.e.retentionClock()
	if !s.retainAt.CompareAndSwap(0, now.UnixNano()) {
		return time.Unix(0, s.retainAt.Load())
	}
	return now
}

// retentionClock reads the clock for retention, never earlier than a
// reading it gave before: merges drop what a cutoff expires, so a clock
// set back must not make an earlier horizon readable again within this
// process.
func (e *Engine) retentionClock() time.Time {
	e.clockMu.Lock()
	now := e.opts.Clock().UnixNano()
	e.clockMu.Unlock()
	for {
		last := e.retainMax.Load()
		if now <= last {
			return time.Unix(0, last)
		}
		if e.retainMax.CompareAndSwap(last, now) {
			return time.Unix(0, now)
		}
	}
}

// retentionOf applies table t's retention bindings in force at commit
// upTo (catalog.Table.RetentionLog) at instant now, with the database's
// commits (oldest first, commit times never decreasing). Each binding
// expires what was older than its interval by the time the next one
// took over (or by now, for the last): the horizon and cutoffs are the
// greatest of those, so a longer interval bound later brings back
// nothing an earlier one expired.
func retentionOf(cat *catalog.Catalog, t *catalog.Table, now time.Time, upTo uint64, commits []CommitInfo) Retention {
	r := Retention{Policy: cat.Bound(t, catalog.RoleRetention)}
	log := t.RetentionLog
	if len(log) == 0 && r.Policy.Name != catalog.DefaultPolicyName {
		// A table from before bindings were logged: its policy from its
		// creation.
		log = []catalog.RetentionBinding{catalog.RetentionBindingOf(t, r.Policy, t.CreatedCommit)}
	}
	n := 0
	for n < len(log) && log[n].From <= upTo {
		n++
	}
	log = log[:n]
	for i, b := range log {
		end := now
		if i+1 < len(log) {
			if f := log[i+1].From; f >= 1 && f <= uint64(len(commits)) && commits[f-1].At.Before(now) {
				end = commits[f-1].At
			}
		}
		last := i == len(log)-1
		switch t.Mode {
		case catalog.ModeVersioned:
			if b.History > 0 {
				r.expireBefore(end.Add(-b.History), t, commits)
			}
			if last {
				r.Period = b.History
			}
		case catalog.ModeAppend:
			if b.Rows == 0 {
				continue
			}
			if last {
				r.Period = b.Rows
			}
			if b.By == 0 {
				r.expireBefore(end.Add(-b.Rows), t, commits)
				continue
			}
			// catalog.Table.logRetention keeps one by column.
			r.ByCol = b.By
			if cut := end.Add(-b.Rows); cut.After(r.ByCutoff) {
				r.ByCutoff = cut
			}
			if r.ByCutoff.After(r.Cutoff) {
				r.Cutoff = r.ByCutoff
			}
		}
	}
	return r
}

// expireBefore moves r's horizon to the last commit made before cut, if
// that is later (and not before t was created).
func (r *Retention) expireBefore(cut time.Time, t *catalog.Table, commits []CommitInfo) {
	if cut.After(r.Cutoff) {
		r.Cutoff = cut
	}
	i := sort.Search(len(commits), func(i int) bool { return !commits[i].At.Before(cut) })
	if i > 0 && commits[i-1].Commit >= t.CreatedCommit && commits[i-1].Commit > r.Horizon {
		r.Horizon = commits[i-1].Commit
	}
}

// expired reports whether version resolution res is past r's horizon.
func (r Retention) expired(res version.Resolved) bool {
	return r.Horizon != 0 && version.Expired(res, r.Horizon)
}

// expiryOf is what a merge of table t drops under retention r.
func expiryOf(t *catalog.Table, r Retention) (merge.Expiry, error) {
	if !r.Active() {
		return merge.Expiry{}, nil
	}
	x := merge.Expiry{Horizon: r.Horizon, ByCol: r.ByCol}
	if r.ByCol != 0 {
		c, ok := t.AnyColumn(r.ByCol)
		if !ok {
			return merge.Expiry{}, fmt.Errorf("retention of table %s: no column %d", t.Name, r.ByCol)
		}
		v, err := types.FromTime(c.Type, r.ByCutoff.UTC())
		if err != nil {
			return merge.Expiry{}, fmt.Errorf("retention of table %s: cutoff for column %s: %w", t.Name, c.Name, err)
		}
		x.Before = v
	}
	return x, nil
}

// expiryDue reports whether shard num of table t, whose parts are mps, is
// due a merge to drop what retention expired (R9.3), and of which runs:
// those whose commits begin at or before the commit it returns. Reads
// leave expired data out anyway, so this only bounds how long it stays on
// disk: a shard is merged again once its cutoff has moved on by a quarter
// of the retention period since the last such merge (and at once when
// now, whenever the last was: MergeNow's caller waits for it), and only
// if some part may hold expired rows. A shard first looked at since Open counts as merged at the
// cutoff of that moment, so a restart does not rewrite every shard at once.
func (e *Engine) expiryDue(st *state, t *catalog.Table, num uint32, mps []manifest.Part, now bool) (uint64, bool) {
	if t.Mode == catalog.ModeUpsert {
		return 0, false
	}
	r := e.retentionAt(st, t)
	if !r.Active() || r.Horizon == 0 && r.ByCol == 0 {
		return 0, false
	}
	// Rows that expire by commit were committed by the horizon; versions
	// that stopped counting by it too, in history runs or deltas (a
	// history part knows the lowest horizon that expires any of its
	// versions, so a settled history is not rewritten until the horizon
	// reaches it). Rows that expire by a column may be anywhere.
	through := r.Horizon
	if r.ByCol != 0 {
		through = math.MaxUint64
	}
	may := false
	for _, p := range mps {
		switch {
		case p.Kind == manifest.KindCurrent:
		case p.Kind == manifest.KindHistory && p.ExpiresFrom != 0 && r.ByCol == 0:
			may = may || p.ExpiresFrom <= through
		default:
			may = may || p.MinCommit <= through
		}
	}
	if !may {
		return 0, false
	}
	if e.expired == nil {
		e.expired = map[shardKey]time.Time{}
	}
	k := shardKey{t.ID, num}
	last, seen := e.expired[k]
	if !seen && !now {
		e.expired[k] = r.Cutoff
		return 0, false
	}
	if now {
		// CHECKPOINT merges whatever may hold expired data: the look
		// that counted the shard as merged at this cutoff may have been
		// the first after Open, which merged nothing.
		return through, true
	}
	if seen && !r.Cutoff.After(last) {
		return 0, false
	}
	return through, r.Cutoff.Sub(last) >= r.Period/4
}

// expiryWake is how long the background merger may sleep before a shard
// can be due a merge for retention (expiryDue) or a part due a move to an
// object store (tierLoop): a quarter of the shortest retention period or
// move_after of a table, within [expiryWakeMin, expiryWakeMax], and 30 s
// while parts wait for their placement volume (placeLoop); 0 when no
// table has any of these.
func (e *Engine) expiryWake() time.Duration {
	st := e.cur.Load()
	var w time.Duration
	wake := func(period time.Duration) {
		if q := min(max(period/4, expiryWakeMin), expiryWakeMax); w == 0 || q < w {
			w = q
		}
	}
	for id := range st.tables {
		t, ok := st.cat.TableByID(id)
		if !ok {
			continue
		}
		// Period 0: only earlier settings expired something, once.
		if r := e.retentionAt(st, t); r.Active() && t.Mode != catalog.ModeUpsert && r.Period > 0 {
			wake(r.Period)
		}
		// Parts that wait for their placement volume (missing, or a
		// write failed there) move once it can be written, without a
		// write to wake the merger: look every volumeDownFor.
		if t.Policies.Placement != catalog.DefaultPolicyName && e.partsWaiting(st, t) {
			wake(4 * volumeDownFor)
		}
		// Parts move to an object store as they age, with no flush to
		// kick the merger either (tier.go); without move_after they move
		// as flushes write them, and every flush kicks it.
		if t.Policies.Storage != catalog.DefaultPolicyName {
			p := st.cat.Bound(t, catalog.RoleStorage)
			if _, ok := p.Text("object_store"); ok {
				if after, _ := p.Duration("move_after"); after > 0 {
					wake(after)
				}
			}
		}
	}
	return w
}

// The bounds of expiryWake.
const (
	expiryWakeMin = 50 * time.Millisecond
	expiryWakeMax = time.Hour
)

// horizonFn returns the version.Ordering.Horizon of table t's groups:
// for a commit, the retention horizon as it stood when that commit was
// made, so that whether a write repeats an earlier version (rule 3) is
// decided at its arrival (R3.4 with R9.3). nil for a table that keeps no
// history. It reads the table's retention bindings when called, which is
// rare: only for a version equal to a counted one in ordering values and
// values.
func (e *Engine) horizonFn(t *catalog.Table) func(uint64) uint64 {
	if t.Mode != catalog.ModeVersioned {
		return nil
	}
	if f, ok := e.horizons.Load(t.ID); ok {
		return f.(func(uint64) uint64)
	}
	id := t.ID
	f := func(c uint64) uint64 { return e.horizonAt(id, c) }
	actual, _ := e.horizons.LoadOrStore(id, f)
	return actual.(func(uint64) uint64)
}

// horizonAt is the horizon of table id's history as it stood at commit c:
// under the retention bindings in force at c, at c's commit time; 0 when
// nothing had expired.
func (e *Engine) horizonAt(id catalog.TableID, c uint64) uint64 {
	st := e.cur.Load()
	t, ok := st.cat.TableByID(id)
	if !ok || !retains(t) {
		return 0
	}
	var at time.Time
	switch {
	case c >= 1 && c <= uint64(len(st.commits)):
		at = st.commits[c-1].At
	case e.applyingCommit.Load() == c:
		at = time.Unix(0, e.applyingAt.Load()) // being applied: not published yet
	default:
		// Not committed: a transaction's pending writes carry the commit
		// they read at, so this is not reached; judge at the newest.
		if n := len(st.commits); n > 0 {
			at = st.commits[n-1].At
		}
	}
	return retentionOf(st.cat, t, at, c, st.commits).Horizon
}

// expiryInstant is the instant a merge that expires versions judges
// retention at: the clock now. Every commit made before it must be in the
// parts the merge reads, so it becomes the floor of later commits' times
// (which never go back anyway), and it returns once every commit numbered
// before that is applied: a flush after it holds them all.
//
// It returns the instant and the last commit made before it: the merge
// applies the retention settings in force at that commit, not ones bound
// later (those judge the commits after them).
func (e *Engine) expiryInstant(ctx context.Context) (time.Time, uint64, error) {
	now := e.retentionClock().UTC().Truncate(time.Microsecond)
	e.pipe.Lock()
	if now.After(e.pipe.lastAt) {
		e.pipe.lastAt = now
	}
	next := e.pipe.next
	e.pipe.Unlock()
	for e.cur.Load().commit+1 < next {
		if err := e.failed(); err != nil {
			return time.Time{}, 0, err
		}
		select {
		case <-ctx.Done():
			return time.Time{}, 0, ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
	return now, next - 1, nil
}
