package storage

import (
	"bytes"

	"github.com/strata-db/strata/internal/storage/part"
	"github.com/strata-db/strata/internal/types"
)

// keyStartsSlot is the part.Reader.Derived slot of a block's key starts,
// clear of the key columns' slots (one per ORDER BY column).
const keyStartsSlot = 1 << 16

// keyStarts returns a bitmap of the rows of block bi of pf, loaded in d,
// that start a key (row 0, and each row whose sort key differs from the
// one before). The stream of a merged current run (scanCurrent) walks a
// key's rows (one per group) by it instead of comparing every row's sort
// key with its key's first: ~1 ms of a 100 k-key scan. Like the decoded
// key columns (runScan.blockKeys), it is kept with the block's cached
// chunks when d is a view of them, so a repeated scan computes nothing;
// otherwise it is computed into buf.
func keyStarts(pf *partFile, bi int, d *part.Data, buf []uint64) []uint64 {
	if d.Shared() {
		if v := pf.r.Derived(bi, keyStartsSlot); v != nil && v.Len() == (d.Rows+63)/64 {
			return v.Uint64s()
		}
	}
	words := (d.Rows + 63) / 64
	switch {
	case d.Shared() || cap(buf) < words:
		// A shared bitmap is kept by the cache: never reused.
		buf = make([]uint64, words)
	default:
		buf = buf[:words]
		clear(buf)
	}
	for i := range d.Rows {
		if i == 0 || !bytes.Equal(d.Sort.BytesAt(i), d.Sort.BytesAt(i-1)) {
			buf[i>>6] |= 1 << (uint(i) & 63)
		}
	}
	if !d.Shared() {
		return buf
	}
	v := types.NewVector(types.Of(types.Uint64), words)
	for _, w := range buf {
		v.AppendUint64(w)
	}
	if c := pf.r.KeepDerived(bi, keyStartsSlot, v); c.Type() == v.Type() && c.Len() == words {
		v = c
	}
	return v.Uint64s()
}
