package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage/manifest"
	"github.com/strata-db/strata/internal/storage/part"
	"github.com/strata-db/strata/internal/vfs"
)

// Placement (SPEC R9.6, docs/placement.md): a table bound to a placement
// policy with volumes = (dir, ...) keeps each shard's parts on one of the
// volumes, shard by shard: shard s of table t lives on volume
// (t + s) mod n, so that the shards of one table, and the single shards of
// many tables, spread over the volumes. Flushes, merges, splits and AS OF
// indexes write a shard's new parts on its volume; parts written before
// the policy was bound (or changed, or unbound: the default placement is
// the data directory) are copied to their shard's volume by the
// background merger and relocated in one manifest edit, as tiering moves
// parts to an object store (tier.go). Parts in an object store stay there.
//
// A volume holds this database's parts in its own folder, strata-<id>
// (manifest.Bolt.DatabaseID), so that two databases can share a volume
// and each sweeps only its own files. The write-ahead log, the manifest
// and the memtables stay in the data directory.
//
// A volume path is absolute, or relative to the data directory. An
// absolute volume is never created: it is usually a mount point, and
// creating a missing one would fill the disk under it instead. A relative
// one is a folder of the data directory's disk, created when first
// written. A volume that cannot be written when a part is due there
// (missing, unmounted, full, read-only) gets the part in the data
// directory instead, with a warning, and the background merger moves it
// once the volume is there; system.table_storage_plans counts such parts.

// CheckVolumes returns an error naming the first of a placement policy's
// volumes this database cannot use, for CREATE POLICY to refuse it: a
// relative path outside the data directory, one inside its own folders
// (also through a symbolic link), a path that is a file, two volumes that
// are one directory. A volume that does not exist yet is accepted (parts
// wait in the data directory until it does, docs/placement.md).
func (e *Engine) CheckVolumes(vols []string) error {
	var own []string
	for _, sub := range []string{"parts", "wal"} {
		own = append(own, realPath(filepath.Join(e.absDir, sub)))
	}
	seen := map[string]string{}
	for _, v := range vols {
		dir, err := e.volumeDir(v)
		if err != nil {
			return err
		}
		key := dir
		if dir == "" {
			key = e.absDir
		}
		key = realPath(key)
		for _, o := range own {
			if rel, err := filepath.Rel(o, key); err == nil && filepath.IsLocal(rel) {
				return fmt.Errorf("volume %s is the data directory's own %s: name another folder", v, o)
			}
		}
		if prev, dup := seen[key]; dup {
			return fmt.Errorf("volumes %s and %s are one directory (%s)", prev, v, key)
		}
		seen[key] = v
		if dir == "" {
			continue
		}
		if fi, err := e.fs.Stat(dir); err == nil && !fi.IsDir() {
			return fmt.Errorf("volume %s is a file, not a directory", v)
		}
	}
	return nil
}

// realPath is dir with symbolic links resolved, or cleaned when it does
// not exist (yet).
func realPath(dir string) string {
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		return r
	}
	return filepath.Clean(dir)
}

// volumeDir resolves volume v of a placement policy: "" when it is the
// data directory itself (its parts go in parts/, as without a policy).
// The data directory's own folders cannot be volumes, nor can a relative
// path that leaves the data directory.
func (e *Engine) volumeDir(v string) (string, error) { return resolveVolume(e.absDir, v) }

// resolveVolume is volumeDir for the data directory at the absolute path
// base.
func resolveVolume(base, v string) (string, error) {
	dir := filepath.Clean(v)
	if !filepath.IsAbs(v) {
		if !filepath.IsLocal(v) && dir != "." {
			return "", fmt.Errorf("volume %s: a relative volume is a folder inside the data directory; name an absolute path for another disk", v)
		}
		dir = filepath.Join(base, v)
	}
	rel, err := filepath.Rel(base, dir)
	if err == nil && rel == "." {
		return "", nil
	}
	if err == nil && filepath.IsLocal(rel) {
		first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		if first == "parts" || first == "wal" || first == manifest.FileName || first == "LOCK" {
			return "", fmt.Errorf("volume %s is inside the data directory's own %s: name another folder", v, first)
		}
	}
	return dir, nil
}

