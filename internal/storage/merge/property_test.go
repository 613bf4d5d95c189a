package merge

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage/manifest"
	"github.com/strata-db/strata/internal/storage/part"
	"github.com/strata-db/strata/internal/version"
)

// genHistory draws commits of writes and deletes over a few keys, with
// small ordering values and values so that ties, late writes and repeats
// (R3.4) are common.
func genHistory(t *rapid.T) (rows []trow, lastCommit uint64) {
	commits := rapid.IntRange(1, 10).Draw(t, "commits")
	for c := 1; c <= commits; c++ {
		ops := rapid.IntRange(1, 4).Draw(t, "ops")
		for s := range ops {
			r := trow{key: int64(rapid.IntRange(0, 2).Draw(t, "key")), commit: uint64(c), seq: uint32(s)}
			if rapid.IntRange(0, 6).Draw(t, "del") == 0 {
				r.tomb = true
			} else if rapid.IntRange(0, 4).Draw(t, "both") == 0 {
				// One row writing both groups: two versions at one position.
				r.a = int64(rapid.IntRange(0, 2).Draw(t, "a"))
				rows = append(rows, r)
				r.group, r.a, r.o, r.b = 1, 0, int64(rapid.IntRange(0, 3).Draw(t, "o")), int64(rapid.IntRange(0, 1).Draw(t, "b"))
			} else if rapid.Bool().Draw(t, "g1") {
				r.group, r.o, r.b = 1, int64(rapid.IntRange(0, 3).Draw(t, "o")), int64(rapid.IntRange(0, 1).Draw(t, "b"))
			} else {
				r.a = int64(rapid.IntRange(0, 2).Draw(t, "a"))
			}
			rows = append(rows, r)
		}
	}
	return rows, uint64(commits)
}

// shard is the runs of a shard in commit order, as the test merges them.
type shard struct {
	f    *fixture
	runs [][]manifest.Part
}

// flushRuns cuts rows (in commit order) into runs of contiguous commits and
// writes each as a delta part, as flushes would.
func flushRuns(t *rapid.T, f *fixture, rows []trow, lastCommit uint64, k part.Kind) *shard {
	s := &shard{f: f}
	lo := uint64(1)
	for lo <= lastCommit {
		hi := uint64(rapid.IntRange(int(lo), int(lastCommit)).Draw(t, "runEnd"))
		var run []trow
		for _, r := range rows {
			if r.commit >= lo && r.commit <= hi {
				run = append(run, r)
			}
		}
		slices.SortFunc(run, func(a, b trow) int {
			if less(&a, &b) {
				return -1
			}
			return 1
		})
		// Tiny blocks, so that a (key, group) spans block boundaries.
		s.runs = append(s.runs, []manifest.Part{f.write(run, k, part.WriteOptions{BlockRows: 2})})
		lo = hi + 1
	}
	return s
}

// mergeRandomly merges random windows of adjacent runs, with random output
// part sizes, as any sequence of policy decisions could.
func (s *shard) mergeRandomly(t *rapid.T) {
	steps := rapid.IntRange(0, 5).Draw(t, "merges")
	for range steps {
		i := rapid.IntRange(0, len(s.runs)-1).Draw(t, "from")
		j := rapid.IntRange(i+1, len(s.runs)).Draw(t, "to")
		var in []manifest.Part
		for _, r := range s.runs[i:j] {
			in = append(in, r...)
		}
		out, _ := s.f.merge(in, i == 0, rapid.IntRange(1, 6).Draw(t, "partRows"))
		runs := slices.Clone(s.runs[:i])
		if len(out) > 0 {
			runs = append(runs, out)
		}
		s.runs = append(runs, s.runs[j:]...)
		if len(s.runs) == 0 {
			return
		}
	}
}

// posKey identifies a version or delete across parts.
type posKey struct {
	key   int64
	group uint16
	tomb  bool
	pos   version.Pos
}

func keyOf(r *trow) posKey { return posKey{r.key, r.group, r.tomb, r.pos()} }

