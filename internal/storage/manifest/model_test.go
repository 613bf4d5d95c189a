package manifest

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// model is the manifest's state written the obvious way: maps, no sharing.
// The property test drives a Bolt and a model with the same random edits
// and demands they agree after every step, that snapshots taken earlier
// still agree with the model as it was, and that a reopened file agrees too.
type model struct {
	shards     map[ShardRef]Shard
	flushed    map[ShardRef]uint64
	parts      map[uint64]Part
	commits    []Commit
	catalog    CatalogUpdate
	wal        uint64
	transforms map[string]Transform
}

func newModel() *model {
	return &model{
		shards: map[ShardRef]Shard{}, flushed: map[ShardRef]uint64{},
		parts: map[uint64]Part{}, transforms: map[string]Transform{},
	}
}

func (m *model) clone() *model {
	c := *m
	c.shards = maps.Clone(m.shards)
	c.flushed = maps.Clone(m.flushed)
	c.parts = maps.Clone(m.parts)
	c.commits = slices.Clone(m.commits)
	c.transforms = maps.Clone(m.transforms)
	return &c
}

func (m *model) last() uint64 { return uint64(len(m.commits)) }

// apply applies an edit already known to be valid.
func (m *model) apply(e *Edit) {
	m.commits = append(m.commits, e.AppendCommits...)
	for _, s := range e.SetShards {
		m.shards[ShardRef{s.Table, s.Shard}] = s
	}
	for _, r := range e.RemoveParts {
		delete(m.parts, r.ID)
	}
	for _, p := range e.AddParts {
		m.parts[p.ID] = p
	}
	for _, r := range e.RemoveShards {
		delete(m.shards, r)
		delete(m.flushed, r)
	}
	for _, f := range e.SetFlushed {
		m.flushed[ShardRef{f.Table, f.Shard}] = f.Commit
	}
	if e.Catalog != nil {
		m.catalog = *e.Catalog
	}
	for _, n := range e.RemoveTransforms {
		delete(m.transforms, n)
	}
	for _, t := range e.SetTransforms {
		m.transforms[t.Name] = t
	}
	if e.WALCheckpoint != 0 {
		m.wal = e.WALCheckpoint
	}
}

// matches reports the first way s differs from m.
func (m *model) matches(s *Snapshot) error {
	if s.LastCommit() != m.last() {
		return fmt.Errorf("last commit %d, model %d", s.LastCommit(), m.last())
	}
	for i := range m.commits {
		if c, _ := s.Commit(uint64(i) + 1); !commitEqual(&c, &m.commits[i]) {
			return fmt.Errorf("commit %d: %+v, model %+v", i+1, c, m.commits[i])
		}
	}
	n := 0
	for _, table := range s.Tables() {
		for _, sh := range s.Shards(table) {
			ref := ShardRef{table, sh.Shard}
			if m.shards[ref] != sh {
				return fmt.Errorf("shard %v: %+v, model %+v", ref, sh, m.shards[ref])
			}
			n++
			if s.FlushedThrough(table, sh.Shard) != m.flushed[ref] {
				return fmt.Errorf("shard %v flushed %d, model %d", ref, s.FlushedThrough(table, sh.Shard), m.flushed[ref])
			}
		}
	}
	if n != len(m.shards) {
		return fmt.Errorf("%d shards, model %d", n, len(m.shards))
	}
	n = 0
	for _, table := range s.Tables() {
		for _, sh := range s.Shards(table) {
			for _, p := range s.Parts(table, sh.Shard) {
				mp, ok := m.parts[p.ID]
				if !ok || !partEqual(&p, &mp) {
					return fmt.Errorf("part %d: %+v, model %+v", p.ID, p, mp)
				}
				n++
			}
		}
	}
	if n != len(m.parts) {
		return fmt.Errorf("%d parts, model %d", n, len(m.parts))
	}
	if c, d := s.Catalog(); c != m.catalog.Commit || !bytes.Equal(d, m.catalog.Data) {
		return fmt.Errorf("catalog %d, model %d", c, m.catalog.Commit)
	}
	if s.WALCheckpoint() != m.wal {
		return fmt.Errorf("WAL checkpoint %d, model %d", s.WALCheckpoint(), m.wal)
	}
	if got := s.Transforms(); len(got) != len(m.transforms) {
		return fmt.Errorf("%d transformations, model %d", len(got), len(m.transforms))
	}
	for name, mt := range m.transforms {
		p, st, ok := s.TransformProgress(name)
		if !ok || p != mt.Processed || !bytes.Equal(st, mt.State) {
			return fmt.Errorf("transformation %q: %d %q, model %d %q", name, p, st, mt.Processed, mt.State)
		}
	}
	return nil
}

