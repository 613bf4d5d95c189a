package manifest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// state is everything load reads from the file.
type state struct {
	snap     *Snapshot
	idx      *index
	reserved uint64
}

// load reads the whole file into a snapshot and an index. It checks each
// record decodes and sits under the key its fields imply; verify checks
// how the records relate.
func load(tx *bolt.Tx) (*state, error) {
	for _, name := range allBuckets {
		if tx.Bucket(name) == nil {
			return nil, corruptf("bucket %q is missing; not a manifest file", name)
		}
	}
	st := &state{snap: emptySnapshot(), idx: newIndex()}
	var in interner
	s := st.snap
	meta := tx.Bucket(bucketMeta)
	format, err := decodeUint(meta.Get(keyFormat), "format")
	if err != nil {
		return nil, err
	}
	if format != storeFormat {
		return nil, fmt.Errorf("manifest: file format %d, this build reads %d", format, storeFormat)
	}
	if st.reserved, err = decodeUint(meta.Get(keyNextPartID), "next part id"); err != nil {
		return nil, err
	}
	if v := meta.Get(keyCatalog); v != nil {
		if s.catalog, err = decodeCatalog(v); err != nil {
			return nil, err
		}
	}
	if v := meta.Get(keyRetention); v != nil {
		n, err := decodeUint(v, "retention clock")
		if err != nil {
			return nil, err
		}
		s.retClock = time.Unix(0, int64(n)).UTC()
	}
	if v := meta.Get(keyWALCheckpoint); v != nil {
		if s.walCheck, err = decodeUint(v, "WAL checkpoint"); err != nil {
			return nil, err
		}
	}

	err = tx.Bucket(bucketShards).ForEach(func(k, v []byte) error {
		sh, err := decodeShard(v)
		if err != nil {
			return err
		}
		if !bytes.Equal(k, shardKey(sh.Table, sh.Shard)) {
			return corruptf("shard %d of table %d stored under key %x", sh.Shard, sh.Table, k)
		}
		t := s.tables[sh.Table]
		if t == nil {
			t = &tableState{}
			s.tables[sh.Table] = t
		}
		// Keys are in (table, shard) order, so appending keeps t sorted.
		t.infos = append(t.infos, sh)
		t.shards = append(t.shards, &shardState{})
		return nil
	})
	if err != nil {
		return nil, err
	}

	err = tx.Bucket(bucketFlushed).ForEach(func(k, v []byte) error {
		if len(k) != 12 {
			return corruptf("flushed key %x", k)
		}
		table, shard := binary.BigEndian.Uint64(k), binary.BigEndian.Uint32(k[8:])
		sh := s.shard(table, shard)
		if sh == nil {
			return corruptf("flushed commit for table %d shard %d, which does not exist", table, shard)
		}
		c, err := decodeUint(v, "flushed")
		if err != nil {
			return err
		}
		sh.flushed = c
		return nil
	})
	if err != nil {
		return nil, err
	}

	// Size every shard's part list and the index before decoding: a pass
	// over the keys alone is cheap, and growing slices of 100,000 parts
	// by doubling costs more than the decoding.
	counts := map[*shardState]int{}
	nparts := 0
	err = tx.Bucket(bucketParts).ForEach(func(k, _ []byte) error {
		if len(k) != 20 {
			return corruptf("part key %x", k)
		}
		// A part in a missing shard is reported by the decoding pass.
		if sh := s.shard(binary.BigEndian.Uint64(k), binary.BigEndian.Uint32(k[8:])); sh != nil {
			counts[sh]++
		}
		nparts++
		return nil
	})
	if err != nil {
		return nil, err
	}
	for sh, n := range counts {
		sh.parts = make([]Part, 0, n)
	}
	st.idx.ids = make(map[uint64]liveEntry, nparts)
	st.idx.files = make(map[string]uint64, nparts)

	err = tx.Bucket(bucketParts).ForEach(func(k, v []byte) error {
		p, err := decodePart(v, &in)
		if err != nil {
			return err
		}
		if !bytes.Equal(k, partKey(p.Table, p.Shard, p.ID)) {
			return corruptf("part %d stored under key %x", p.ID, k)
		}
		sh := s.shard(p.Table, p.Shard)
		if sh == nil {
			return corruptf("%s is in a shard that does not exist", p.Ref())
		}
		if prev, dup := st.idx.ids[p.ID]; dup {
			return corruptf("part id %d is in two shards: %s and %s", p.ID, prev.ref, p.Ref())
		}
		if other, dup := st.idx.files[p.where()]; dup {
			return corruptf("parts %d and %d name the same file %q", other, p.ID, p.File)
		}
		// Keys are in (table, shard, id) order, so appending keeps each
		// shard's parts sorted by id.
		sh.parts = append(sh.parts, p)
		st.idx.add(&p)
		return nil
	})
	if err != nil {
		return nil, err
	}

	if k, _ := tx.Bucket(bucketCommits).Cursor().Last(); len(k) == 8 {
		// Seqs run from 1 without gaps (verify checks), so the last key
		// sizes the slice; a corrupt huge seq is capped.
		s.commits = make([]Commit, 0, min(binary.BigEndian.Uint64(k), 1<<24))
	}
	err = tx.Bucket(bucketCommits).ForEach(func(k, v []byte) error {
		c, err := decodeCommit(v, &in)
		if err != nil {
			return err
		}
		if !bytes.Equal(k, seqKey(c.Seq)) {
			return corruptf("commit %d stored under key %x", c.Seq, k)
		}
		s.commits = append(s.commits, c)
		return nil
	})
	if err != nil {
		return nil, err
	}

	err = tx.Bucket(bucketTransforms).ForEach(func(k, v []byte) error {
		t, err := decodeTransform(string(k), v)
		if err != nil {
			return err
		}
		s.transforms[t.Name] = &t
		return nil
	})
	if err != nil {
		return nil, err
	}
	return st, nil
}

