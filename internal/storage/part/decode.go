package part

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/holiman/uint256"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"

	"github.com/strata-db/strata/internal/types"
	"github.com/strata-db/strata/internal/version"
)

// This file turns decoded Parquet pages into Strata columns. The bytes have
// passed their checksums by now, so a mismatch here means a file this
// package did not write; it is still reported as an error, never a panic:
// every slice access below is checked against the counts first.

// kindOf returns the encoding kind of a Parquet physical kind.
func kindOf(k parquet.Kind) encoding.Kind {
	switch k {
	case parquet.Boolean:
		return encoding.Boolean
	case parquet.Int32:
		return encoding.Int32
	case parquet.Int64:
		return encoding.Int64
	case parquet.Float:
		return encoding.Float
	case parquet.Double:
		return encoding.Double
	case parquet.ByteArray:
		return encoding.ByteArray
	case parquet.FixedLenByteArray:
		return encoding.FixedLenByteArray
	}
	return encoding.Undefined
}

// appendFixed appends a page of fixed column f to d.
func appendFixed(d *Data, f int, p parquet.Page) error {
	if len(p.DefinitionLevels()) != 0 || p.Dictionary() != nil {
		return fmt.Errorf("fixed column %s is not a plain required column", fixedNames[f])
	}
	return appendFixedValues(d, f, p.Data(), int(p.NumRows()))
}

// appendFixedValues appends the n values pd of fixed column f to d.
func appendFixedValues(d *Data, f int, pd encoding.Values, n int) error {
	want := encoding.Int64
	switch f {
	case fSort, fOrder:
		want = encoding.ByteArray
	case fGroup, fSeq, fState:
		want = encoding.Int32
	case fTomb:
		want = encoding.Boolean
	}
	if pd.Kind() != want {
		return fmt.Errorf("fixed column %s holds %s values", fixedNames[f], pd.Kind())
	}
	switch f {
	case fSort:
		return appendBytes(d.Sort, &pd, nil, n)
	case fOrder:
		return appendBytes(d.Order, &pd, nil, n)
	case fTomb:
		bits := pd.Boolean()
		if len(bits)*8 < n {
			return fmt.Errorf("short boolean page")
		}
		for i := range n {
			d.Tomb = append(d.Tomb, bits[i>>3]>>(i&7)&1 != 0)
		}
		return nil
	case fGroup, fSeq, fState:
		xs := pd.Uint32()
		if len(xs) != n {
			return fmt.Errorf("page of %d rows holds %d values", n, len(xs))
		}
		switch f {
		case fGroup:
			for _, x := range xs {
				d.Group = append(d.Group, uint16(x))
			}
		case fSeq:
			d.Seq = append(d.Seq, xs...)
		default:
			for _, x := range xs {
				d.State = append(d.State, version.State(x))
			}
		}
		return nil
	}
	xs := pd.Uint64()
	if len(xs) != n {
		return fmt.Errorf("page of %d rows holds %d values", n, len(xs))
	}
	switch f {
	case fCommit:
		d.Commit = append(d.Commit, xs...)
	case fWonAt:
		d.WonAt = append(d.WonAt, xs...)
	case fEndedAt:
		d.EndedAt = append(d.EndedAt, xs...)
	default:
		d.SupersededBy = append(d.SupersededBy, xs...)
	}
	return nil
}

// appendBytes appends n byte-array values to v; defs, when not nil, are
// the definition levels (0 = NULL).
func appendBytes(v *types.Vector, pd *encoding.Values, defs []byte, n int) error {
	data, offs := pd.ByteArray()
	if defs != nil && len(defs) < n {
		return fmt.Errorf("page of %d rows holds %d definition levels", n, len(defs))
	}
	if !slices.Contains(defs[:min(len(defs), n)], 0) {
		// No NULL (a fixed column has no definition levels): the
		// values are packed, and copied at once.
		if len(offs) < n+1 || !v.AppendPacked(data, offs[:n+1]) {
			return fmt.Errorf("byte array offsets out of range")
		}
		return nil
	}
	// The page's bytes bound what is appended: one copy, no regrowth
	// (growing row by row was a tenth of a lookup's time).
	v.Reserve(len(data))
	j := 0
	for i := range n {
		if defs != nil && defs[i] == 0 {
			v.AppendNull()
			continue
		}
		if j+1 >= len(offs) || offs[j] > offs[j+1] || int(offs[j+1]) > len(data) {
			return fmt.Errorf("byte array offsets out of range")
		}
		v.AppendBytes(data[offs[j]:offs[j+1]])
		j++
	}
	return nil
}

// appendPage appends a page of a table column (optional, so with
// definition levels) to v.
func appendPage(v *types.Vector, ph physical, p parquet.Page) error {
	if p.Dictionary() != nil {
		return fmt.Errorf("unexpected dictionary page")
	}
	return appendValues(v, ph, int(p.NumRows()), p.DefinitionLevels(), p.Data())
}