// volumeFolder is the folder this database's parts have on a volume.
func (e *Engine) volumeFolder() string { return "strata-" + e.man.DatabaseID() }

// volumeLoc is the Location of parts on volume v: spelled as the policy
// names it, cleaned, so that '/mnt/a' and '/mnt/a/' are one location.
func volumeLoc(v string) string { return manifest.VolumePrefix + filepath.Clean(v) }

// homeOf returns where the new parts of shard num of table t go: the
// manifest Location (LocationLocal, or volumeLoc of its volume;
// LocationLocal for a volume that is the data directory).
func (e *Engine) homeOf(cat *catalog.Catalog, t *catalog.Table, num uint32) string {
	if t.Policies.Placement == catalog.DefaultPolicyName {
		return manifest.LocationLocal
	}
	vols, ok := cat.Bound(t, catalog.RolePlacement).List("volumes")
	if !ok || len(vols) == 0 {
		return manifest.LocationLocal
	}
	v := vols[(uint64(t.ID)+uint64(num))%uint64(len(vols))]
	if dir, err := e.volumeDir(v); err == nil && dir == "" {
		return manifest.LocationLocal
	}
	return volumeLoc(v)
}

// partSlot is where a new part's file goes: the manifest's Location and
// File, and the file's path.
type partSlot struct{ loc, file, path string }

// newPartSlot returns where to write part pid of shard num of table t:
// the shard's volume (homeOf, by the newest catalog), or the data
// directory when it has none or that volume cannot be written now. A
// caller whose write to the slot fails calls slotFailed, so that its
// retry goes to the data directory.
func (e *Engine) newPartSlot(t *catalog.Table, num uint32, pid uint64) partSlot {
	name := fmt.Sprintf("%d-%d-%d.part", t.ID, num, pid)
	cat := e.cur.Load().cat
	if ct, ok := cat.TableByID(t.ID); ok {
		t = ct
	}
	if loc := e.homeOf(cat, t, num); loc != manifest.LocationLocal {
		dir, err := e.volumeReady(loc)
		if err == nil && dir != "" {
			file := e.volumeFolder() + "/" + name
			return partSlot{loc: loc, file: file, path: filepath.Join(dir, filepath.FromSlash(file))}
		}
		if err != nil {
			e.volumeWarn(loc, "storage: a placement volume cannot be written; parts go to the data directory until it can", err)
		}
	}
	return e.localSlot(name)
}

// localSlot is the data directory's slot for a part file name.
func (e *Engine) localSlot(name string) partSlot {
	file := "parts/" + name
	return partSlot{loc: manifest.LocationLocal, file: file, path: filepath.Join(e.dir, filepath.FromSlash(file))}
}

// writeSlot writes part pid of shard num of table t by write(path) at
// newPartSlot's place and, when that is a volume and the write fails,
// once more in the data directory (slotFailed).
func (e *Engine) writeSlot(t *catalog.Table, num uint32, pid uint64, write func(path string) error) (partSlot, error) {
	slot := e.newPartSlot(t, num, pid)
	err := write(slot.path)
	if err != nil && slot.loc != manifest.LocationLocal {
		e.slotFailed(slot, err)
		slot = e.localSlot(filepath.Base(slot.path))
		err = write(slot.path)
	}
	return slot, err
}

// volumeDownFor is how long a volume a part write failed on (full,
// read-only, failing) gets no new parts: the data directory takes them,
// and the background merger tries the volume again after; while parts
// wait for a volume the merger looks that often (expiryWake). A variable
// for tests only.
var volumeDownFor = 30 * time.Second

// slotFailed notes that writing a part to slot failed with err: when the
// slot is on a volume, new parts skip it for volumeDownFor.
func (e *Engine) slotFailed(slot partSlot, err error) {
	if slot.loc == manifest.LocationLocal {
		return
	}
	e.vols.Lock()
	if e.vols.down == nil {
		e.vols.down = map[string]time.Time{}
	}
	e.vols.down[slot.loc] = time.Now().Add(volumeDownFor)
	e.vols.Unlock()
	e.volumeWarn(slot.loc, "storage: writing a part to a placement volume failed; parts go to the data directory for a while", err)
}