// verify checks the invariants that tie records together (doc.go).
func (st *state) verify() error {
	s := st.snap
	last := uint64(len(s.commits))
	for i := range s.commits {
		c := &s.commits[i]
		if c.Seq != uint64(i)+1 {
			return corruptf("commit %d found where commit %d belongs: seqs must run from 1 without gaps", c.Seq, i+1)
		}
		if !validCommitKind(c.Kind) {
			return corruptf("commit %d has kind %q", c.Seq, c.Kind)
		}
		if c.At.IsZero() {
			return corruptf("commit %d has no time", c.Seq)
		}
		if i > 0 && c.At.Before(s.commits[i-1].At) {
			return corruptf("commit %d is earlier than commit %d", c.Seq, i)
		}
	}
	for id, t := range s.tables {
		if err := checkTableRanges(id, t.infos); err != nil {
			return corruptf("%v", err)
		}
		for i, info := range t.infos {
			if info.Table != id || (i > 0 && t.infos[i-1].Shard >= info.Shard) {
				return corruptf("table %d: shard records out of order", id)
			}
			if !info.Range.valid() || !info.State.valid() {
				return corruptf("table %d shard %d: range %s state %d", id, info.Shard, info.Range, info.State)
			}
			sh := t.shards[i]
			if sh.flushed > last {
				return corruptf("table %d shard %d flushed through %d, past the last commit %d", id, info.Shard, sh.flushed, last)
			}
			for j := range sh.parts {
				p := &sh.parts[j]
				if err := p.validate(); err != nil {
					return corruptf("%v", err)
				}
				if p.Table != id || p.Shard != info.Shard {
					return corruptf("%s listed under table %d shard %d", p.Ref(), id, info.Shard)
				}
				if j > 0 && sh.parts[j-1].ID >= p.ID {
					return corruptf("table %d shard %d: parts out of order", id, info.Shard)
				}
				if p.ID >= st.reserved {
					return corruptf("part id %d is not below the id counter %d", p.ID, st.reserved)
				}
			}
		}
	}
	if st.reserved == 0 {
		return corruptf("part id counter is 0")
	}
	if s.catalog.Commit > last {
		return corruptf("catalog commit %d is past the last commit %d", s.catalog.Commit, last)
	}
	if s.walCheck > last {
		return corruptf("WAL checkpoint %d is past the last commit %d", s.walCheck, last)
	}
	for _, t := range s.transforms {
		if t.Processed > last {
			return corruptf("transformation %q processed %d, past the last commit %d", t.Name, t.Processed, last)
		}
	}
	n := 0
	for _, t := range s.tables {
		for _, sh := range t.shards {
			n += len(sh.parts)
		}
	}
	if n != len(st.idx.ids) || n != len(st.idx.files) {
		return corruptf("%d parts listed but %d ids and %d files indexed", n, len(st.idx.ids), len(st.idx.files))
	}
	return nil
}