// appendValues appends to v a page's n rows: their definition levels defs
// (0 for NULL, 1 otherwise) and the non-NULL values pd, of physical type
// ph.
func appendValues(v *types.Vector, ph physical, n int, defs []byte, pd encoding.Values) error {
	if len(defs) != n {
		return fmt.Errorf("page of %d rows has %d definition levels", n, len(defs))
	}
	present := 0
	for _, l := range defs {
		if l > 1 {
			return fmt.Errorf("definition level %d", l)
		}
		present += int(l)
	}
	if present == n {
		defs = nil // no NULLs: the loops below skip the level checks
	}
	if pd.Kind() != kindOf(ph.kind) {
		return fmt.Errorf("page holds %s values, want %s", pd.Kind(), ph.kind)
	}
	null := func(i int) bool { return defs != nil && defs[i] == 0 }
	switch v.Type().Kind.Class() {
	case types.ClassInt64:
		if ph.kind == parquet.Int32 {
			xs := pd.Int32()
			if len(xs) != present {
				return errCount(present, len(xs))
			}
			for i, j := 0, 0; i < n; i++ {
				if null(i) {
					v.AppendNull()
				} else {
					v.AppendInt64(int64(xs[j]))
					j++
				}
			}
			return nil
		}
		xs := pd.Int64()
		if len(xs) != present {
			return errCount(present, len(xs))
		}
		for i, j := 0, 0; i < n; i++ {
			if null(i) {
				v.AppendNull()
			} else {
				v.AppendInt64(xs[j])
				j++
			}
		}
	case types.ClassUint64:
		if ph.kind == parquet.Int32 {
			xs := pd.Uint32()
			if len(xs) != present {
				return errCount(present, len(xs))
			}
			for i, j := 0, 0; i < n; i++ {
				if null(i) {
					v.AppendNull()
				} else {
					v.AppendUint64(uint64(xs[j]))
					j++
				}
			}
			return nil
		}
		xs := pd.Uint64()
		if len(xs) != present {
			return errCount(present, len(xs))
		}
		for i, j := 0, 0; i < n; i++ {
			if null(i) {
				v.AppendNull()
			} else {
				v.AppendUint64(xs[j])
				j++
			}
		}
	case types.ClassWide:
		data, size := pd.FixedLenByteArray()
		if size != ph.size || len(data) != present*size {
			return fmt.Errorf("fixed-length page of %d values of %d bytes holds %d bytes of width %d", present, ph.size, len(data), size)
		}
		signed := wideSigned(v.Type())
		var x uint256.Int
		for i, j := 0, 0; i < n; i++ {
			if null(i) {
				v.AppendNull()
				continue
			}
			decodeWide(&x, data[j*size:(j+1)*size], signed)
			v.AppendWide(&x)
			j++
		}
	case types.ClassFloat64:
		if ph.kind == parquet.Float {
			xs := pd.Float()
			if len(xs) != present {
				return errCount(present, len(xs))
			}
			for i, j := 0, 0; i < n; i++ {
				if null(i) {
					v.AppendNull()
				} else {
					v.AppendFloat64(float64(xs[j]))
					j++
				}
			}
			return nil
		}
		xs := pd.Double()
		if len(xs) != present {
			return errCount(present, len(xs))
		}
		for i, j := 0, 0; i < n; i++ {
			if null(i) {
				v.AppendNull()
			} else {
				v.AppendFloat64(xs[j])
				j++
			}
		}
	case types.ClassBool:
		bits := pd.Boolean()
		if len(bits)*8 < present {
			return errCount(present, len(bits)*8)
		}
		for i, j := 0, 0; i < n; i++ {
			if null(i) {
				v.AppendNull()
			} else {
				v.AppendBool(bits[j>>3]>>(j&7)&1 != 0)
				j++
			}
		}
	case types.ClassVarlen:
		if _, offs := pd.ByteArray(); len(offs) != present+1 && !(present == 0 && len(offs) == 0) {
			return errCount(present, len(offs)-1)
		}
		return appendBytes(v, &pd, defs, n)
	case types.ClassUUID:
		data, size := pd.FixedLenByteArray()
		if size != 16 || len(data) != present*16 {
			return fmt.Errorf("UUID page of %d values holds %d bytes of width %d", present, len(data), size)
		}
		var u [16]byte
		for i, j := 0, 0; i < n; i++ {
			if null(i) {
				v.AppendNull()
				continue
			}
			copy(u[:], data[16*j:])
			v.AppendUUID(u)
			j++
		}
	default:
		return fmt.Errorf("type %s cannot be read", v.Type())
	}
	return nil
}

func errCount(want, got int) error {
	return fmt.Errorf("page should hold %d values, holds %d", want, got)
}

// wideSigned reports whether a wide column of type t holds two's
// complement values, which a 16-byte encoding sign-extends.
func wideSigned(t types.Type) bool { return t.Kind.IsSigned() || t.Kind == types.Decimal }

// decodeWide reads a big-endian two's complement integer of 16 or 32 bytes
// into x, sign-extending a signed 16-byte value to 256 bits (the vector's
// form of INT128 and narrow DECIMALs).
func decodeWide(x *uint256.Int, b []byte, signed bool) {
	words := len(b) / 8
	for i := range words {
		x[words-1-i] = binary.BigEndian.Uint64(b[8*i:])
	}
	if words == 2 {
		x[2], x[3] = 0, 0
		if signed && x[1]>>63 != 0 {
			x[2], x[3] = ^uint64(0), ^uint64(0)
		}
	}
}
