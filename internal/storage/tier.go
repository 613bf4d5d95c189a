package storage

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/objstore"
	"github.com/strata-db/strata/internal/storage/manifest"
	"github.com/strata-db/strata/internal/storage/part"
	"github.com/strata-db/strata/internal/vfs"
)

// Tiering (SPEC R9.4, docs/tiering.md): a table bound to a storage policy
// with object_store = URL has each part whose newest commit is older than
// move_after (at once when the policy sets none) copied to the object
// store and relocated there in one manifest edit: the part keeps its id
// and its rows, only its Location and File (the object key) change, so no
// read's result changes. Reads then open it through objstore's vfs.FS,
// by ranges; merges read it the same way and write their outputs locally,
// which move again once old enough; a part retired from the object store
// is deleted there by its last holder, as a local one is.
//
// Crash safety: the upload comes first and the manifest edit after, so a
// crash between leaves an object no manifest names (in the store, never
// read) and the part still local; after the edit, the local file the
// manifest no longer names is removed at the next start
// (removeStrayParts), if the crash came before its last holder did.

// CheckObjectStore returns an error when object storage at rawURL cannot
// serve this database (objstore.Supported), for CREATE POLICY to refuse
// it up front.
func (e *Engine) CheckObjectStore(rawURL string) error { return objstore.Supported(rawURL, e.dir) }

