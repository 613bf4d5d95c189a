package storage

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/objstore"
	"github.com/strata-db/strata/internal/storage/manifest"
	"github.com/strata-db/strata/internal/storage/part"
	"github.com/strata-db/strata/internal/storage/wal"
	"github.com/strata-db/strata/internal/version"
	"github.com/strata-db/strata/internal/vfs"
)

// ErrCheck is wrapped by every finding of Check and CheckDir that is not
// already a corruption error of a subpackage.
var ErrCheck = errors.New("storage: check failed")

// Check verifies that the open engine's structures agree: the manifest
// (manifest.Check), every live part file's checksums (part.Check), the
// commit list (gapless, times never decreasing), every AS OF index against
// its run (checkAsOf) and only on versioned tables (checkAsOfModes), and
// every memtable's
// recorded resolutions against version.Resolve (invariant 4 of doc.go).
// The WAL is held open by the engine; CheckDir replays it on a closed
// database. Check takes each shard's read lock in turn, so commits go on;
// merges wait until it is done.
func (e *Engine) Check() error {
	// No merge may retire (and delete) a part between reading the
	// manifest and checking its files; merges wait for the check.
	e.mergeMu.Lock()
	defer e.mergeMu.Unlock()
	var errs []error
	if err := e.man.Check(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, checkParts(e.fs, e.dir, e.man.Snapshot())...)
	// The published parts and the manifest's change together under the
	// apply lock (flush, merge), so they are compared under it.
	e.ap.Lock()
	st := e.cur.Load()
	ms := e.man.Snapshot()
	e.ap.Unlock()
	errs = append(errs, checkPublishedParts(st, ms)...)
	errs = append(errs, checkAsOfModes(st.cat, ms)...)
	errs = append(errs, checkCommits(st.commits)...)
	for id, td := range st.tables {
		t, ok := st.cat.TableByID(id)
		if !ok {
			errs = append(errs, fmt.Errorf("%w: storage for table %d the catalog lacks", ErrCheck, id))
			continue
		}
		for _, sd := range td.shards {
			// Another mode's index is reported by checkAsOfModes.
			if t.Mode == catalog.ModeVersioned {
				if err := checkAsOf(sd); err != nil {
					errs = append(errs, fmt.Errorf("table %s: %w", t.Name, err))
				}
			}
			if sd.keyed == nil {
				continue
			}
			if err := checkKeyed(t, sd.num, sd.keyed, e.horizonFn(t)); err != nil {
				errs = append(errs, err)
			}
			if f := sd.frozen; f != nil {
				if err := checkKeyed(t, sd.num, f.keyed, e.horizonFn(t)); err != nil {
					errs = append(errs, fmt.Errorf("frozen memtable: %w", err))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// CheckDir verifies a database that no engine has open (strata check):
// the manifest, every part file, that AS OF indexes are only on versioned
// tables, and a full replay of the WAL in which every record must decode,
// with its catalog.
func CheckDir(dir string, opts Options) error {
	if opts.FS == nil {
		opts.FS = vfs.OS{}
	}
	man, err := manifest.Open(filepath.Join(dir, manifest.FileName), manifest.Options{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("storage: check %s: %w", dir, err)
	}
	defer man.Close()
	var errs []error
	if err := man.Check(); err != nil {
		errs = append(errs, err)
	}
	ms := man.Snapshot()
	errs = append(errs, checkParts(opts.FS, dir, ms)...)
	if _, data := ms.Catalog(); data != nil {
		cat, err := catalog.Decode(data)
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: manifest catalog: %v", ErrCheck, err))
		} else {
			errs = append(errs, checkAsOfModes(cat, ms)...)
		}
	}
	_, err = wal.Replay(opts.FS, filepath.Join(dir, "wal"), 0, opts.Logger, func(commit uint64, payload []byte) error {
		rec, err := decodeRecord(commit, payload)
		if err != nil {
			return err
		}
		if rec.catalog != nil {
			if _, err := catalog.Decode(rec.catalog); err != nil {
				return fmt.Errorf("commit %d: %w", commit, err)
			}
		}
		return nil
	})
	if err != nil {
		errs = append(errs, fmt.Errorf("storage: check wal: %w", err))
	}
	return errors.Join(errs...)
}

func checkParts(fsys vfs.FS, dir string, ms *manifest.Snapshot) []error {
	var errs []error
	base, err := filepath.Abs(dir)
	if err != nil {
		return []error{fmt.Errorf("storage: check: %w", err)}
	}
	stores := map[string]*objstore.Store{}
	defer func() {
		for _, s := range stores {
			_ = s.Close()
		}
	}()
	for _, id := range ms.Tables() {
		for _, sh := range ms.Shards(id) {
			for _, p := range ms.Parts(id, sh.Shard) {
				if p.OnDisk() {
					path, err := diskPath(base, p.Location, p.File)
					if err == nil {
						err = part.Check(fsys, path)
					}
					if err != nil {
						errs = append(errs, err)
					}
					continue
				}
				// A part moved to an object store (tier.go) is read there.
				s, ok := stores[p.Location]
				if !ok {
					var err error
					if s, err = objstore.Open(context.Background(), p.Location, dir); err != nil {
						errs = append(errs, fmt.Errorf("%w: part %d: %v", ErrCheck, p.ID, err))
						continue
					}
					stores[p.Location] = s
				}
				if err := part.Check(s.FS(), p.File); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	return errs
}

// checkPublishedParts verifies the part lifetime (lifetime.go): every
// published part is the manifest's, named once, alive (its generation's reference
// held), and no reference was released twice; and every manifest part of
// a table the engine serves is published.
func checkPublishedParts(st *state, ms *manifest.Snapshot) []error {
	var errs []error
	if n := leakedReleases.Load(); n > 0 {
		errs = append(errs, fmt.Errorf("%w: %d part references released twice", ErrCheck, n))
	}
	files := map[string]uint64{}
	for id, td := range st.tables {
		for _, sd := range td.shards {
			want := ms.Parts(uint64(id), sd.num)
			if len(want) != len(sd.parts)+len(sd.asof) {
				errs = append(errs, fmt.Errorf("%w: table %d shard %d publishes %d parts and %d AS OF index parts, the manifest names %d",
					ErrCheck, id, sd.num, len(sd.parts), len(sd.asof), len(want)))
			}
			live := map[uint64]bool{}
			for _, p := range want {
				live[p.ID] = true
			}
			for i, pf := range slices.Concat(sd.parts, sd.asof) {
				p := pf.man
				// Index parts repeat the run's rows: one among the parts
				// would be read as versions.
				if index := i >= len(sd.parts); index != (p.Kind == manifest.KindAsOf) {
					errs = append(errs, fmt.Errorf("%w: table %d shard %d publishes part %d of kind %s among its %s",
						ErrCheck, id, sd.num, p.ID, p.Kind, map[bool]string{true: "AS OF index parts", false: "parts"}[index]))
				}
				if !live[p.ID] {
					errs = append(errs, fmt.Errorf("%w: table %d shard %d publishes part %d, which the manifest does not name (a merge input not removed?)",
						ErrCheck, id, sd.num, p.ID))
				}
				if other, dup := files[p.File]; dup {
					errs = append(errs, fmt.Errorf("%w: parts %d and %d both name file %s", ErrCheck, other, p.ID, p.File))
				}
				files[p.File] = p.ID
				if n := pf.refs.held(); n < 1 {
					errs = append(errs, fmt.Errorf("%w: published part %d has %d references (its file may be gone)", ErrCheck, p.ID, n))
				}
			}
		}
	}
	return errs
}

// checkAsOfModes reports every AS OF index part (KindAsOf) the manifest
// names for a shard of a table that is not versioned. Only a versioned
// run has the intervals an index is cut from; reads of other modes never
// look at one, so such a part could only be a wrong manifest edit, and
// checkAsOf, which compares an index with its run, could pass it.
func checkAsOfModes(cat *catalog.Catalog, ms *manifest.Snapshot) []error {
	var errs []error
	for _, id := range ms.Tables() {
		t, ok := cat.TableByID(catalog.TableID(id))
		if !ok || t.Mode == catalog.ModeVersioned {
			continue
		}
		for _, sh := range ms.Shards(id) {
			for _, p := range ms.Parts(id, sh.Shard) {
				if p.Kind == manifest.KindAsOf {
					errs = append(errs, fmt.Errorf("%w: table %s shard %d: AS OF index part %d (%s) on a table in %s mode, which has no versions to index",
						ErrCheck, t.Name, sh.Shard, p.ID, p.File, t.Mode))
				}
			}
		}
	}
	return errs
}

func checkCommits(cs []CommitInfo) []error {
	for i, c := range cs {
		if c.Commit != uint64(i+1) {
			return []error{fmt.Errorf("%w: commit list holds %d at position %d", ErrCheck, c.Commit, i+1)}
		}
		if i > 0 && c.At.Before(cs[i-1].At) {
			return []error{fmt.Errorf("%w: commit %d is dated before commit %d", ErrCheck, c.Commit, c.Commit-1)}
		}
	}
	return nil
}

// checkKeyed re-resolves every key of m, a memtable of shard num of a
// versioned table, with version.Resolve and compares (upsert memtables
// keep only winners, which Resolve cannot replay, so only their order is
// checked).
func checkKeyed(t *catalog.Table, num uint32, m *keyedMem, horizon func(uint64) uint64) error {
	m.ordered()
	m.mu.RLock()
	defer m.mu.RUnlock()
	var ords []version.Ordering
	for _, g := range t.Groups {
		for len(ords) <= int(g.ID) {
			ords = append(ords, version.Ordering{})
		}
		ords[g.ID] = ordering(t, g)
		ords[g.ID].Horizon = horizon
	}
	var prev []byte
	var vs []version.Version
	var ds []version.Delete
	for e := m.list.first(); e != nil; e = e.next[0] {
		if prev != nil && string(prev) >= string(e.key) {
			return fmt.Errorf("%w: table %s shard %d: keys out of order", ErrCheck, t.Name, num)
		}
		prev = e.key
		if !m.versioned {
			continue
		}
		vs, ds = vs[:0], ds[:0]
		for _, gh := range e.groups {
			if int(gh.id) >= len(ords) {
				// A version of a group the catalog no longer lists cannot
				// happen: groups are never dropped.
				return fmt.Errorf("%w: table %s: unknown group %d", ErrCheck, t.Name, gh.id)
			}
			for i := range gh.vers {
				vs = append(vs, gh.vers[i].v)
			}
		}
		for _, p := range e.dels {
			ds = append(ds, version.Delete{Key: e.key, Commit: p.Commit, Seq: p.Seq})
		}
		want, err := version.Resolve(ords, vs, ds)
		if err != nil {
			return fmt.Errorf("%w: table %s shard %d: %v", ErrCheck, t.Name, num, err)
		}
		i := 0
		for _, gh := range e.groups {
			for j := range gh.res {
				w, r := want[i], gh.res[j]
				i++
				if w.State != r.State || w.WonAt != r.WonAt || w.EndedAt != r.EndedAt || w.SupersededBy != r.SupersededBy {
					return fmt.Errorf("%w: table %s shard %d: version at %d.%d recorded %s [%d,%d), rules say %s [%d,%d)",
						ErrCheck, t.Name, num, r.Commit, r.Seq, r.State, r.WonAt, r.EndedAt, w.State, w.WonAt, w.EndedAt)
				}
			}
		}
	}
	return nil
}
