package manifest

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

var t0 = time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)

func openAt(t testing.TB, path string) *Bolt {
	t.Helper()
	b, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func openTemp(t testing.TB) (*Bolt, string) {
	path := filepath.Join(t.TempDir(), "manifest.db")
	return openAt(t, path), path
}

func mustApply(t testing.TB, b *Bolt, e Edit) {
	t.Helper()
	if err := b.Apply(e); err != nil {
		t.Fatal(err)
	}
}

func mustCheck(t testing.TB, b *Bolt) {
	t.Helper()
	if err := b.Check(); err != nil {
		t.Fatal(err)
	}
}

// commits returns n write commits following the store's last one, one
// second apart.
func commits(b *Bolt, n int, tables ...string) []Commit {
	last := b.Snapshot().LastCommit()
	out := make([]Commit, n)
	for i := range out {
		seq := last + uint64(i) + 1
		out[i] = Commit{Seq: seq, At: t0.Add(time.Duration(seq) * time.Second), Kind: CommitWrite, Tables: tables, Rows: seq}
	}
	return out
}

// part allocates an id and returns a valid part of table/shard.
func part(t testing.TB, b *Bolt, table uint64, shard uint32) Part {
	t.Helper()
	id, err := b.NextPartID()
	if err != nil {
		t.Fatal(err)
	}
	return Part{
		Table: table, Shard: shard, ID: id, Kind: KindDelta, Rows: 10, Bytes: 1000,
		MinCommit: 1, MaxCommit: 1, MinKey: []byte("a"), MaxKey: []byte("z"),
		File: fmt.Sprintf("t%d/s%d/%d.parquet", table, shard, id), Location: "local",
		CreatedAt: t0,
	}
}

func oneShard(table uint64) Shard {
	return Shard{Table: table, Shard: 0, Range: FullRange, State: StateActive}
}

// TestEveryRecordSurvivesReopen writes every record kind, closes, reopens,
// and reads each back.
func TestEveryRecordSurvivesReopen(t *testing.T) {
	b, path := openTemp(t)
	lower, upper, _ := FullRange.Split()
	mustApply(t, b, Edit{
		AppendCommits: []Commit{{Seq: 1, At: t0, Kind: CommitDDL, Tables: []string{"a", "b"}}},
		SetShards: []Shard{
			{Table: 1, Shard: 0, Range: lower, State: StateActive},
			{Table: 1, Shard: 1, Range: upper, State: StateActive},
			oneShard(2),
		},
		Catalog: &CatalogUpdate{Commit: 1, Data: []byte("catalog v1")},
	})
	p1, p2, p3 := part(t, b, 1, 0), part(t, b, 1, 1), part(t, b, 2, 0)
	p2.Kind, p2.Level, p2.Location = KindHistory, 3, "s3://bucket/x"
	p3.MinKey, p3.MaxKey = nil, nil // an unbounded part
	mustApply(t, b, Edit{
		AppendCommits: commits(b, 3, "a"),
		AddParts:      []Part{p1, p2, p3},
		SetFlushed:    []Flushed{{Table: 1, Shard: 0, Commit: 3}, {Table: 2, Shard: 0, Commit: 4}},
		SetTransforms: []Transform{{Name: "hourly", Processed: 2, State: []byte("state")}, {Name: "empty"}},
		WALCheckpoint: 3,
	})
	mustCheck(t, b)
	before := b.Snapshot()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}

	b = openAt(t, path)
	mustCheck(t, b)
	s := b.Snapshot()
	if err := diffSnapshots(before, s); err != nil {
		t.Fatal(err)
	}
	if got := s.Tables(); len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Fatalf("tables %v", got)
	}
	if sh := s.Shards(1); len(sh) != 2 || sh[1].Range != upper || sh[1].State != StateActive {
		t.Fatalf("shards %+v", sh)
	}
	if ps := s.Parts(1, 1); len(ps) != 1 || !partEqual(&ps[0], &p2) {
		t.Fatalf("parts of 1/1: %+v, want %+v", ps, p2)
	}
	if ps := s.Parts(2, 0); len(ps) != 1 || ps[0].MinKey != nil || ps[0].ID != p3.ID {
		t.Fatalf("parts of 2/0: %+v", ps)
	}
	if c, d := s.Catalog(); c != 1 || string(d) != "catalog v1" {
		t.Fatalf("catalog %d %q", c, d)
	}
	if got := s.FlushedThrough(1, 0); got != 3 {
		t.Fatalf("flushed 1/0 = %d", got)
	}
	if got := s.FlushedThrough(1, 1); got != 0 {
		t.Fatalf("flushed 1/1 = %d", got)
	}
	if s.WALCheckpoint() != 3 || s.LastCommit() != 4 {
		t.Fatalf("wal %d last %d", s.WALCheckpoint(), s.LastCommit())
	}
	if p, st, ok := s.TransformProgress("hourly"); !ok || p != 2 || string(st) != "state" {
		t.Fatalf("hourly: %d %q %v", p, st, ok)
	}
	if p, st, ok := s.TransformProgress("empty"); !ok || p != 0 || st != nil {
		t.Fatalf("empty: %d %q %v", p, st, ok)
	}
	if _, _, ok := s.TransformProgress("nope"); ok {
		t.Fatal("unknown transformation found")
	}
	if c, ok := s.Commit(1); !ok || c.Kind != CommitDDL || len(c.Tables) != 2 || !c.At.Equal(t0) {
		t.Fatalf("commit 1: %+v", c)
	}
	files := b.LiveFiles()
	if len(files) != 3 {
		t.Fatalf("live files %v", files)
	}
	for _, p := range []Part{p1, p2, p3} {
		if _, ok := files[p.File]; !ok {
			t.Fatalf("%s missing from live files", p.File)
		}
	}
}