// sortedRefs returns the keys of a shard map in order, so that draws do not
// depend on map iteration order and rapid can shrink a failure.
func sortedRefs[V any](m map[ShardRef]V) []ShardRef {
	refs := slices.Collect(maps.Keys(m))
	slices.SortFunc(refs, func(a, b ShardRef) int {
		if a.Table != b.Table {
			return cmp.Compare(a.Table, b.Table)
		}
		return cmp.Compare(a.Shard, b.Shard)
	})
	return refs
}

// genEdit draws an edit that is valid against m.
func genEdit(t *rapid.T, b *Bolt, m *model) Edit {
	var e Edit
	last := m.last()
	at := t0
	if last > 0 {
		at = m.commits[last-1].At
	}
	for i := range rapid.IntRange(0, 3).Draw(t, "commits") {
		at = at.Add(time.Duration(rapid.IntRange(0, 2).Draw(t, "gap")) * time.Second)
		e.AppendCommits = append(e.AppendCommits, Commit{Seq: last + uint64(i) + 1, At: at,
			Kind:   rapid.SampledFrom([]string{CommitDDL, CommitWrite, CommitTransformation}).Draw(t, "kind"),
			Tables: []string{"t"}, Rows: uint64(i)})
	}
	last += uint64(len(e.AppendCommits))

	// Shards: each table's shard 0 owns the whole space; other shards are
	// retired, so ranges never overlap.
	shards := sortedRefs(m.shards)
	if rapid.IntRange(0, 3).Draw(t, "newShard") == 0 || len(shards) == 0 {
		r := ShardRef{uint64(rapid.IntRange(1, 3).Draw(t, "table")), uint32(rapid.IntRange(0, 3).Draw(t, "shard"))}
		s := Shard{Table: r.Table, Shard: r.Shard, Range: KeyRange{Lo: uint64(r.Shard), Hi: uint64(r.Shard) + 1}, State: StateRetired}
		if r.Shard == 0 {
			s.Range, s.State = FullRange, StateActive
		}
		e.SetShards = append(e.SetShards, s)
		if _, ok := m.shards[r]; !ok {
			shards = append(shards, r)
		}
	}

	live := slices.Sorted(maps.Keys(m.parts))
	removed := map[uint64]bool{}
	for range rapid.IntRange(0, min(2, len(live))).Draw(t, "removes") {
		id := rapid.SampledFrom(live).Draw(t, "remove")
		if !removed[id] {
			removed[id] = true
			p := m.parts[id]
			e.RemoveParts = append(e.RemoveParts, p.Ref())
		}
	}
	added := map[ShardRef]bool{}
	for range rapid.IntRange(0, 3).Draw(t, "adds") {
		r := rapid.SampledFrom(shards).Draw(t, "addTo")
		id, err := b.NextPartID()
		if err != nil {
			t.Fatal(err)
		}
		lo := uint64(rapid.IntRange(0, int(max(last, 1))).Draw(t, "minCommit"))
		e.AddParts = append(e.AddParts, Part{Table: r.Table, Shard: r.Shard, ID: id,
			Kind: KindCurrent, Rows: id, MinCommit: lo, MaxCommit: lo + 1,
			MinKey: []byte{byte(id)}, MaxKey: []byte{byte(id), 0},
			File: fmt.Sprintf("%d", id), Location: LocationLocal, CreatedAt: t0.Add(time.Duration(id))})
		added[r] = true
	}
	// Remove a shard that holds nothing once this edit is done.
	for _, r := range shards {
		if _, exists := m.shards[r]; !exists || added[r] || slices.ContainsFunc(e.SetShards, func(s Shard) bool { return s.Table == r.Table && s.Shard == r.Shard }) {
			continue
		}
		empty := true
		for id, p := range m.parts {
			if p.Table == r.Table && p.Shard == r.Shard && !removed[id] {
				empty = false
			}
		}
		if empty && rapid.IntRange(0, 2).Draw(t, "dropShard") == 0 {
			e.RemoveShards = append(e.RemoveShards, r)
			shards = slices.DeleteFunc(shards, func(x ShardRef) bool { return x == r })
			break
		}
	}
	if len(shards) > 0 && rapid.Bool().Draw(t, "flush") {
		r := rapid.SampledFrom(shards).Draw(t, "flushShard")
		cur := m.flushed[r]
		e.SetFlushed = []Flushed{{r.Table, r.Shard, uint64(rapid.IntRange(int(cur), int(last)).Draw(t, "flushed"))}}
	}
	if rapid.IntRange(0, 3).Draw(t, "catalog") == 0 {
		c := uint64(rapid.IntRange(int(m.catalog.Commit), int(last)).Draw(t, "catalogCommit"))
		e.Catalog = &CatalogUpdate{Commit: c, Data: []byte(fmt.Sprintf("catalog %d", c))}
	}
	name := rapid.SampledFrom([]string{"a", "b", "c"}).Draw(t, "transform")
	if old, ok := m.transforms[name]; ok && rapid.IntRange(0, 3).Draw(t, "dropTransform") == 0 {
		e.RemoveTransforms = []string{name}
	} else if rapid.Bool().Draw(t, "setTransform") {
		p := uint64(rapid.IntRange(int(old.Processed), int(last)).Draw(t, "processed"))
		e.SetTransforms = []Transform{{Name: name, Processed: p, State: []byte(fmt.Sprintf("s%d", p))}}
	}
	if last > 0 && rapid.Bool().Draw(t, "wal") {
		e.WALCheckpoint = uint64(rapid.IntRange(int(max(m.wal, 1)), int(last)).Draw(t, "walCommit"))
	}
	return e
}

