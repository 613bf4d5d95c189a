package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"
	"unsafe"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
)

// A commit is logged as ONE WAL record (invariant 2 of doc.go). Its payload
// is the writes first, then a trailer, so that the writes can be encoded
// outside the ordering lock and only the trailer (time, catalog) inside it:
//
//	writes section                                  trailer
//	+---------+---------+-----+---------+   +-----+--------+-----+------+----------+------------+
//	| format  | nwrites | w_1 | ... w_n |   | at  | kind   | rows| tbls | catalog  | ckpts | trailerLen |
//	+---------+---------+-----+---------+   +-----+--------+-----+------+----------+-------+------------+
//	  u8 = 1   uvarint                       varint u8      uvarint     uvarint len  opt.    u32 LE
//	                                         unix ns         n×string    + bytes (0 = none)
//
// ckpts, present only in a commit that carries transformation checkpoints
// (Txn.Checkpoints), is uvarint n then n × (name string, processed
// uvarint); a trailer that ends after the catalog has none, as every
// record written before checkpoints existed.
//
// A write is: kind u8, table uvarint, group uvarint, ncols uvarint, per
// column (id uvarint, type), rows uvarint, then column after column every
// row's types.AppendBinary encoding. A type is kind u8, precision u8, scale
// u8, len uvarint, tz string. Strings are uvarint length + bytes.

const recordFormat = 1

// errRecord marks a WAL payload that does not decode: the log's checksums
// passed, so this is a bug or a format this build does not know.
var errRecord = errors.New("storage: malformed commit record")

// commitRecord is a commit as the pipeline applies it: built from a Txn on
// the live path, decoded from the WAL on replay. Both go through the same
// apply code (applyRecord), so every commit exercises what recovery runs.
type commitRecord struct {
	commit  uint64
	at      time.Time
	kind    CommitKind
	tables  []string
	rows    uint64
	catalog []byte // encoded catalog of a DDL commit, nil otherwise
	writes  []Write
	// checkpoints are the transformation checkpoints the commit carries.
	checkpoints []Checkpoint
}

// encodeWrites appends the writes section of a payload.
func encodeWrites(dst []byte, ws []Write) []byte {
	// A commit of many rows is hundreds of KiB: sized up front, the
	// payload is not regrown and copied at every doubling.
	dst = slices.Grow(dst, encodedSizeHint(ws))
	dst = append(dst, recordFormat)
	dst = binary.AppendUvarint(dst, uint64(len(ws)))
	for i := range ws {
		w := &ws[i]
		dst = append(dst, byte(w.Kind))
		dst = binary.AppendUvarint(dst, uint64(w.Table))
		dst = binary.AppendUvarint(dst, uint64(w.Group))
		dst = binary.AppendUvarint(dst, uint64(len(w.Cols)))
		for c, id := range w.Cols {
			dst = binary.AppendUvarint(dst, uint64(id))
			dst = appendType(dst, w.Batch.Cols[c].Type())
		}
		dst = binary.AppendUvarint(dst, uint64(w.Batch.Rows))
		for c := range w.Cols {
			dst = types.AppendBinaryColumn(dst, w.Batch.Cols[c], w.Batch.Rows)
		}
	}
	return dst
}

// encodedSizeHint estimates the bytes encodeWrites appends for ws: a
// value's encoding is its marker and at most 9 bytes of varint, or the
// bytes of a string plus their length.
func encodedSizeHint(ws []Write) int {
	n := 16
	for i := range ws {
		b := ws[i].Batch
		if b == nil {
			continue
		}
		n += 16 + 8*len(ws[i].Cols)
		for _, vec := range b.Cols {
			switch vec.Type().Kind.Class() {
			case types.ClassVarlen:
			case types.ClassWide, types.ClassUUID:
				n += 18 * b.Rows // a guess: wide values are mostly small
				continue
			default:
				n += 10 * b.Rows
				continue
			}
			for r := 0; r < b.Rows && r < vec.Len(); r++ {
				n += 3 + len(vec.BytesAt(r))
			}
		}
	}
	return n
}

// appendTrailer appends the trailer of a payload.
func appendTrailer(dst []byte, at time.Time, kind CommitKind, rows uint64, tables []string, cat []byte, ckpts []Checkpoint) []byte {
	start := len(dst)
	dst = binary.AppendVarint(dst, at.UnixNano())
	dst = append(dst, byte(kind))
	dst = binary.AppendUvarint(dst, rows)
	dst = binary.AppendUvarint(dst, uint64(len(tables)))
	for _, t := range tables {
		dst = appendString(dst, t)
	}
	dst = binary.AppendUvarint(dst, uint64(len(cat)))
	dst = append(dst, cat...)
	if len(ckpts) > 0 {
		dst = binary.AppendUvarint(dst, uint64(len(ckpts)))
		for _, c := range ckpts {
			dst = appendString(dst, c.Name)
			dst = binary.AppendUvarint(dst, c.Processed)
		}
	}
	return binary.LittleEndian.AppendUint32(dst, uint32(len(dst)-start))
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func appendType(dst []byte, t types.Type) []byte {
	dst = append(dst, byte(t.Kind), t.Precision, t.Scale)
	dst = binary.AppendUvarint(dst, uint64(t.Len))
	return appendString(dst, t.TZ)
}

// peek returns row i of vec as a Value without copying a STRING or BYTES
// out of the vector, for encoding on the spot: the Value must not outlive
// the call it is passed to, nor the vector's next Reset.
func peek(vec *types.Vector, i int) types.Value {
	t := vec.Type()
	if t.Kind.Class() != types.ClassVarlen || vec.IsNull(i) {
		return vec.Get(i)
	}
	b := vec.BytesAt(i)
	if t.Kind == types.Bytes {
		return types.NewBytes(b)
	}
	return types.NewString(unsafe.String(unsafe.SliceData(b), len(b)))
}

// decoder reads a payload front to back; the first error sticks.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", errRecord, what)
	}
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	x, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad uvarint")
		return 0
	}
	d.b = d.b[n:]
	return x
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	x, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return x
}