// Every edit below breaks one rule after a valid prefix; Apply must refuse
// it and change nothing, in memory or on disk.
func TestInvalidEditChangesNothing(t *testing.T) {
	b, path := openTemp(t)
	lower, upper, _ := FullRange.Split()
	mustApply(t, b, Edit{
		AppendCommits: commits(b, 2),
		SetShards:     []Shard{oneShard(1), {Table: 2, Shard: 0, Range: lower, State: StateActive}},
		Catalog:       &CatalogUpdate{Commit: 2, Data: []byte("c")},
		SetTransforms: []Transform{{Name: "tr", Processed: 2}},
	})
	live := part(t, b, 1, 0)
	mustApply(t, b, Edit{AddParts: []Part{live}, SetFlushed: []Flushed{{1, 0, 2}}, WALCheckpoint: 2})

	fresh := func() Part { return part(t, b, 1, 0) }
	dup := fresh()
	sameFile := fresh()
	sameFile.File = live.File
	badKeys := fresh()
	badKeys.MinKey, badKeys.MaxKey = []byte("b"), []byte("a")
	badCommits := fresh()
	badCommits.MinCommit = 3
	noShard := part(t, b, 1, 9)
	next := commits(b, 1)

	cases := map[string]Edit{
		"remove missing part": {AppendCommits: next, AddParts: []Part{fresh()},
			RemoveParts: []PartRef{{Table: 1, Shard: 0, ID: 999999}}},
		"remove from wrong shard":  {RemoveParts: []PartRef{{Table: 2, Shard: 0, ID: live.ID}}},
		"remove twice":             {RemoveParts: []PartRef{live.Ref(), live.Ref()}},
		"duplicate id in edit":     {AddParts: []Part{dup, dup}},
		"id already live":          {AddParts: []Part{fresh(), live}},
		"id reused after removal":  {RemoveParts: []PartRef{live.Ref()}, AddParts: []Part{live}},
		"id not allocated":         {AddParts: []Part{{Table: 1, ID: 1 << 60, Kind: KindDelta, File: "x", Location: "local"}}},
		"id zero":                  {AddParts: []Part{{Table: 1, ID: 0, Kind: KindDelta, File: "x", Location: "local"}}},
		"file already named":       {AddParts: []Part{sameFile}},
		"min key above max":        {AddParts: []Part{badKeys}},
		"min commit above max":     {AddParts: []Part{badCommits}},
		"no file":                  {AddParts: []Part{{Table: 1, ID: fresh().ID, Kind: KindDelta, Location: "local"}}},
		"unknown kind":             {AddParts: []Part{{Table: 1, ID: fresh().ID, Kind: 9, File: "k", Location: "local"}}},
		"part in missing shard":    {AddParts: []Part{noShard}},
		"commit gap":               {AppendCommits: []Commit{{Seq: 4, At: t0.Add(time.Hour), Kind: CommitWrite}}},
		"commit repeated":          {AppendCommits: []Commit{{Seq: 2, At: t0.Add(time.Hour), Kind: CommitWrite}}},
		"commit time goes back":    {AppendCommits: []Commit{{Seq: 3, At: t0, Kind: CommitWrite}}},
		"commit without time":      {AppendCommits: []Commit{{Seq: 3, Kind: CommitWrite}}},
		"commit kind":              {AppendCommits: []Commit{{Seq: 3, At: t0.Add(time.Hour), Kind: "merge"}}},
		"commit empty table":       {AppendCommits: []Commit{{Seq: 3, At: t0.Add(time.Hour), Kind: CommitDDL, Tables: []string{""}}}},
		"flushed past last":        {AppendCommits: next, SetFlushed: []Flushed{{1, 0, 4}}},
		"flushed moves back":       {SetFlushed: []Flushed{{1, 0, 1}}},
		"flushed missing shard":    {SetFlushed: []Flushed{{7, 0, 1}}},
		"catalog moves back":       {Catalog: &CatalogUpdate{Commit: 1}},
		"catalog past last":        {Catalog: &CatalogUpdate{Commit: 3}},
		"wal moves back":           {WALCheckpoint: 1},
		"wal past last":            {WALCheckpoint: 3},
		"transform moves back":     {SetTransforms: []Transform{{Name: "tr", Processed: 1}}},
		"transform past last":      {SetTransforms: []Transform{{Name: "tr2", Processed: 3}}},
		"transform no name":        {SetTransforms: []Transform{{Processed: 1}}},
		"remove unknown transform": {RemoveTransforms: []string{"nope"}},
		"remove shard with parts":  {RemoveShards: []ShardRef{{1, 0}}},
		"remove missing shard":     {RemoveShards: []ShardRef{{1, 5}}},
		"active shards overlap":    {SetShards: []Shard{{Table: 2, Shard: 1, Range: KeyRange{1 << 62, 0}, State: StateActive}}},
		"empty range":              {SetShards: []Shard{{Table: 3, Range: KeyRange{5, 5}, State: StateActive}}},
		"unknown state":            {SetShards: []Shard{{Table: 3, Range: FullRange}}},
	}
	before := b.Snapshot()
	for name, e := range cases {
		err := b.Apply(e)
		if !errors.Is(err, ErrInvalidEdit) {
			t.Errorf("%s: got %v, want ErrInvalidEdit", name, err)
			continue
		}
		if b.Snapshot() != before {
			t.Fatalf("%s: snapshot replaced by a refused edit", name)
		}
		if err := diffSnapshots(before, b.Snapshot()); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	mustCheck(t, b)

	// A valid edit after all the refused ones still works, including the
	// upper half of table 2 that the overlapping shard could not take.
	mustApply(t, b, Edit{
		AppendCommits: next,
		SetShards:     []Shard{{Table: 2, Shard: 1, Range: upper, State: StateActive}},
		AddParts:      []Part{fresh()},
	})
	after := b.Snapshot()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b = openAt(t, path)
	mustCheck(t, b)
	if err := diffSnapshots(after, b.Snapshot()); err != nil {
		t.Fatal(err)
	}
}

func TestSnapshotsAreImmutable(t *testing.T) {
	b, _ := openTemp(t)
	mustApply(t, b, Edit{AppendCommits: commits(b, 1), SetShards: []Shard{oneShard(1), oneShard(2)}})
	p1 := part(t, b, 1, 0)
	mustApply(t, b, Edit{AddParts: []Part{p1}})
	s1 := b.Snapshot()

	// Merge p1 into p2, move the flush mark, add commits and a catalog.
	p2 := part(t, b, 1, 0)
	p2.Level = 1
	other := part(t, b, 2, 0)
	mustApply(t, b, Edit{
		AppendCommits: commits(b, 2),
		RemoveParts:   []PartRef{p1.Ref()},
		AddParts:      []Part{p2, other},
		SetFlushed:    []Flushed{{1, 0, 3}},
		Catalog:       &CatalogUpdate{Commit: 3, Data: []byte("v2")},
		SetTransforms: []Transform{{Name: "t", Processed: 1}},
	})
	s2 := b.Snapshot()

	if ps := s1.Parts(1, 0); len(ps) != 1 || ps[0].ID != p1.ID {
		t.Fatalf("old snapshot's parts changed: %+v", ps)
	}
	if len(s1.Parts(2, 0)) != 0 || s1.FlushedThrough(1, 0) != 0 || s1.LastCommit() != 1 {
		t.Fatal("old snapshot changed")
	}
	if c, d := s1.Catalog(); c != 0 || d != nil {
		t.Fatal("old snapshot's catalog changed")
	}
	if _, _, ok := s1.TransformProgress("t"); ok {
		t.Fatal("old snapshot sees a later transformation")
	}
	if ps := s2.Parts(1, 0); len(ps) != 1 || ps[0].ID != p2.ID || ps[0].Level != 1 {
		t.Fatalf("new snapshot's parts: %+v", ps)
	}

	// An append to a returned commit slice cannot reach a later snapshot.
	cs := s2.Commits(1, 2)
	_ = append(cs, Commit{Seq: 99})
	mustApply(t, b, Edit{AppendCommits: commits(b, 1)})
	if c, _ := b.Snapshot().Commit(3); c.Seq != 3 {
		t.Fatalf("commit 3 is %+v", c)
	}
	if got := s2.Commits(0, 100); len(got) != 3 {
		t.Fatalf("Commits(0, 100) of a 3-commit snapshot returned %d", len(got))
	}
	if got := s2.Commits(3, 2); got != nil {
		t.Fatalf("empty range returned %v", got)
	}

	// A caller's edit slices are copied: changing them later changes
	// nothing stored.
	p3 := part(t, b, 2, 0)
	edit := Edit{AddParts: []Part{p3}}
	mustApply(t, b, edit)
	edit.AddParts[0].MinKey[0] = 'X'
	edit.AddParts[0].Rows = 1
	if got := b.Snapshot().Parts(2, 0)[1]; got.MinKey[0] != 'a' || got.Rows != 10 {
		t.Fatalf("stored part aliases the edit: %+v", got)
	}
	mustCheck(t, b)
}

func TestCommitAtOrBefore(t *testing.T) {
	b, path := openTemp(t)
	at := []time.Time{t0, t0, t0.Add(time.Second), t0.Add(5 * time.Second)}
	var cs []Commit
	for i, a := range at {
		cs = append(cs, Commit{Seq: uint64(i) + 1, At: a.In(time.FixedZone("X", 3600)), Kind: CommitWrite})
	}
	mustApply(t, b, Edit{AppendCommits: cs})
	check := func(s *Snapshot) {
		t.Helper()
		cases := []struct {
			t    time.Time
			want uint64 // 0: none
		}{
			{t0.Add(-time.Nanosecond), 0},
			{t0, 2}, // equal times: the newest commit at that time
			{t0.Add(time.Second - 1), 2},
			{t0.Add(time.Second), 3},
			{t0.Add(3 * time.Second), 3},
			{t0.Add(5 * time.Second), 4},
			{t0.Add(24 * time.Hour), 4},
		}
		for _, c := range cases {
			got, ok := s.CommitAtOrBefore(c.t)
			if c.want == 0 {
				if ok {
					t.Errorf("at %s: got commit %d, want none", c.t, got.Seq)
				}
				continue
			}
			if !ok || got.Seq != c.want {
				t.Errorf("at %s: got %d %v, want %d", c.t, got.Seq, ok, c.want)
			}
		}
	}
	check(b.Snapshot())
	if _, ok := emptySnapshot().CommitAtOrBefore(t0); ok {
		t.Fatal("empty snapshot found a commit")
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b = openAt(t, path)
	check(b.Snapshot())
	if c, ok := b.CommitAtOrBefore(t0.Add(2 * time.Second)); !ok || c.Seq != 3 {
		t.Fatalf("Bolt.CommitAtOrBefore: %d %v", c.Seq, ok)
	}
}

func TestSplitAndDropTable(t *testing.T) {
	b, path := openTemp(t)
	mustApply(t, b, Edit{AppendCommits: commits(b, 1), SetShards: []Shard{oneShard(1)}})
	old := part(t, b, 1, 0)
	mustApply(t, b, Edit{AddParts: []Part{old}})

	// Split: retire shard 0, give its halves to shards 1 and 2, and move
	// the data over in the same edit.
	lower, upper, _ := FullRange.Split()
	a, c := part(t, b, 1, 1), part(t, b, 1, 2)
	mustApply(t, b, Edit{
		SetShards: []Shard{
			{Table: 1, Shard: 0, Range: FullRange, State: StateRetired},
			{Table: 1, Shard: 1, Range: lower, State: StateActive},
			{Table: 1, Shard: 2, Range: upper, State: StateActive},
		},
		RemoveParts:  []PartRef{old.Ref()},
		AddParts:     []Part{a, c},
		RemoveShards: []ShardRef{{1, 0}},
	})
	s := b.Snapshot()
	if sh := s.Shards(1); len(sh) != 2 || sh[0].Shard != 1 || sh[1].Shard != 2 {
		t.Fatalf("shards after split: %+v", sh)
	}
	if _, ok := s.Shard(1, 0); ok {
		t.Fatal("retired shard still present")
	}
	mustCheck(t, b)

	// Drop the table: every part and shard goes in one edit.
	mustApply(t, b, Edit{
		AppendCommits: []Commit{{Seq: 2, At: t0.Add(time.Hour), Kind: CommitDDL, Tables: []string{"t"}}},
		RemoveParts:   []PartRef{a.Ref(), c.Ref()},
		RemoveShards:  []ShardRef{{1, 1}, {1, 2}},
	})
	if got := b.Snapshot().Tables(); len(got) != 0 {
		t.Fatalf("tables after drop: %v", got)
	}
	if got := b.LiveFiles(); len(got) != 0 {
		t.Fatalf("live files after drop: %v", got)
	}
	mustCheck(t, b)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b = openAt(t, path)
	if len(b.Snapshot().Tables()) != 0 || b.Snapshot().LastCommit() != 2 {
		t.Fatal("drop did not survive reopen")
	}
	mustCheck(t, b)
}

func TestPartIDsNeverRepeat(t *testing.T) {
	b, path := openTemp(t)
	seen := map[uint64]bool{}
	var last uint64
	for round := range 3 {
		for range idBlock + 3 {
			id, err := b.NextPartID()
			if err != nil {
				t.Fatal(err)
			}
			if seen[id] || id <= last {
				t.Fatalf("round %d: id %d after %d", round, id, last)
			}
			seen[id], last = true, id
		}
		// Close without using the ids, as a crash would.
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		b = openAt(t, path)
	}
	mustCheck(t, b)
}

func TestLockedFile(t *testing.T) {
	_, path := openTemp(t)
	start := time.Now()
	_, err := Open(path, Options{LockTimeout: 200 * time.Millisecond})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second open: %v, want ErrLocked", err)
	}
	if !strings.Contains(err.Error(), path) {
		t.Fatalf("error does not name the file: %v", err)
	}
	// bbolt polls the lock every 50ms and may give up one poll early.
	if d := time.Since(start); d < 100*time.Millisecond || d > 3*time.Second {
		t.Fatalf("waited %s for a 200ms lock timeout", d)
	}
}

func TestReadOnlyAndClosed(t *testing.T) {
	b, path := openTemp(t)
	mustApply(t, b, Edit{AppendCommits: commits(b, 2)})
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Apply(Edit{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Apply after Close: %v", err)
	}
	if _, err := b.NextPartID(); !errors.Is(err, ErrClosed) {
		t.Fatalf("NextPartID after Close: %v", err)
	}
	if b.Snapshot().LastCommit() != 2 {
		t.Fatal("snapshot unreadable after Close")
	}

	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if ro.Snapshot().LastCommit() != 2 {
		t.Fatal("read-only store lost commits")
	}
	if err := ro.Apply(Edit{AppendCommits: commits(ro, 1)}); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("read-only Apply: %v", err)
	}
	if err := ro.Check(); err != nil {
		t.Fatal(err)
	}
}

// Records written behind the store's back that break an invariant make Open
// fail with ErrCorrupt.
func TestOpenRejectsCorruptFile(t *testing.T) {
	cases := map[string]func(tx *bolt.Tx) error{
		"part without shard": func(tx *bolt.Tx) error {
			p := Part{Table: 5, ID: 1, Kind: KindDelta, File: "f", Location: "local"}
			return tx.Bucket(bucketParts).Put(partKey(5, 0, 1), encodePart(&p))
		},
		"part under wrong key": func(tx *bolt.Tx) error {
			p := Part{Table: 1, ID: 1, Kind: KindDelta, File: "f", Location: "local"}
			return tx.Bucket(bucketParts).Put(partKey(1, 0, 2), encodePart(&p))
		},
		"part id above counter": func(tx *bolt.Tx) error {
			p := Part{Table: 1, ID: 1 << 50, Kind: KindDelta, File: "f", Location: "local"}
			return tx.Bucket(bucketParts).Put(partKey(1, 0, 1<<50), encodePart(&p))
		},
		"part in two shards": func(tx *bolt.Tx) error {
			s := Shard{Table: 1, Shard: 1, Range: FullRange, State: StateRetired}
			if err := tx.Bucket(bucketShards).Put(shardKey(1, 1), encodeShard(&s)); err != nil {
				return err
			}
			p := Part{Table: 1, Shard: 1, ID: 1, Kind: KindDelta, File: "g", Location: "local"}
			return tx.Bucket(bucketParts).Put(partKey(1, 1, 1), encodePart(&p))
		},
		"commit gap": func(tx *bolt.Tx) error {
			c := Commit{Seq: 5, At: t0.Add(time.Hour), Kind: CommitWrite}
			return tx.Bucket(bucketCommits).Put(seqKey(5), encodeCommit(&c))
		},
		"commit time back": func(tx *bolt.Tx) error {
			c := Commit{Seq: 3, At: t0, Kind: CommitWrite}
			return tx.Bucket(bucketCommits).Put(seqKey(3), encodeCommit(&c))
		},
		"garbage record": func(tx *bolt.Tx) error {
			return tx.Bucket(bucketShards).Put(shardKey(1, 0), []byte{recordFormat, 0xff})
		},
		"overlapping shards": func(tx *bolt.Tx) error {
			s := Shard{Table: 1, Shard: 3, Range: KeyRange{1, 2}, State: StateActive}
			return tx.Bucket(bucketShards).Put(shardKey(1, 3), encodeShard(&s))
		},
		"flushed past last": func(tx *bolt.Tx) error {
			return tx.Bucket(bucketFlushed).Put(shardKey(1, 0), encodeUint(10))
		},
	}
	for name, corrupt := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "m.db")
			b, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			mustApply(t, b, Edit{AppendCommits: commits(b, 2), SetShards: []Shard{oneShard(1)}})
			p := part(t, b, 1, 0)
			mustApply(t, b, Edit{AddParts: []Part{p}})
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			db, err := bolt.Open(path, 0o644, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Update(corrupt); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if b, err := Open(path, Options{}); !errors.Is(err, ErrCorrupt) {
				if err == nil {
					b.Close()
				}
				t.Fatalf("Open: %v, want ErrCorrupt", err)
			}
		})
	}
}

