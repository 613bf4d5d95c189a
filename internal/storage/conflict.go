package storage

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
)

// Read-modify-write statements (UPDATE, DELETE, INSERT … ON CONFLICT)
// write what they computed from a snapshot; a commit of the same key
// between that snapshot and their own would be overwritten unseen (a lost
// update: sixteen sessions running UPDATE ctr SET v = v + 1 would leave v
// far short of their count). Such a write carries the commit it read at
// (Write.ReadAt), and Commit refuses it with ErrConflict if a commit after
// ReadAt wrote one of its keys; the session runs the statement again on a
// newer snapshot, or fails the transaction's COMMIT with 40001.
//
// Knowing which keys later commits wrote costs every commit a hash per row
// and a map entry, which ingest (blind writes, settled by the version rules
// whatever the interleaving, R3) must not pay for nothing. So the keys are
// recorded only while someone may check them: a reader that will write
// with ReadAt first registers a Watch, which makes every commit numbered
// from then on record its keys (table, key encoding and group, hashed; a
// hash collision only makes a false conflict, which a retry clears) and
// itself records the commits numbered before it and not yet published,
// so that every commit after a snapshot taken next is recorded. With no
// Watch open, a commit reads one atomic counter and records nothing.

// ErrConflict is returned by Commit when a write with ReadAt set has a key
// that a commit after ReadAt wrote. Nothing is written and no number
// taken; the caller reads again and retries.
var ErrConflict = errors.New("storage: a key the statement read was written by a later commit")

// keySeed seeds the hashes of written keys; one per process is enough,
// since the hashes never leave it.
var keySeed = maphash.MakeSeed()

// keyWatch is the engine's record of the keys commits wrote while Watches
// are open. Guarded by e.pipe's lock; e.watching mirrors len(active) for
// the commits' look before taking it.
type keyWatch struct {
	active map[*Watch]struct{}
	// keys maps a hash of (table, key, group) to the newest commit that
	// wrote it, for commits numbered since the oldest open Watch.
	keys map[uint64]uint64
	// pruneAt is the size of keys at which entries older than every open
	// Watch are dropped (doubling, so pruning is amortized per entry).
	pruneAt int
	// epoch counts the records begun (keys made anew after none was
	// open): a commit in flight recorded in this epoch need not be again.
	epoch uint64
}

// flight is a commit between its number and its return (e.pipe.flying):
// its writes, and the epoch of the record it is in (0: none).
type flight struct {
	writes []Write
	epoch  uint64
}

// minPruneAt is the smallest pruneAt: below it pruning is not worth a walk.
const minPruneAt = 1 << 16

// Watch keeps the keys of every commit after its floor recorded while it
// is open, so that writes read at a snapshot taken after Engine.Watch
// returns can be checked (Write.ReadAt). Release it once those writes are
// committed or abandoned.
type Watch struct {
	e     *Engine
	floor uint64 // commits from floor on are recorded
}

// Watch registers a Watch: every commit after a snapshot taken once it
// returns has its keys recorded. Those numbered from now on record them
// as they take their number; those numbered before and not yet published
// (in their fsync: e.pipe.flying holds every commit between its number
// and its publication) are recorded here, so the caller need not wait
// for them.
func (e *Engine) Watch() (*Watch, error) {
	w := &Watch{e: e}
	e.pipe.Lock()
	defer e.pipe.Unlock()
	if e.pipe.closed {
		return nil, ErrClosed
	}
	if e.kw.active == nil {
		e.kw.active = map[*Watch]struct{}{}
	}
	if e.kw.keys == nil {
		e.kw.keys = map[uint64]uint64{}
		e.kw.pruneAt = minPruneAt
		e.kw.epoch++
	}
	e.kw.active[w] = struct{}{}
	e.watching.Add(1)
	// Every commit after the published one is in flying, or takes its
	// number after this: a snapshot taken from now on is at w.floor − 1
	// or later.
	w.floor = e.cur.Load().commit + 1
	var keys commitKeys
	for seq, f := range e.pipe.flying {
		if seq >= w.floor && f.epoch != e.kw.epoch {
			keys.hashKeys(e.pipe.cat, f.writes)
			e.recordLocked(&keys, seq)
			f.epoch = e.kw.epoch
			e.pipe.flying[seq] = f
		}
	}
	return w, nil
}

// landed ends commit seq's stay in e.pipe.flying once it is published or
// failed: the caller may reuse its writes' batches from then on, so a
// Watch must not read them after.
func (e *Engine) landed(seq uint64) {
	e.pipe.Lock()
	delete(e.pipe.flying, seq)
	e.pipe.Unlock()
}

// Release ends the Watch; once none is open the recorded keys are dropped.
// Releasing twice is harmless.
func (w *Watch) Release() {
	e := w.e
	e.pipe.Lock()
	defer e.pipe.Unlock()
	if _, ok := e.kw.active[w]; !ok {
		return
	}
	delete(e.kw.active, w)
	e.watching.Add(-1)
	if len(e.kw.active) == 0 {
		e.kw.keys = nil
	}
}

// OpenWatches returns how many Watches are open (for tests and
// diagnostics: a Watch left open makes every commit record its keys).
func (e *Engine) OpenWatches() int { return int(e.watching.Load()) }