// spoil breaks one rule of a valid edit, or reports false when the state
// offers nothing to break in the chosen way.
func spoil(t *rapid.T, e *Edit, m *model) bool {
	last := m.last() + uint64(len(e.AppendCommits))
	switch rapid.IntRange(0, 7).Draw(t, "spoil") {
	case 0:
		e.AppendCommits = append(e.AppendCommits, Commit{Seq: last + 2, At: t0.Add(1000 * time.Hour), Kind: CommitWrite})
	case 1:
		e.RemoveParts = append(e.RemoveParts, PartRef{Table: 1, ID: 1 << 62})
	case 2:
		for _, id := range slices.Sorted(maps.Keys(m.parts)) {
			e.AddParts = append(e.AddParts, m.parts[id])
			return true
		}
		return false
	case 3:
		if len(e.AddParts) == 0 {
			return false
		}
		e.AddParts = append(e.AddParts, e.AddParts[0])
	case 4:
		e.WALCheckpoint = last + 1
	case 5:
		for _, name := range slices.Sorted(maps.Keys(m.transforms)) {
			if tr := m.transforms[name]; tr.Processed > 0 && !slices.Contains(e.RemoveTransforms, name) {
				e.SetTransforms = append(e.SetTransforms, Transform{Name: name, Processed: tr.Processed - 1})
				return true
			}
		}
		return false
	case 6:
		for _, r := range sortedRefs(m.shards) {
			// Invalid either way: past the last commit, or (when this
			// edit removes the shard) on a shard that is gone.
			e.SetFlushed = append(e.SetFlushed, Flushed{r.Table, r.Shard, last + 1})
			return true
		}
		return false
	case 7:
		for _, r := range sortedRefs(m.flushed) {
			if f := m.flushed[r]; f > 0 {
				e.SetFlushed = append(e.SetFlushed, Flushed{r.Table, r.Shard, f - 1})
				return true
			}
		}
		return false
	}
	return true
}

func TestModel(t *testing.T) {
	dir := t.TempDir()
	run := 0
	rapid.Check(t, func(rt *rapid.T) {
		run++
		path := filepath.Join(dir, fmt.Sprintf("m%d.db", run))
		b, err := Open(path, Options{})
		if err != nil {
			rt.Fatal(err)
		}
		defer func() { _ = b.Close() }()
		m := newModel()
		type held struct {
			s *Snapshot
			m *model
		}
		var old []held
		for step := range rapid.IntRange(1, 25).Draw(rt, "steps") {
			e := genEdit(rt, b, m)
			bad := rapid.IntRange(0, 4).Draw(rt, "bad") == 0 && spoil(rt, &e, m)
			before := b.Snapshot()
			err := b.Apply(e)
			switch {
			case bad && !errors.Is(err, ErrInvalidEdit):
				rt.Fatalf("step %d: spoiled edit %+v: got %v", step, e, err)
			case bad && b.Snapshot() != before:
				rt.Fatalf("step %d: a refused edit replaced the snapshot", step)
			case !bad && err != nil:
				rt.Fatalf("step %d: valid edit %+v: %v", step, e, err)
			case !bad:
				m.apply(&e)
			}
			if err := m.matches(b.Snapshot()); err != nil {
				rt.Fatalf("step %d: %v", step, err)
			}
			old = append(old, held{b.Snapshot(), m.clone()})
			for i, h := range old {
				if err := h.m.matches(h.s); err != nil {
					rt.Fatalf("step %d: snapshot of step %d changed: %v", step, i, err)
				}
			}
		}
		if err := b.Check(); err != nil {
			rt.Fatal(err)
		}
		if err := b.Close(); err != nil {
			rt.Fatal(err)
		}
		b, err = Open(path, Options{})
		if err != nil {
			rt.Fatal(err)
		}
		if err := m.matches(b.Snapshot()); err != nil {
			rt.Fatalf("after reopen: %v", err)
		}
		if err := b.Check(); err != nil {
			rt.Fatal(err)
		}
	})
}