// Check compares memory with disk, so a snapshot that was never written is
// caught.
func TestCheckFindsMemoryDiskDifference(t *testing.T) {
	b, _ := openTemp(t)
	mustApply(t, b, Edit{AppendCommits: commits(b, 1), SetShards: []Shard{oneShard(1)}})
	mustCheck(t, b)
	p := part(t, b, 1, 0)
	next, err := build(b.Snapshot(), b.mu.idx, b.ids.reserved, &Edit{AddParts: []Part{p}})
	if err != nil {
		t.Fatal(err)
	}
	b.cur.Store(next)
	if err := b.Check(); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Check: %v, want ErrCorrupt", err)
	}
}

// BenchmarkApplyFlush measures a flush-sized edit, fsynced: one part, four
// commits and the shard's flushed commit. The shard is held at a steady 16
// parts (as merging would) by retiring the oldest part in the same edit,
// so the copy-on-write cost of the part list stays realistic.
func BenchmarkApplyFlush(b *testing.B) {
	s, _ := openTemp(b)
	mustApply(b, s, Edit{AppendCommits: commits(s, 1), SetShards: []Shard{oneShard(1)}})
	b.ResetTimer()
	for range b.N {
		p := part(b, s, 1, 0)
		cs := commits(s, 4, "events")
		e := Edit{
			AppendCommits: cs,
			AddParts:      []Part{p},
			SetFlushed:    []Flushed{{1, 0, cs[len(cs)-1].Seq}},
		}
		if parts := s.Snapshot().Parts(1, 0); len(parts) >= 16 {
			e.RemoveParts = []PartRef{parts[0].Ref()}
		}
		mustApply(b, s, e)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "edits/s")
}

