package manifest

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
)

// Edit is one atomic change to the manifest: a flush (add a part, move the
// shard's flushed commit), a merge (remove the inputs, add the outputs), a
// DDL (new catalog, new shards, the commit), a transformation step
// (commit, checkpoint), or any mix. Apply checks the whole edit against the
// current state first and then writes it in one bbolt transaction, so it
// either happens entirely or not at all.
//
// The parts of an edit are applied in this order, each seeing the ones
// before it: AppendCommits, SetShards, RemoveParts, AddParts,
// RemoveShards, SetFlushed, Catalog, RemoveTransforms, SetTransforms,
// WALCheckpoint.
//
// The engine's side of the bargain (invariant 1 and 2 in doc.go): a part
// is added only after its file is written and fsynced (and its directory
// entry too); a removed part's file is deleted only after the Apply that
// removed it has returned nil and no snapshot still in use holds the part.
type Edit struct {
	// AppendCommits extends the commit log. The first must follow the
	// last recorded commit, the rest follow each other without gaps, and
	// their times must not decrease.
	AppendCommits []Commit
	// SetShards creates or replaces shard records. The ranges of a table's
	// active shards must not overlap after the edit.
	SetShards []Shard
	// RemoveParts removes live parts; each must exist in the named shard.
	RemoveParts []PartRef
	// AddParts adds parts to existing shards. Each id must come from
	// NextPartID, which never repeats one; Apply refuses an id that is
	// live or above the counter, but cannot tell an id whose part was
	// removed by an earlier edit. No two live parts may name one file.
	AddParts []Part
	// RemoveShards deletes shard records (a dropped table, a finished
	// split). The shard must hold no parts once the edit's removals and
	// additions are done.
	RemoveShards []ShardRef
	// SetFlushed moves the flushed commit of shards forward; it never
	// moves back and never passes the last commit.
	SetFlushed []Flushed
	// Catalog, when set, replaces the encoded catalog. Its commit never
	// moves back and never passes the last commit.
	Catalog *CatalogUpdate
	// RemoveTransforms deletes transformation checkpoints (DROP
	// TRANSFORMATION); each must exist.
	RemoveTransforms []string
	// SetTransforms creates or replaces transformation checkpoints. An
	// existing checkpoint's processed commit never moves back.
	SetTransforms []Transform
	// RetentionClock, when later than the recorded one, records the
	// clock reading a merge judged retention at (R9.3): what it dropped
	// is gone, so after a restart the engine never judges at an earlier
	// instant, even with the clock set back. An earlier one is ignored.
	RetentionClock time.Time
	// WALCheckpoint, when nonzero, moves the database-wide WAL checkpoint
	// forward; it never moves back and never passes the last commit.
	WALCheckpoint uint64
}

// ErrInvalidEdit is returned (wrapped) by Apply for an edit that breaks
// the manifest's rules. Nothing of such an edit is applied.
var ErrInvalidEdit = errors.New("manifest: invalid edit")

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidEdit, fmt.Sprintf(format, args...))
}

// maxNameLen bounds a transformation name, which is a bbolt key (bbolt
// refuses keys over 32 KiB, and a refused put would fail the store).
const maxNameLen = 4096

// index is the writer's view of which ids and files are live, kept beside
// the snapshots (never shared with readers) so that an edit's uniqueness
// checks do not scan every part.
type index struct {
	ids   map[uint64]liveEntry
	files map[string]uint64 // Part.where -> part id
}

type liveEntry struct {
	ref  PartRef
	file string
}

func newIndex() *index {
	return &index{ids: map[uint64]liveEntry{}, files: map[string]uint64{}}
}

// add records a live part.
func (idx *index) add(p *Part) {
	idx.ids[p.ID] = liveEntry{ref: p.Ref(), file: p.where()}
	idx.files[p.where()] = p.ID
}

// builder turns a base snapshot and an edit into the next snapshot,
// copying only what the edit touches.
type builder struct {
	base, next *Snapshot
	idx        *index
	// reserved is the persisted part id counter: every handed-out id is
	// below it.
	reserved uint64

	tablesCopied bool
	copiedTables map[uint64]bool
	copiedShards map[ShardRef]bool
	touched      map[uint64]bool // tables whose shard set or ranges changed

	removedIDs map[uint64]bool
	addedIDs   map[uint64]bool
	addedFiles map[string]bool
}