// TestMergeNeverChangesVersioned is invariant 2 of doc.go for versioned
// tables: for random histories, runs and merges in any grouping, resolving
// what the parts hold gives exactly what resolving the writes gives —
// states, intervals, superseded_by and reasons of every version, and the
// winner of every (key, group) at every commit — and the resolution stored
// in current and history parts agrees with it.
func TestMergeNeverChangesVersioned(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := newFixture(t, testTable(catalog.ModeVersioned))
		rows, last := genHistory(t)
		want := resolveRows(t, rows)
		s := flushRuns(t, f, rows, last, part.KindDelta)
		s.mergeRandomly(t)

		var got []trow
		for _, run := range s.runs {
			for _, p := range run {
				prs := f.read(p)
				checkStored(t, p, prs, want)
				got = append(got, prs...)
			}
		}
		have := resolveRows(t, got)
		seen := map[posKey]bool{}
		for _, r := range got {
			k := keyOf(&r)
			if seen[k] {
				t.Fatalf("%+v is stored twice", k)
			}
			seen[k] = true
			w, ok := want[k]
			if !ok {
				t.Fatalf("%+v was never written", k)
			}
			h := have[k]
			if h.State != w.State || h.WonAt != w.WonAt || h.EndedAt != w.EndedAt || h.SupersededBy != w.SupersededBy || h.Reason != w.Reason {
				t.Fatalf("%+v: after merging %+v, before %+v", k, h, w)
			}
		}
		for k, w := range want {
			if !seen[k] && (k.tomb || w.State != version.Dropped) {
				t.Fatalf("%+v (%v) was lost", k, w.State)
			}
		}
		// Winners at every commit, per (key, group).
		for key := range int64(3) {
			for g := range uint16(2) {
				for n := uint64(1); n <= last; n++ {
					if a, b := winnerAt(want, key, g, n), winnerAt(have, key, g, n); a != b {
						t.Fatalf("key %d group %d at commit %d: winner %v before, %v after", key, g, n, a, b)
					}
				}
			}
		}
	})
}

// checkStored checks the resolution stored in a current or history part
// against the resolution of all writes: history states are final, a
// current row won when it says and still wins at the part's newest commit.
func checkStored(t *rapid.T, p manifest.Part, rows []trow, want map[posKey]resolved) {
	for _, r := range rows {
		if p.Kind == manifest.KindDelta || r.tomb {
			continue
		}
		w := want[keyOf(&r)]
		if p.Kind == manifest.KindHistory && (r.state != w.State || r.wonAt != w.WonAt || r.endedAt != w.EndedAt || r.superBy != w.SupersededBy) {
			t.Fatalf("history row %+v stores a resolution other than %+v", r, w)
		}
		if p.Kind == manifest.KindCurrent && (r.state != version.Current || r.wonAt != w.WonAt || w.EndedAt <= p.MaxCommit) {
			t.Fatalf("current row %+v (part max commit %d) disagrees with %+v", r, p.MaxCommit, w)
		}
	}
}

// resolved is version.Resolved without the input index By.
type resolved struct {
	State                        version.State
	WonAt, EndedAt, SupersededBy uint64
	Reason                       string
}

// resolveRows resolves rows with version.Resolve.
func resolveRows(t *rapid.T, rows []trow) map[posKey]resolved {
	vs, ds := toVersions(rows)
	rs, err := version.Resolve(ords, vs, ds)
	if err != nil {
		t.Fatal(err)
	}
	m := map[posKey]resolved{}
	vi := 0
	for _, r := range rows {
		if r.tomb {
			m[keyOf(&r)] = resolved{}
			continue
		}
		x := rs[vi]
		m[keyOf(&r)] = resolved{x.State, x.WonAt, x.EndedAt, x.SupersededBy, x.Reason}
		vi++
	}
	return m
}

// winnerAt returns the position of the winner of (key, g) at n, or a zero
// position.
func winnerAt(m map[posKey]resolved, key int64, g uint16, n uint64) version.Pos {
	for k, r := range m {
		if k.key == key && k.group == g && !k.tomb &&
			version.StateAt(version.Resolved{Commit: k.pos.Commit, State: r.State, WonAt: r.WonAt, EndedAt: r.EndedAt}, n) == version.Current {
			return k.pos
		}
	}
	return version.Pos{}
}