// A failed bbolt commit leaves the disk state unknown, so the store refuses
// every later edit until reopened (invariant 4).
func TestFailedCommitPoisonsStore(t *testing.T) {
	b, path := openTemp(t)
	mustApply(t, b, Edit{AppendCommits: commits(b, 1)})
	before := b.Snapshot()
	// Pull the file out from under the store, so the next commit fails.
	if err := b.db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Apply(Edit{AppendCommits: commits(b, 1)}); err == nil || errors.Is(err, ErrInvalidEdit) {
		t.Fatalf("Apply on a closed file: %v", err)
	}
	if b.Snapshot() != before {
		t.Fatal("a failed commit published a snapshot")
	}
	if err := b.Apply(Edit{}); !errors.Is(err, ErrFailed) {
		t.Fatalf("Apply after a failed commit: %v, want ErrFailed", err)
	}
	if _, err := b.NextPartID(); !errors.Is(err, ErrFailed) {
		t.Fatalf("NextPartID after a failed commit: %v, want ErrFailed", err)
	}
	b = openAt(t, path)
	if b.Snapshot().LastCommit() != 1 {
		t.Fatalf("reopened at commit %d", b.Snapshot().LastCommit())
	}
}

// Readers take snapshots while a writer applies edits; every snapshot is
// internally consistent and never changes once taken. Run with -race.
func TestConcurrentReaders(t *testing.T) {
	b, _ := openTemp(t)
	mustApply(t, b, Edit{AppendCommits: commits(b, 1), SetShards: []Shard{oneShard(1)}})
	done := make(chan struct{})
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			for {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				s := b.Snapshot()
				n, parts := s.LastCommit(), len(s.Parts(1, 0))
				// Edit k adds commit k+1 and part k, and removes part k-8.
				if want := min(int(n)-1, 8); parts != want {
					errs <- fmt.Errorf("snapshot at commit %d has %d parts, want %d", n, parts, want)
					return
				}
				if s.FlushedThrough(1, 0) != n-1 || len(s.Commits(1, n)) != int(n) {
					errs <- fmt.Errorf("snapshot at commit %d is inconsistent", n)
					return
				}
				if s.LastCommit() != n || len(s.Parts(1, 0)) != parts {
					errs <- fmt.Errorf("snapshot changed while held")
					return
				}
			}
		}()
	}
	var live []PartRef
	for range 100 {
		p := part(t, b, 1, 0)
		e := Edit{AppendCommits: commits(b, 1), AddParts: []Part{p}}
		e.SetFlushed = []Flushed{{1, 0, e.AppendCommits[0].Seq - 1}}
		if len(live) == 8 {
			e.RemoveParts, live = live[:1], live[1:]
		}
		mustApply(t, b, e)
		live = append(live, p.Ref())
	}
	close(done)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	mustCheck(t, b)
}