// volumeWarn logs that the volume at Location loc failed, at most once a
// minute per volume: a missing volume fails every flush and merger pass.
func (e *Engine) volumeWarn(loc, msg string, err error) {
	e.vols.Lock()
	last, ok := e.vols.warned[loc]
	now := time.Now()
	if ok && now.Sub(last) < time.Minute {
		e.vols.Unlock()
		return
	}
	if e.vols.warned == nil {
		e.vols.warned = map[string]time.Time{}
	}
	e.vols.warned[loc] = now
	e.vols.Unlock()
	e.log.Warn(msg, "volume", strings.TrimPrefix(loc, manifest.VolumePrefix), "err", err)
}

// errVolumeDown is volumeReady's error for a volume a write failed on
// less than volumeDownFor ago.
var errVolumeDown = errors.New("a part write failed there moments ago")

// volumeReady returns the directory of the volume at Location loc ("" for
// the data directory) with this database's folder there made, durable,
// and recorded in the manifest. A folder the manifest says was made but
// that is missing is a volume not mounted: it is an error, never made
// again (on the disk under the mount point). An absolute volume itself is
// never made.
func (e *Engine) volumeReady(loc string) (string, error) {
	v := strings.TrimPrefix(loc, manifest.VolumePrefix)
	dir, err := e.volumeDir(v)
	if err != nil || dir == "" {
		return "", err
	}
	e.vols.Lock()
	until, down := e.vols.down[loc]
	e.vols.Unlock()
	if down && time.Now().Before(until) {
		return "", errVolumeDown
	}
	folder := filepath.Join(dir, e.volumeFolder())
	_, statErr := e.fs.Stat(folder)
	made := e.man.HasVolume(loc)
	switch {
	case statErr == nil && made:
		return dir, nil
	case made:
		return "", fmt.Errorf("this database's folder %s on the volume is missing: is the volume mounted? (%w)", folder, statErr)
	case statErr != nil && filepath.IsAbs(v):
		if _, err := e.fs.Stat(dir); err != nil {
			return "", err
		}
	}
	// Not made yet, or made by a run that stopped before recording it:
	// make it and every missing parent, and make each entry durable.
	if err := e.fs.MkdirAll(folder); err != nil {
		return "", err
	}
	// Up to the volume itself, or for a relative one up to the data
	// directory, whose parents are not ours.
	stop := e.absDir
	if filepath.IsAbs(v) {
		stop = dir
	}
	for d := folder; d != stop && filepath.Dir(d) != d; d = filepath.Dir(d) {
		if err := e.fs.SyncDir(filepath.Dir(d)); err != nil {
			return "", err
		}
	}
	if err := e.man.AddVolume(loc); err != nil {
		return "", err
	}
	return dir, nil
}

// slotPath is the path of file of a part at a Location on a local disk.
func (e *Engine) slotPath(loc, file string) (string, error) { return diskPath(e.absDir, loc, file) }

// diskPath is slotPath for the data directory at the absolute path base.
func diskPath(base, loc, file string) (string, error) {
	dir := base
	if loc != manifest.LocationLocal {
		d, err := resolveVolume(base, strings.TrimPrefix(loc, manifest.VolumePrefix))
		if err != nil {
			return "", err
		}
		if d != "" {
			dir = d
		}
	}
	return filepath.Join(dir, filepath.FromSlash(file)), nil
}