// Check verifies the file the way bbolt's Check does (every page reachable
// once, the freelist consistent), then re-reads every record and verifies
// the manifest's invariants (doc.go), and finally that the in-memory
// snapshot equals what the file holds. The first problem found is
// returned, wrapping ErrCorrupt.
func (b *Bolt) Check() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed.Load() {
		return ErrClosed
	}
	// Holding ids too keeps a concurrent NextPartID from moving the
	// counter between the read transaction and the comparison.
	b.ids.Lock()
	defer b.ids.Unlock()
	return b.db.View(func(tx *bolt.Tx) error {
		var errs []error
		for err := range tx.Check() {
			errs = append(errs, err)
		}
		if len(errs) > 0 {
			return fmt.Errorf("%w: bbolt: %w", ErrCorrupt, errors.Join(errs...))
		}
		st, err := load(tx)
		if err != nil {
			return err
		}
		if err := st.verify(); err != nil {
			return err
		}
		if st.reserved != b.ids.reserved {
			return corruptf("part id counter is %d on disk, %d in memory", st.reserved, b.ids.reserved)
		}
		if err := diffSnapshots(b.cur.Load(), st.snap); err != nil {
			return corruptf("memory and disk differ: %v", err)
		}
		return nil
	})
}

// diffSnapshots describes the first difference between two snapshots.
func diffSnapshots(mem, disk *Snapshot) error {
	if len(mem.commits) != len(disk.commits) {
		return fmt.Errorf("%d commits in memory, %d on disk", len(mem.commits), len(disk.commits))
	}
	for i := range mem.commits {
		if !commitEqual(&mem.commits[i], &disk.commits[i]) {
			return fmt.Errorf("commit %d: %+v in memory, %+v on disk", i+1, mem.commits[i], disk.commits[i])
		}
	}
	if mem.catalog.Commit != disk.catalog.Commit || !bytes.Equal(mem.catalog.Data, disk.catalog.Data) {
		return fmt.Errorf("catalog differs (commit %d in memory, %d on disk)", mem.catalog.Commit, disk.catalog.Commit)
	}
	if !mem.retClock.Equal(disk.retClock) {
		return fmt.Errorf("retention clock %s in memory, %s on disk", mem.retClock, disk.retClock)
	}
	if mem.walCheck != disk.walCheck {
		return fmt.Errorf("WAL checkpoint %d in memory, %d on disk", mem.walCheck, disk.walCheck)
	}
	if len(mem.transforms) != len(disk.transforms) {
		return fmt.Errorf("%d transformations in memory, %d on disk", len(mem.transforms), len(disk.transforms))
	}
	for name, m := range mem.transforms {
		d := disk.transforms[name]
		if d == nil || m.Processed != d.Processed || !bytes.Equal(m.State, d.State) {
			return fmt.Errorf("transformation %q differs", name)
		}
	}
	memTables, diskTables := mem.Tables(), disk.Tables()
	if len(memTables) != len(diskTables) {
		return fmt.Errorf("%d tables in memory, %d on disk", len(memTables), len(diskTables))
	}
	for i, id := range memTables {
		if diskTables[i] != id {
			return fmt.Errorf("table %d in memory, %d on disk", id, diskTables[i])
		}
		mt, dt := mem.tables[id], disk.tables[id]
		if len(mt.infos) != len(dt.infos) {
			return fmt.Errorf("table %d: %d shards in memory, %d on disk", id, len(mt.infos), len(dt.infos))
		}
		for j := range mt.infos {
			if mt.infos[j] != dt.infos[j] || mt.shards[j].flushed != dt.shards[j].flushed {
				return fmt.Errorf("table %d shard %d differs", id, mt.infos[j].Shard)
			}
			mp, dp := mt.shards[j].parts, dt.shards[j].parts
			if len(mp) != len(dp) {
				return fmt.Errorf("table %d shard %d: %d parts in memory, %d on disk", id, mt.infos[j].Shard, len(mp), len(dp))
			}
			for k := range mp {
				if !partEqual(&mp[k], &dp[k]) {
					return fmt.Errorf("%s differs", mp[k].Ref())
				}
			}
		}
	}
	return nil
}

func partEqual(a, b *Part) bool {
	return a.Table == b.Table && a.Shard == b.Shard && a.ID == b.ID && a.Level == b.Level &&
		a.Kind == b.Kind && a.Rows == b.Rows && a.Bytes == b.Bytes &&
		a.MinCommit == b.MinCommit && a.MaxCommit == b.MaxCommit &&
		bytes.Equal(a.MinKey, b.MinKey) && bytes.Equal(a.MaxKey, b.MaxKey) &&
		a.File == b.File && a.Location == b.Location && a.CreatedAt.Equal(b.CreatedAt) &&
		a.EpochFrom == b.EpochFrom && a.EpochTo == b.EpochTo && a.ExpiresFrom == b.ExpiresFrom
}

func commitEqual(a, b *Commit) bool {
	if a.Seq != b.Seq || !a.At.Equal(b.At) || a.Kind != b.Kind || a.Rows != b.Rows || len(a.Tables) != len(b.Tables) {
		return false
	}
	for i := range a.Tables {
		if a.Tables[i] != b.Tables[i] {
			return false
		}
	}
	return true
}