// foldUpsert applies version.Decide to rows in commit order, per (key,
// group), deletes emptying the key: the current row of an upsert table.
func foldUpsert(t *rapid.T, rows []trow) map[[2]int64]version.Pos {
	rows = slices.Clone(rows)
	slices.SortFunc(rows, func(a, b trow) int { return a.pos().Compare(b.pos()) })
	vs, _ := toVersions(rows)
	win := map[[2]int64]*version.Version{}
	vi := 0
	for _, r := range rows {
		if r.tomb {
			delete(win, [2]int64{r.key, 0})
			delete(win, [2]int64{r.key, 1})
			continue
		}
		v := &vs[vi]
		vi++
		k := [2]int64{r.key, int64(r.group)}
		if version.Decide(ords[r.group], win[k], v) == version.Won {
			win[k] = v
		}
	}
	out := map[[2]int64]version.Pos{}
	for k, v := range win {
		out[k] = v.Pos()
	}
	return out
}

// TestMergeNeverChangesUpsert: for upsert tables the current row of every
// (key, group) — its position, and so its values and _commit (R7.2) — is
// the same whether Decide folds the writes or the merged parts.
func TestMergeNeverChangesUpsert(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := newFixture(t, testTable(catalog.ModeUpsert))
		rows, last := genHistory(t)
		want := foldUpsert(t, rows)
		s := flushRuns(t, f, rows, last, part.KindDelta)
		s.mergeRandomly(t)
		var got []trow
		for _, run := range s.runs {
			for _, p := range run {
				got = append(got, f.read(p)...)
			}
		}
		have := foldUpsert(t, got)
		if fmt.Sprint(want) != fmt.Sprint(have) {
			t.Fatalf("winners before %v, after merging %v", want, have)
		}
	})
}

// TestPolicyMergesNeverChangeResult drives merges the way the engine
// will: Choose on the shard's live parts (regrouped into runs by Runs each
// time, with outputs cut into tiny parts), merged with the Plan's Oldest,
// until Choose is done. Winners at every commit and the versions() rows
// must be those of the writes.
func TestPolicyMergesNeverChangeResult(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := newFixture(t, testTable(catalog.ModeVersioned))
		rows, last := genHistory(t)
		want := resolveRows(t, rows)
		s := flushRuns(t, f, rows, last, part.KindDelta)
		var live []manifest.Part
		for _, r := range s.runs {
			live = append(live, r...)
		}
		set := Settings{TargetPartBytes: int64(rapid.IntRange(1, 64).Draw(t, "targetKiB")) << 10,
			MaxPartsPerShard: rapid.IntRange(1, 3).Draw(t, "max")}
		for range 50 {
			p, ok := Choose(live, set)
			if !ok {
				break
			}
			out, _ := f.merge(p.Inputs, p.Oldest, rapid.IntRange(1, 6).Draw(t, "partRows"))
			live = slices.DeleteFunc(live, func(q manifest.Part) bool {
				return slices.ContainsFunc(p.Inputs, func(x manifest.Part) bool { return x.ID == q.ID })
			})
			live = append(live, out...)
		}
		var got []trow
		for _, p := range live {
			prs := f.read(p)
			checkStored(t, p, prs, want)
			got = append(got, prs...)
		}
		have := resolveRows(t, got)
		for _, r := range got {
			k := keyOf(&r)
			if w, h := want[k], have[k]; w != h {
				t.Fatalf("%+v: after merging %+v, before %+v", k, h, w)
			}
		}
		for k, w := range want {
			if _, ok := have[k]; !ok && (k.tomb || w.State != version.Dropped) {
				t.Fatalf("%+v (%v) was lost", k, w.State)
			}
		}
		for key := range int64(3) {
			for g := range uint16(2) {
				for n := uint64(1); n <= last; n++ {
					if a, b := winnerAt(want, key, g, n), winnerAt(have, key, g, n); a != b {
						t.Fatalf("key %d group %d at commit %d: winner %v before, %v after", key, g, n, a, b)
					}
				}
			}
		}
	})
}