// build validates e against base and returns the next snapshot. base and
// idx are not modified.
func build(base *Snapshot, idx *index, reserved uint64, e *Edit) (*Snapshot, error) {
	next := *base
	b := &builder{
		base: base, next: &next, idx: idx, reserved: reserved,
		copiedTables: map[uint64]bool{},
		copiedShards: map[ShardRef]bool{},
		touched:      map[uint64]bool{},
		removedIDs:   map[uint64]bool{},
		addedIDs:     map[uint64]bool{},
		addedFiles:   map[string]bool{},
	}
	steps := []func(*Edit) error{
		b.appendCommits, b.setShards, b.removeParts, b.addParts,
		b.removeShards, b.setFlushed, b.setCatalog, b.transforms, b.walCheckpoint, b.retentionClock,
	}
	for _, step := range steps {
		if err := step(e); err != nil {
			return nil, err
		}
	}
	if err := b.checkRanges(); err != nil {
		return nil, err
	}
	return b.next, nil
}

func (b *builder) appendCommits(e *Edit) error {
	if len(e.AppendCommits) == 0 {
		return nil
	}
	commits := b.base.commits
	for i := range e.AppendCommits {
		c := &e.AppendCommits[i]
		want := uint64(len(commits)) + 1
		if c.Seq != want {
			return invalidf("commit %d appended after commit %d; want commit %d", c.Seq, len(commits), want)
		}
		if !validCommitKind(c.Kind) {
			return invalidf("commit %d has kind %q; want ddl, write or transformation", c.Seq, c.Kind)
		}
		if c.At.IsZero() {
			return invalidf("commit %d has no time", c.Seq)
		}
		if n := len(commits); n > 0 && c.At.Before(commits[n-1].At) {
			return invalidf("commit %d at %s is before commit %d at %s; the engine must not let commit time go back",
				c.Seq, c.At, n, commits[n-1].At)
		}
		for _, t := range c.Tables {
			if t == "" {
				return invalidf("commit %d names an empty table", c.Seq)
			}
		}
		cc := *c
		cc.At = normTime(c.At)
		cc.Tables = nil
		if len(c.Tables) > 0 {
			cc.Tables = slices.Clone(c.Tables)
		}
		// Appending past a shared slice's length is safe: earlier snapshots
		// never look beyond their own length, and only the writer appends.
		commits = append(commits, cc)
	}
	b.next.commits = commits
	return nil
}

func (b *builder) lastCommit() uint64 { return uint64(len(b.next.commits)) }

// table returns a private copy of a table's state in next, creating it
// when create is set; nil when absent and not created.
func (b *builder) table(id uint64, create bool) *tableState {
	if !b.tablesCopied {
		b.next.tables = maps.Clone(b.base.tables)
		b.tablesCopied = true
	}
	t := b.next.tables[id]
	if t == nil {
		if !create {
			return nil
		}
		t = &tableState{}
		b.next.tables[id] = t
		b.copiedTables[id] = true
		return t
	}
	if !b.copiedTables[id] {
		t = &tableState{infos: slices.Clone(t.infos), shards: slices.Clone(t.shards)}
		b.next.tables[id] = t
		b.copiedTables[id] = true
	}
	return t
}

// shard returns a private copy of a shard's state in next, nil if the
// shard does not exist.
func (b *builder) shard(table uint64, shard uint32) *shardState {
	if b.next.shard(table, shard) == nil {
		return nil
	}
	t := b.table(table, false)
	i, _ := t.find(shard)
	ref := ShardRef{table, shard}
	if !b.copiedShards[ref] {
		old := t.shards[i]
		// The part list is copied once here; the edit's removals and
		// additions then work in place on the private copy.
		t.shards[i] = &shardState{flushed: old.flushed, parts: slices.Clone(old.parts)}
		b.copiedShards[ref] = true
	}
	return t.shards[i]
}

