package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage/part"
	"github.com/strata-db/strata/internal/types"
	"github.com/strata-db/strata/internal/version"
)

// Light inputs: resolving a touched key of a merged shard without
// rebuilding every stored row's payload.
//
// The rules consult a version's values only when it ties with a counted
// version on every ordering value (rule 3; version.Step.Tied). So a key's
// part rows are first fed to the rules as light inputs: position, group
// and ordering values (slices of the loaded block's Order column, not
// copied), no payload. When no step ties, the outcome is exactly the one
// the payloads would have given, and only each group's winner has its
// payload rebuilt (reader.partVersion), for the row returned. When a step
// ties, the key is resolved again with every payload (resolveFull). After
// a burst of ingest a scan resolves every key from ~10 stored rows each;
// rebuilding all their payloads was a third of such a scan.
//
// A light input points into its block's Data, so it is used only while
// that block stays loaded: within the resolution of its key. Part cursors
// hand them out only for parts whose blocks end at keys (KeyBlocks), and
// takeLight never loads the block after the key.

// takeLight appends the inputs of key, if it is the next key, as light
// inputs, and moves past them without loading the next block.
func (c *partCursor) takeLight(key []byte, ins []keyInput) ([]keyInput, error) {
	k, err := c.key()
	if err != nil || k == nil || !bytes.Equal(k, key) {
		return ins, err
	}
	d := c.d
	for ; c.row < d.Rows && bytes.Equal(d.Sort.BytesAt(c.row), key); c.row++ {
		i := c.row
		if d.Commit[i] > c.n {
			continue
		}
		if ins, err = c.rd.appendLight(ins, d, c.meta, i, key); err != nil {
			return ins, err
		}
	}
	return ins, nil
}

// appendLight appends row i of d, a row of key, as a light input.
func (rd *reader) appendLight(ins []keyInput, d *part.Data, meta *part.Meta, i int, key []byte) ([]keyInput, error) {
	in := keyInput{pos: version.Pos{Commit: d.Commit[i], Seq: d.Seq[i]}, tomb: d.Tomb[i], group: catalog.GroupID(d.Group[i]),
		d: d, meta: meta, row: int32(i)}
	if !in.tomb {
		in.mv.v = version.Version{Key: key, Group: version.GroupID(in.group), Commit: in.pos.Commit, Seq: in.pos.Seq}
		order, err := rd.orderOf(d, meta, i)
		if err != nil {
			return ins, err
		}
		in.mv.v.Order = order
	}
	return append(ins, in), nil
}

// orderOf returns the ordering values of row i of d as slices of its
// Order column, in slots from the arena.
func (rd *reader) orderOf(d *part.Data, meta *part.Meta, i int) ([][]byte, error) {
	ob := d.Order.BytesAt(i)
	count := 0
	for rest := ob; len(rest) > 0; count++ {
		l, n := binary.Uvarint(rest)
		if n <= 0 || l > uint64(len(rest)-n) {
			return nil, fmt.Errorf("storage: table %s: %w: ordering values of part %d", rd.t.Name, types.ErrCorrupt, meta.Part)
		}
		rest = rest[n+int(l):]
	}
	slots := rd.arena.orderSlots(count)
	for k := 0; len(ob) > 0; k++ {
		l, n := binary.Uvarint(ob)
		slots[k] = ob[n : n+int(l) : n+int(l)]
		ob = ob[n+int(l):]
	}
	return slots, nil
}

// fillPayload turns a light input into a whole one: its payload rebuilt
// from its row, and its ordering values copied out of the block.
func (rd *reader) fillPayload(in *keyInput, key []byte, lays map[string]*layout) error {
	if in.d == nil {
		return nil
	}
	if !in.tomb {
		mv, err := rd.partVersion(in.d, in.meta, int(in.row), key, lays)
		if err != nil {
			return err
		}
		in.mv = mv
	}
	in.d, in.meta = nil, nil
	return nil
}

// emptyLayout is the layout of a winner whose group the read does not
// return: no payload is rebuilt for it, only its existence counts.
var emptyLayout = &layout{}

// resolveLight resolves key from ins (in position order, some light)
// without their payloads and appends its row at n. It reports false,
// having emitted nothing, when a step tied (version.Step.Tied): the
// payloads decide, and the caller resolves the key again with them.
// load, when not nil, is called with a winner's light input before its
// payload is rebuilt: a lookup reads the row's columns only then.
func (rd *reader) resolveLight(key []byte, ins []keyInput, n uint64, versioned bool, lays map[string]*layout, load func(*keyInput) error) (bool, error) {
	rd.scratchMem.tied = false
	e, err := rd.resolveKey(key, ins, versioned)
	if err != nil || rd.scratchMem.tied {
		return false, err
	}
	rd.lookupGroups()
	for gi := range e.groups {
		g := &e.groups[gi]
		w := g.winnerAt(n)
		if w < 0 || g.vers[w].lay() != nil {
			continue
		}
		if !rd.lookupAll && !slices.Contains(rd.lookupWant, g.id) {
			g.vers[w].v.Layout = emptyLayout
			continue
		}
		p := g.vers[w].v.Pos()
		for i := range ins {
			if in := &ins[i]; in.d != nil && !in.tomb && in.group == g.id && in.pos == p {
				if load != nil {
					if err := load(in); err != nil {
						return false, err
					}
				}
				if g.vers[w], err = rd.partVersion(in.d, in.meta, int(in.row), key, lays); err != nil {
					return false, err
				}
				break
			}
		}
		if g.vers[w].lay() == nil {
			return false, fmt.Errorf("storage: table %s: no input at the winner's position %v", rd.t.Name, p)
		}
	}
	_, err = rd.emitCurrent(e, n)
	return err == nil, err
}

// inputColumns returns the table columns a merged read decodes from a
// newer part to resolve keys: every column when the read returns _commit
// (every group's winner counts), else only the columns of the groups whose
// columns it returns, whole (lookupGroups: repeats compare whole
// payloads), in the part's column order, which is the order partVersion
// encodes payloads in.
func (rd *reader) inputColumns(meta *part.Meta) []catalog.ColumnID {
	rd.lookupGroups()
	var ids []catalog.ColumnID
	for _, c := range meta.Columns {
		if rd.lookupAll {
			ids = append(ids, c.ID)
			continue
		}
		if cc, ok := rd.t.AnyColumn(c.ID); ok && slices.Contains(rd.lookupWant, cc.Group) {
			ids = append(ids, c.ID)
		}
	}
	return ids
}