// placeLoop moves every part on a local disk that is not on its shard's
// volume there (homeOf). It runs under mergeMu (mergeLoop), after the
// moves to object stores, so a part due there does not move twice.
func (e *Engine) placeLoop(ctx context.Context) error {
	st := e.cur.Load()
	for _, id := range st.tableIDs() {
		t, ok := st.cat.TableByID(id)
		if !ok {
			continue
		}
	shards:
		for _, sd := range st.tables[id].shards {
			home := e.homeOf(st.cat, t, sd.num)
			for _, list := range [2][]*partFile{sd.parts, sd.asof} {
				for _, pf := range list {
					if pf.man.Location == home || !pf.man.OnDisk() {
						continue
					}
					if err := ctx.Err(); err != nil {
						return err
					}
					if err := e.placePart(t, sd.num, pf, home); err != nil {
						if errors.Is(err, errMergeStale) {
							continue
						}
						if errors.Is(err, ErrFailed) {
							return err
						}
						// A volume that fails leaves the shard where it is
						// until the next pass; other shards go on.
						e.volumeWarn(home, "storage: moving parts to a placement volume failed; they stay where they are until it can", err)
						continue shards
					}
				}
			}
		}
	}
	return nil
}

// partsWaiting reports whether a part of table t is on a local disk
// other than its shard's volume (placeLoop has yet to move it).
func (e *Engine) partsWaiting(st *state, t *catalog.Table) bool {
	td := st.tables[t.ID]
	if td == nil {
		return false
	}
	for _, sd := range td.shards {
		home := e.homeOf(st.cat, t, sd.num)
		for _, list := range [2][]*partFile{sd.parts, sd.asof} {
			for _, pf := range list {
				if pf.man.OnDisk() && pf.man.Location != home {
					return true
				}
			}
		}
	}
	return false
}

// placePart copies part pf of shard num of table t to Location home and
// relocates it there in one manifest edit: the same id and rows, another
// Location and File. The old file goes with its last reader.
func (e *Engine) placePart(t *catalog.Table, num uint32, pf *partFile, home string) error {
	if !pf.refs.acquire() {
		return errMergeStale
	}
	defer pf.refs.release()
	// The copy gets a file name of its own (an unused id's): a part
	// moved away and back while a reader still holds the old file must
	// not overwrite it, nor the old file's removal by its last reader
	// remove the copy; and two spellings of one directory must not copy
	// a file onto itself.
	fresh, err := e.man.NextPartID()
	if err != nil {
		return err
	}
	base := fmt.Sprintf("%d-%d-%d.part", t.ID, num, fresh)
	slot := partSlot{loc: manifest.LocationLocal, file: "parts/" + base}
	if home != manifest.LocationLocal {
		dir, err := e.volumeReady(home)
		if err != nil {
			return err
		}
		if dir != "" {
			slot = partSlot{loc: home, file: e.volumeFolder() + "/" + base}
		}
	}
	if slot.loc == pf.man.Location {
		return nil
	}
	if slot.path, err = e.slotPath(slot.loc, slot.file); err != nil {
		return err
	}
	src, err := e.slotPath(pf.man.Location, pf.man.File)
	if err != nil {
		return err
	}
	if err := copyFile(e.fs, src, slot.path); err != nil {
		if !errors.Is(err, fs.ErrExist) {
			_ = e.fs.Remove(slot.path)
		}
		e.slotFailed(slot, err)
		return fmt.Errorf("storage: table %s: move part %d to %s: %w", t.Name, pf.man.ID, slot.loc, err)
	}
	r, err := part.OpenCached(e.fs, slot.path, e.pages)
	if err != nil {
		_ = e.fs.Remove(slot.path)
		return fmt.Errorf("storage: table %s: move part %d to %s: %w", t.Name, pf.man.ID, slot.loc, err)
	}
	np := pf.man
	np.Location, np.File = slot.loc, slot.file
	moved := newPartFile(e.fs, slot.path, np, r)
	if err := e.relocate(t.ID, num, pf, moved, "move to a placement volume"); err != nil {
		_ = r.Close()
		_ = e.fs.Remove(slot.path)
		return err
	}
	e.log.Debug("storage: moved a part to its placement volume", "table", t.Name, "shard", num, "part", np.ID, "bytes", np.Bytes, "to", slot.loc)
	return nil
}