// BenchmarkOpen measures loading a manifest of 100,000 parts in 64 shards
// and 100,000 commits into memory.
func BenchmarkOpen(b *testing.B) {
	s, path := openTemp(b)
	var shards []Shard
	for i := range uint32(64) {
		shards = append(shards, Shard{Table: 1, Shard: i, Range: KeyRange{uint64(i), uint64(i) + 1}, State: StateRetired})
	}
	mustApply(b, s, Edit{SetShards: shards})
	for range 100 {
		e := Edit{AppendCommits: commits(s, 1000, "events")}
		for j := range 1000 {
			p := part(b, s, 1, uint32(j%64))
			e.AddParts = append(e.AddParts, p)
		}
		mustApply(b, s, e)
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		s, err := Open(path, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if len(s.Snapshot().Parts(1, 0)) != 1600 {
			b.Fatal("parts missing")
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRelocatePart: a part moved to an object store is removed and added
// back under its id in one edit, in its own shard only, and reads back
// relocated after a reopen.
func TestRelocatePart(t *testing.T) {
	b, path := openTemp(t)
	lower, upper, _ := FullRange.Split()
	mustApply(t, b, Edit{
		AppendCommits: []Commit{{Seq: 1, At: t0, Kind: CommitDDL, Tables: []string{"a"}}},
		SetShards:     []Shard{{Table: 1, Shard: 0, Range: lower, State: StateActive}, {Table: 1, Shard: 1, Range: upper, State: StateActive}},
	})
	p := part(t, b, 1, 0)
	mustApply(t, b, Edit{AppendCommits: commits(b, 1, "a"), AddParts: []Part{p}})
	moved := p
	moved.Location, moved.File = "file:cold", "1-0-1.part"
	elsewhere := moved
	elsewhere.Shard = 1
	if err := b.Apply(Edit{RemoveParts: []PartRef{p.Ref()}, AddParts: []Part{elsewhere}}); !errors.Is(err, ErrInvalidEdit) {
		t.Fatalf("re-adding a removed id in another shard: %v", err)
	}
	if err := b.Apply(Edit{AddParts: []Part{moved}}); !errors.Is(err, ErrInvalidEdit) {
		t.Fatalf("adding a live id without removing it: %v", err)
	}
	mustApply(t, b, Edit{RemoveParts: []PartRef{p.Ref()}, AddParts: []Part{moved}})
	mustCheck(t, b)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b = openAt(t, path)
	got := b.Snapshot().Parts(1, 0)
	if len(got) != 1 || got[0].Location != "file:cold" || got[0].File != "1-0-1.part" || got[0].ID != p.ID {
		t.Fatalf("after a reopen: %+v", got)
	}
	if _, live := b.Snapshot().LiveFiles()[p.File]; live {
		t.Fatalf("the local file %s is still named", p.File)
	}
}

// TestVolumeParts relocates a part between two placement volumes, where
// it keeps its file name (R9.6): two volumes may each hold a file of one
// name, one location may not hold two, a volume part's file must stay
// inside the volume, and the database id is set once and kept.
func TestVolumeParts(t *testing.T) {
	b, path := openTemp(t)
	id := b.DatabaseID()
	if len(id) != 32 {
		t.Fatalf("database id %q", id)
	}
	mustApply(t, b, Edit{
		AppendCommits: []Commit{{Seq: 1, At: t0, Kind: CommitDDL, Tables: []string{"a"}}},
		SetShards:     []Shard{{Table: 1, Shard: 0, Range: FullRange, State: StateActive}},
	})
	p := part(t, b, 1, 0)
	p.Location, p.File = VolumePrefix+"/mnt/a", "strata-x/1-0-1.part"
	mustApply(t, b, Edit{AppendCommits: commits(b, 1, "a"), AddParts: []Part{p}})
	q := part(t, b, 1, 0)
	q.Location, q.File = p.Location, p.File
	if err := b.Apply(Edit{AddParts: []Part{q}}); !errors.Is(err, ErrInvalidEdit) {
		t.Fatalf("two parts naming one file on one volume: %v", err)
	}
	out := q
	out.File = "../1-0-2.part"
	if err := b.Apply(Edit{AddParts: []Part{out}}); !errors.Is(err, ErrInvalidEdit) {
		t.Fatalf("a volume file outside its volume: %v", err)
	}
	moved := p
	moved.Location = VolumePrefix + "/mnt/b"
	mustApply(t, b, Edit{RemoveParts: []PartRef{p.Ref()}, AddParts: []Part{moved}})
	mustCheck(t, b)
	if !moved.OnDisk() || (&Part{Location: "file:cold"}).OnDisk() {
		t.Fatal("OnDisk")
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b = openAt(t, path)
	got := b.Snapshot().Parts(1, 0)
	if len(got) != 1 || got[0].Location != moved.Location || got[0].File != moved.File {
		t.Fatalf("after a reopen: %+v", got)
	}
	if b.DatabaseID() != id {
		t.Fatalf("database id %q after a reopen, was %q", b.DatabaseID(), id)
	}
}

// TestRetentionClock keeps the latest clock reading a merge judged
// retention at, across a reopen; an earlier one never moves it back.
func TestRetentionClock(t *testing.T) {
	b, path := openTemp(t)
	if !b.Snapshot().RetentionClock().IsZero() {
		t.Fatal("a new manifest has a retention clock")
	}
	later := t0.Add(time.Hour)
	mustApply(t, b, Edit{AppendCommits: []Commit{{Seq: 1, At: t0, Kind: CommitDDL}}, RetentionClock: later})
	mustApply(t, b, Edit{RetentionClock: t0})
	if got := b.Snapshot().RetentionClock(); !got.Equal(later) {
		t.Fatalf("retention clock %v, want %v", got, later)
	}
	mustCheck(t, b)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b = openAt(t, path)
	if got := b.Snapshot().RetentionClock(); !got.Equal(later) {
		t.Fatalf("after a reopen %v, want %v", got, later)
	}
}