// store returns the object store at u, opened once per engine.
func (e *Engine) store(u string) (*objstore.Store, error) {
	e.storesMu.Lock()
	defer e.storesMu.Unlock()
	if s, ok := e.stores[u]; ok {
		return s, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := objstore.Open(ctx, u, e.dir)
	if err != nil {
		return nil, err
	}
	if e.stores == nil {
		e.stores = map[string]*objstore.Store{}
	}
	e.stores[u] = s
	return s, nil
}

// closeStores closes every object store opened.
func (e *Engine) closeStores() {
	e.storesMu.Lock()
	defer e.storesMu.Unlock()
	for _, s := range e.stores {
		_ = s.Close()
	}
	e.stores = nil
}

// partFS returns where part p's file is and its path there.
func (e *Engine) partFS(p manifest.Part) (vfs.FS, string, error) {
	if p.OnDisk() {
		path, err := e.slotPath(p.Location, p.File)
		return e.fs, path, err
	}
	s, err := e.store(p.Location)
	if err != nil {
		return nil, "", fmt.Errorf("storage: part %d: %w", p.ID, err)
	}
	return s.FS(), p.File, nil
}

// tierLoop moves every local part that is due to its table's object
// store. It runs under mergeMu (mergeLoop), so no merge retires a part
// while it is copied.
func (e *Engine) tierLoop(ctx context.Context) error {
	st := e.cur.Load()
	for _, id := range st.tableIDs() {
		t, ok := st.cat.TableByID(id)
		if !ok || t.Policies.Storage == catalog.DefaultPolicyName {
			continue
		}
		p := st.cat.Bound(t, catalog.RoleStorage)
		u, ok := p.Text("object_store")
		if !ok {
			continue
		}
		after, _ := p.Duration("move_after")
		cutoff := e.retentionClock().Add(-after)
		failed := false
		for _, sd := range st.tables[id].shards {
			if failed {
				break
			}
			for _, pf := range sd.parts {
				if !pf.man.OnDisk() || pf.man.MaxCommit == 0 ||
					pf.man.MaxCommit > uint64(len(st.commits)) || st.commits[pf.man.MaxCommit-1].At.After(cutoff) {
					continue
				}
				if err := ctx.Err(); err != nil {
					return err
				}
				if err := e.tierPart(ctx, t, sd.num, pf, u); err != nil {
					if errors.Is(err, errMergeStale) {
						continue
					}
					if errors.Is(err, ErrFailed) || errors.Is(err, context.Canceled) || ctx.Err() != nil {
						return err
					}
					// One store that fails must not stop the merges,
					// AS OF indexes and moves of every other table: the
					// part stays local and is tried again next pass.
					e.log.Warn("storage: moving a part to the object store failed", "table", t.Name, "part", pf.man.ID, "err", err)
					failed = true
					break
				}
			}
		}
	}
	return nil
}

// tierPart copies part pf of shard num of table t to the object store at
// u and relocates it there.
func (e *Engine) tierPart(ctx context.Context, t *catalog.Table, num uint32, pf *partFile, u string) error {
	s, err := e.store(u)
	if err != nil {
		return fmt.Errorf("storage: table %s: %w", t.Name, err)
	}
	if !pf.refs.acquire() {
		return errMergeStale
	}
	defer pf.refs.release()
	key := fmt.Sprintf("%d-%d-%d.part", t.ID, num, pf.man.ID)
	fsys, path, err := e.partFS(pf.man)
	if err != nil {
		return err
	}
	f, err := fsys.Open(path)
	if err != nil {
		return fmt.Errorf("storage: table %s: move part %d: %w", t.Name, pf.man.ID, err)
	}
	err = s.Put(ctx, key, f)
	_ = f.Close()
	if err != nil {
		return fmt.Errorf("storage: table %s: move part %d: %w", t.Name, pf.man.ID, err)
	}
	drop := func() {
		dctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = s.Delete(dctx, key)
	}
	r, err := part.OpenCached(s.FS(), key, e.pages)
	if err != nil {
		drop()
		return fmt.Errorf("storage: table %s: move part %d: %w", t.Name, pf.man.ID, err)
	}
	np := pf.man
	np.Location, np.File = u, key
	moved := newPartFile(s.FS(), key, np, r)
	if err := e.relocate(t.ID, num, pf, moved, "move to the object store"); err != nil {
		_ = r.Close()
		drop()
		return err
	}
	e.log.Debug("storage: moved a part to the object store", "table", t.Name, "shard", num, "part", np.ID, "bytes", np.Bytes, "store", u)
	return nil
}

// partKey matches the object keys tierPart writes.
var partKey = regexp.MustCompile(`^[0-9]+-[0-9]+-[0-9]+\.part$`)

// sweepStores deletes, from every object store a storage policy names, the
// part objects no manifest names: left by a crash between an upload and
// its manifest edit, or by a delete that failed (docs/tiering.md). It
// runs once after Open, on a worker, holding mergeMu so that no move is
// under way between its listing and its deletes; each store gets a
// minute. Object stores are one prefix per database: another database's
// objects there would be deleted too.
func (e *Engine) sweepStores() {
	e.mergeMu.Lock()
	defer e.mergeMu.Unlock()
	st := e.cur.Load()
	live := map[string]map[string]bool{}
	for _, td := range st.tables {
		for _, sd := range td.shards {
			for _, pf := range slices.Concat(sd.parts, sd.asof) {
				if l := pf.man.Location; !pf.man.OnDisk() {
					if live[l] == nil {
						live[l] = map[string]bool{}
					}
					live[l][pf.man.File] = true
				}
			}
		}
	}
	urls := map[string]bool{}
	for _, p := range st.cat.Policies() {
		if u, ok := p.Text("object_store"); ok && p.Role == catalog.RoleStorage {
			urls[u] = true
		}
	}
	for u := range live {
		urls[u] = true
	}
	for u := range urls {
		select {
		case <-e.closing:
			return
		default:
		}
		s, err := e.store(u)
		if err != nil {
			e.log.Warn("storage: object store sweep", "store", u, "err", err)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		keys, err := s.List(ctx)
		if err != nil {
			e.log.Warn("storage: object store sweep", "store", u, "err", err)
		}
		removed := 0
		for _, k := range keys {
			if partKey.MatchString(k) && !live[u][k] {
				if err := s.Delete(ctx, k); err == nil {
					removed++
				}
			}
		}
		cancel()
		if removed > 0 {
			e.log.Info("storage: removed objects no manifest names", "store", u, "objects", removed)
		}
	}
}