// commitKeys is the key hashes of a commit's writes: write i's rows are
// hashes[bounds[i]:bounds[i+1]]. A write without keys (an append table's,
// or one naming a table the catalog lacks) has none.
type commitKeys struct {
	ready  bool
	hashes []uint64
	bounds []int
}

// hashKeys fills k for writes, by the tables of cat. A version write's
// row is one hash of (table, key, group): attribute groups are versioned
// apart (R4), so a write of one group does not outdate a read-modify-
// write of another (an UPDATE of a group beside ingest of another, or of
// a group a transformation maintains, R12.3). A delete's row, which ends
// every group of its key (R5.4), and a WholeKey write's are a hash per
// group of the table.
func (k *commitKeys) hashKeys(cat *catalog.Catalog, writes []Write) {
	k.ready = true
	k.hashes = k.hashes[:0]
	k.bounds = append(k.bounds[:0], 0)
	var scratch []byte
	var pos []int
	for i := range writes {
		w := &writes[i]
		t, ok := cat.TableByID(w.Table)
		if ok && t.Keyed() && w.Batch != nil {
			var err error
			if pos, err = keyPositions(t, w, 0, pos[:0]); err == nil {
				for r := 0; r < w.Batch.Rows; r++ {
					buf := binary.LittleEndian.AppendUint32(scratch[:0], uint32(w.Table))
					for _, p := range pos {
						buf = types.AppendKeyAt(buf, w.Batch.Cols[p], r)
					}
					scratch = buf
					if w.Kind != WriteDelete && !w.WholeKey {
						k.hashes = append(k.hashes, maphash.Bytes(keySeed, binary.LittleEndian.AppendUint32(buf, uint32(w.Group))))
						continue
					}
					for _, g := range t.Groups {
						scratch = binary.LittleEndian.AppendUint32(buf, uint32(g.ID))
						k.hashes = append(k.hashes, maphash.Bytes(keySeed, scratch))
					}
				}
			}
		}
		k.bounds = append(k.bounds, len(k.hashes))
	}
}

// checksReads reports whether any of writes carries a ReadAt.
func checksReads(writes []Write) bool {
	for i := range writes {
		if writes[i].ReadAt != 0 {
			return true
		}
	}
	return false
}

// checkConflictsLocked returns ErrConflict if a write with ReadAt has a
// key recorded for a later commit. Called under e.pipe's lock with k
// ready.
func (e *Engine) checkConflictsLocked(writes []Write, k *commitKeys) error {
	for i := range writes {
		at := writes[i].ReadAt
		if at == 0 {
			continue
		}
		if !e.coveredLocked(at) {
			return fmt.Errorf("%w: write %d read at commit %d, which no open Watch covers", ErrInvalidTxn, i, at)
		}
		for _, h := range k.hashes[k.bounds[i]:k.bounds[i+1]] {
			if c := e.kw.keys[h]; c > at {
				e.conflicts.Add(1)
				return fmt.Errorf("%w (commit %d wrote a key read at commit %d)", ErrConflict, c, at)
			}
		}
	}
	return nil
}

// coveredLocked reports whether an open Watch records every commit after
// at.
func (e *Engine) coveredLocked(at uint64) bool {
	for w := range e.kw.active {
		if w.floor <= at+1 {
			return true
		}
	}
	return false
}

// recordLocked records k's keys as written by commit seq, and drops the
// entries no open Watch needs once the record has doubled since the last
// time. Called under e.pipe's lock.
func (e *Engine) recordLocked(k *commitKeys, seq uint64) {
	for _, h := range k.hashes {
		// A Watch records the commits in flight out of order.
		if c, ok := e.kw.keys[h]; !ok || c < seq {
			e.kw.keys[h] = seq
		}
	}
	if len(e.kw.keys) < e.kw.pruneAt {
		return
	}
	oldest := e.pipe.next
	for w := range e.kw.active {
		oldest = min(oldest, w.floor)
	}
	// A check conflicts on an entry newer than its ReadAt, which is at
	// least its Watch's floor − 1: entries older than every floor are
	// never looked at again.
	for h, c := range e.kw.keys {
		if c < oldest {
			delete(e.kw.keys, h)
		}
	}
	e.kw.pruneAt = max(minPruneAt, 2*len(e.kw.keys))
}

// Exclusive waits until no commit is in progress and keeps every other
// commit from starting until release is called: the last resort of a
// statement that lost the race for its keys again and again (a long
// UPDATE of keys that ingest keeps writing would otherwise never commit).
// Its own Commit must set Txn.Exclusive. Commits wait for it as rows
// locked by a PostgreSQL UPDATE make their writers wait. The wait ends
// early with ctx's error (a cancelled statement, its statement_timeout);
// the gate, once taken behind it, is given back at once.
func (e *Engine) Exclusive(ctx context.Context) (release func(), err error) {
	got := make(chan struct{})
	go func() {
		e.gate.Lock()
		close(got)
	}()
	select {
	case <-got:
	case <-ctx.Done():
		go func() {
			<-got
			e.gate.Unlock()
		}()
		return nil, ctx.Err()
	}
	e.gateHeld.Store(true)
	e.exclusives.Add(1)
	return func() {
		e.gateHeld.Store(false)
		e.gate.Unlock()
	}, nil
}