func (b *builder) setShards(e *Edit) error {
	for _, s := range e.SetShards {
		if !s.Range.valid() {
			return invalidf("shard %d of table %d has empty range %s", s.Shard, s.Table, s.Range)
		}
		if !s.State.valid() {
			return invalidf("shard %d of table %d has unknown state %d", s.Shard, s.Table, s.State)
		}
		t := b.table(s.Table, true)
		i, ok := t.find(s.Shard)
		if ok {
			t.infos[i] = s
		} else {
			t.infos = slices.Insert(t.infos, i, s)
			t.shards = slices.Insert(t.shards, i, &shardState{})
			b.copiedShards[ShardRef{s.Table, s.Shard}] = true
		}
		b.touched[s.Table] = true
	}
	return nil
}

func (b *builder) removeParts(e *Edit) error {
	for _, r := range e.RemoveParts {
		if b.removedIDs[r.ID] {
			return invalidf("%s removed twice", r)
		}
		entry, ok := b.idx.ids[r.ID]
		if !ok {
			return invalidf("%s is not live", r)
		}
		if live := entry.ref; live != r {
			return invalidf("%s is live in table %d shard %d, not where the edit says", r, live.Table, live.Shard)
		}
		sh := b.shard(r.Table, r.Shard)
		if sh == nil {
			return corruptf("%s is indexed but its shard is missing", r)
		}
		i, ok := findPart(sh.parts, r.ID)
		if !ok {
			return corruptf("%s is indexed but not in its shard", r)
		}
		sh.parts = slices.Delete(sh.parts, i, i+1)
		b.removedIDs[r.ID] = true
	}
	return nil
}

func (b *builder) addParts(e *Edit) error {
	for i := range e.AddParts {
		p := e.AddParts[i]
		if err := p.validate(); err != nil {
			return invalidf("%v", err)
		}
		// A part removed by this edit may come back under the same id in
		// the same shard: a part moved to an object store (the same rows,
		// another Location and File).
		if entry, live := b.idx.ids[p.ID]; live && (!b.removedIDs[p.ID] || entry.ref != p.Ref()) || b.addedIDs[p.ID] {
			return invalidf("part id %d is already used", p.ID)
		}
		if p.ID >= b.reserved {
			return invalidf("part id %d was not allocated by NextPartID (counter is %d)", p.ID, b.reserved)
		}
		if _, live := b.idx.files[p.where()]; live || b.addedFiles[p.where()] {
			return invalidf("part %d names file %q, which another part names", p.ID, p.File)
		}
		sh := b.shard(p.Table, p.Shard)
		if sh == nil {
			return invalidf("part %d added to table %d shard %d, which does not exist", p.ID, p.Table, p.Shard)
		}
		p.MinKey = cloneBytes(p.MinKey)
		p.MaxKey = cloneBytes(p.MaxKey)
		p.CreatedAt = normTime(p.CreatedAt)
		j, _ := findPart(sh.parts, p.ID)
		sh.parts = slices.Insert(sh.parts, j, p)
		b.addedIDs[p.ID] = true
		b.addedFiles[p.where()] = true
	}
	return nil
}

func (b *builder) removeShards(e *Edit) error {
	for _, r := range e.RemoveShards {
		if b.next.shard(r.Table, r.Shard) == nil {
			return invalidf("shard %d of table %d removed but does not exist", r.Shard, r.Table)
		}
		t := b.table(r.Table, false)
		i, _ := t.find(r.Shard)
		if n := len(t.shards[i].parts); n > 0 {
			return invalidf("shard %d of table %d removed while it holds %d parts", r.Shard, r.Table, n)
		}
		t.infos = slices.Delete(t.infos, i, i+1)
		t.shards = slices.Delete(t.shards, i, i+1)
		if len(t.infos) == 0 {
			delete(b.next.tables, r.Table)
		}
		b.touched[r.Table] = true
	}
	return nil
}

func (b *builder) setFlushed(e *Edit) error {
	for _, f := range e.SetFlushed {
		sh := b.shard(f.Table, f.Shard)
		if sh == nil {
			return invalidf("flushed commit set for table %d shard %d, which does not exist", f.Table, f.Shard)
		}
		if f.Commit < sh.flushed {
			return invalidf("flushed commit of table %d shard %d moves back from %d to %d", f.Table, f.Shard, sh.flushed, f.Commit)
		}
		if f.Commit > b.lastCommit() {
			return invalidf("flushed commit %d of table %d shard %d is past the last commit %d", f.Commit, f.Table, f.Shard, b.lastCommit())
		}
		sh.flushed = f.Commit
	}
	return nil
}