// relocate publishes moved in place of pf, a part or AS OF index part of
// shard num of table tid, in one manifest edit that removes pf's record
// and adds moved's (the same id, another Location and File): a move to a
// placement volume or an object store. errMergeStale when pf is gone.
func (e *Engine) relocate(tid catalog.TableID, num uint32, pf, moved *partFile, what string) error {
	return e.publishShard(tid, num, what, func(sd *shardData) (manifest.Edit, *shardData, error) {
		parts, asof := sd.parts, sd.asof
		if i := slices.Index(parts, pf); i >= 0 {
			parts = slices.Clone(parts)
			parts[i] = moved
		} else if i := slices.Index(asof, pf); i >= 0 {
			asof = slices.Clone(asof)
			asof[i] = moved
		} else {
			return manifest.Edit{}, nil, errMergeStale
		}
		ed := manifest.Edit{RemoveParts: []manifest.PartRef{pf.man.Ref()}, AddParts: []manifest.Part{moved.man}}
		return ed, &shardData{num: sd.num, rng: sd.rng, keyed: sd.keyed, app: sd.app, frozen: sd.frozen, parts: parts, asof: asof}, nil
	})
}

// copyFile copies src to a new file dst and makes it durable, its
// directory entry too. A dst that exists is an error wrapping
// fs.ErrExist, and is left alone.
func copyFile(fsys vfs.FS, src, dst string) error {
	if _, err := fsys.Stat(dst); err == nil {
		return fmt.Errorf("%s: %w", dst, fs.ErrExist)
	}
	in, err := fsys.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := fsys.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		_ = out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return fsys.SyncDir(filepath.Dir(dst))
}

// removeStrayVolumeParts deletes, from this database's folder on every
// volume it ever made one on (manifest.Bolt.Volumes), a placement policy
// names or a part is on, the part files no manifest part names: a flush,
// merge or move that crashed before its manifest edit, or the old file of
// a move whose last reader a crash came before. Files are compared by
// their directory with symbolic links resolved, so two spellings of one
// volume cannot make a live part look like a stray. A volume that cannot
// be read is skipped with a warning.
func (e *Engine) removeStrayVolumeParts(st *state) error {
	reals := map[string]string{}
	real := func(dir string) string {
		r, ok := reals[dir]
		if !ok {
			r = realPath(dir)
			reals[dir] = r
		}
		return r
	}
	live := map[string]bool{}
	locs := map[string]bool{}
	for _, td := range st.tables {
		for _, sd := range td.shards {
			for _, list := range [2][]*partFile{sd.parts, sd.asof} {
				for _, pf := range list {
					if !pf.man.OnDisk() {
						continue
					}
					p, err := e.slotPath(pf.man.Location, pf.man.File)
					if err != nil {
						return err
					}
					live[filepath.Join(real(filepath.Dir(p)), filepath.Base(p))] = true
					if pf.man.Location != manifest.LocationLocal {
						locs[pf.man.Location] = true
					}
				}
			}
		}
	}
	for _, p := range st.cat.Policies() {
		if vols, ok := p.List("volumes"); ok && p.Role == catalog.RolePlacement {
			for _, v := range vols {
				locs[volumeLoc(v)] = true
			}
		}
	}
	for _, l := range e.man.Volumes() {
		locs[l] = true
	}
	for loc := range locs {
		v := strings.TrimPrefix(loc, manifest.VolumePrefix)
		dir, err := e.volumeDir(v)
		if err != nil || dir == "" {
			continue
		}
		folder := filepath.Join(dir, e.volumeFolder())
		names, err := e.fs.List(folder)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			e.log.Warn("storage: cannot list a placement volume", "volume", v, "err", err)
			continue
		}
		rf := real(folder)
		removed := 0
		for _, n := range names {
			if !partKey.MatchString(n) || live[filepath.Join(rf, n)] {
				continue
			}
			if err := e.fs.Remove(filepath.Join(folder, n)); err != nil {
				return fmt.Errorf("storage: remove stray part %s on volume %s: %w", n, v, err)
			}
			removed++
		}
		if removed > 0 {
			e.log.Info("storage: removed part files no manifest names", "volume", v, "files", removed)
			if err := e.fs.SyncDir(folder); err != nil {
				return err
			}
		}
	}
	return nil
}