func (d *decoder) byte1() byte {
	if d.err != nil {
		return 0
	}
	if len(d.b) == 0 {
		d.fail("short")
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.fail("short bytes")
		return nil
	}
	s := d.b[:n:n]
	d.b = d.b[n:]
	return s
}

func (d *decoder) typ() types.Type {
	var t types.Type
	t.Kind = types.Kind(d.byte1())
	t.Precision = d.byte1()
	t.Scale = d.byte1()
	t.Len = int32(d.uvarint())
	t.TZ = string(d.bytes())
	return t
}

// decodeRecord decodes a WAL payload. It copies everything it keeps, so the
// payload may be reused afterwards.
func decodeRecord(commit uint64, payload []byte) (*commitRecord, error) {
	if len(payload) < 4 {
		return nil, fmt.Errorf("%w: commit %d: short payload", errRecord, commit)
	}
	tl := int(binary.LittleEndian.Uint32(payload[len(payload)-4:]))
	if tl > len(payload)-4 {
		return nil, fmt.Errorf("%w: commit %d: bad trailer length", errRecord, commit)
	}
	rec := &commitRecord{commit: commit}
	tr := decoder{b: payload[len(payload)-4-tl : len(payload)-4]}
	rec.at = time.Unix(0, tr.varint()).UTC()
	rec.kind = CommitKind(tr.byte1())
	rec.rows = tr.uvarint()
	nt := tr.uvarint()
	if nt > uint64(len(tr.b)) {
		tr.fail("table count")
	}
	for i := uint64(0); i < nt && tr.err == nil; i++ {
		rec.tables = append(rec.tables, string(tr.bytes()))
	}
	if cat := tr.bytes(); len(cat) > 0 {
		rec.catalog = append([]byte(nil), cat...)
	}
	if len(tr.b) > 0 && tr.err == nil {
		n := tr.uvarint()
		if n > uint64(len(tr.b)) {
			tr.fail("checkpoint count")
		}
		for i := uint64(0); i < n && tr.err == nil; i++ {
			rec.checkpoints = append(rec.checkpoints, Checkpoint{Name: string(tr.bytes()), Processed: tr.uvarint()})
		}
	}
	if tr.err == nil && len(tr.b) != 0 {
		tr.fail("trailing bytes")
	}
	if tr.err != nil {
		return nil, fmt.Errorf("commit %d trailer: %w", commit, tr.err)
	}
	d := decoder{b: payload[:len(payload)-4-tl]}
	if f := d.byte1(); f != recordFormat && d.err == nil {
		return nil, fmt.Errorf("%w: commit %d: unknown format %d", errRecord, commit, f)
	}
	nw := d.uvarint()
	if nw > uint64(len(d.b)) {
		d.fail("write count")
		nw = 0
	}
	rec.writes = make([]Write, 0, nw)
	for i := uint64(0); i < nw && d.err == nil; i++ {
		var w Write
		w.Kind = WriteKind(d.byte1())
		w.Table = catalog.TableID(d.uvarint())
		w.Group = catalog.GroupID(d.uvarint())
		nc := d.uvarint()
		if nc > uint64(len(d.b)) {
			d.fail("column count")
			break
		}
		ts := make([]types.Type, nc)
		w.Cols = make([]catalog.ColumnID, nc)
		for c := range w.Cols {
			w.Cols[c] = catalog.ColumnID(d.uvarint())
			ts[c] = d.typ()
		}
		rows := d.uvarint()
		if rows > uint64(len(d.b)) {
			d.fail("row count")
			break
		}
		w.Batch = types.NewBatch(ts, int(rows))
		for c := range w.Cols {
			vec := w.Batch.Cols[c]
			for r := uint64(0); r < rows && d.err == nil; r++ {
				v, rest, err := types.DecodeBinary(ts[c], d.b)
				if err != nil {
					d.err = fmt.Errorf("%w: %v", errRecord, err)
					break
				}
				d.b = rest
				vec.Append(v)
			}
		}
		w.Batch.Rows = int(rows)
		rec.writes = append(rec.writes, w)
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("trailing bytes")
	}
	if d.err != nil {
		return nil, fmt.Errorf("commit %d: %w", commit, d.err)
	}
	return rec, nil
}