func (b *builder) setCatalog(e *Edit) error {
	c := e.Catalog
	if c == nil {
		return nil
	}
	if c.Commit < b.base.catalog.Commit {
		return invalidf("catalog commit moves back from %d to %d", b.base.catalog.Commit, c.Commit)
	}
	if c.Commit > b.lastCommit() {
		return invalidf("catalog commit %d is past the last commit %d", c.Commit, b.lastCommit())
	}
	b.next.catalog = CatalogUpdate{Commit: c.Commit, Data: cloneBytes(c.Data)}
	return nil
}

func (b *builder) transforms(e *Edit) error {
	if len(e.RemoveTransforms) == 0 && len(e.SetTransforms) == 0 {
		return nil
	}
	b.next.transforms = maps.Clone(b.base.transforms)
	removed := map[string]bool{}
	for _, name := range e.RemoveTransforms {
		if b.next.transforms[name] == nil {
			return invalidf("transformation %q removed but has no checkpoint", name)
		}
		delete(b.next.transforms, name)
		removed[name] = true
	}
	for _, t := range e.SetTransforms {
		if t.Name == "" || len(t.Name) > maxNameLen {
			return invalidf("transformation checkpoint name must be 1 to %d bytes, got %d", maxNameLen, len(t.Name))
		}
		if old := b.next.transforms[t.Name]; old != nil && t.Processed < old.Processed {
			return invalidf("transformation %q moves back from commit %d to %d", t.Name, old.Processed, t.Processed)
		}
		if t.Processed > b.lastCommit() {
			return invalidf("transformation %q processed commit %d is past the last commit %d", t.Name, t.Processed, b.lastCommit())
		}
		b.next.transforms[t.Name] = &Transform{Name: t.Name, Processed: t.Processed, State: cloneBytes(t.State)}
	}
	return nil
}

func (b *builder) walCheckpoint(e *Edit) error {
	c := e.WALCheckpoint
	if c == 0 {
		return nil
	}
	if c < b.base.walCheck {
		return invalidf("WAL checkpoint moves back from %d to %d", b.base.walCheck, c)
	}
	if c > b.lastCommit() {
		return invalidf("WAL checkpoint %d is past the last commit %d", c, b.lastCommit())
	}
	b.next.walCheck = c
	return nil
}

func (b *builder) retentionClock(e *Edit) error {
	if t := normTime(e.RetentionClock); t.After(b.base.retClock) {
		b.next.retClock = t
	}
	return nil
}

// checkRanges verifies that the active shards of every table the edit
// reshaped own disjoint hash ranges.
func (b *builder) checkRanges() error {
	for id := range b.touched {
		t := b.next.tables[id]
		if t == nil {
			continue
		}
		if err := checkTableRanges(id, t.infos); err != nil {
			return invalidf("%v", err)
		}
	}
	return nil
}

func checkTableRanges(table uint64, infos []Shard) error {
	for i := range infos {
		if infos[i].State != StateActive {
			continue
		}
		for j := i + 1; j < len(infos); j++ {
			if infos[j].State == StateActive && infos[i].Range.overlaps(infos[j].Range) {
				return fmt.Errorf("table %d: active shards %d %s and %d %s overlap",
					table, infos[i].Shard, infos[i].Range, infos[j].Shard, infos[j].Range)
			}
		}
	}
	return nil
}

// update applies a built edit to the index. It runs only after the edit
// committed.
func (idx *index) update(e *Edit) {
	for _, r := range e.RemoveParts {
		delete(idx.files, idx.ids[r.ID].file)
		delete(idx.ids, r.ID)
	}
	for i := range e.AddParts {
		idx.add(&e.AddParts[i])
	}
}

// cloneBytes copies b, giving nil for an empty slice: what a decoded record
// holds, so a snapshot built by Apply equals one loaded from disk.
func cloneBytes(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return slices.Clone(b)
}

// normTime drops t's monotonic reading and location, as storing and
// loading it would.
func normTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return time.Unix(t.Unix(), int64(t.Nanosecond())).UTC()
}
