package part

import (
	"encoding/binary"
	"errors"

	"github.com/parquet-go/parquet-go/format"
)

// pageHeader is what eachOwnPage reads of a Parquet page header: the
// page's type and sizes, and its DATA_PAGE_V2 header when it has one.
// Decoding it here takes a few dozen nanoseconds where parquet-go's
// reflective Thrift decoder took ~1 µs per page, most of the time spent
// outside decompression on a warm read of a part's fixed columns (9 % of
// BenchmarkReadColumns/all).
type pageHeader struct {
	typ        format.PageType
	unc, comp  int32
	v2         bool
	numValues  int32
	numNulls   int32
	numRows    int32
	encoding   format.Encoding
	defLen     int32
	repLen     int32
	compressed bool // is_compressed, true when absent
}

var errHeader = errors.New("malformed page header")

// Thrift compact protocol field types.
const (
	ctStop   = 0
	ctTrue   = 1
	ctFalse  = 2
	ctByte   = 3
	ctI16    = 4
	ctI32    = 5
	ctI64    = 6
	ctDouble = 7
	ctBinary = 8
	ctList   = 9
	ctSet    = 10
	ctMap    = 11
	ctStruct = 12
)

// maxThriftDepth bounds how deep skip follows nested structures: page
// headers nest three deep (statistics), a malformed one could nest until
// the stack ran out.
const maxThriftDepth = 16

// thriftReader reads Thrift's compact protocol from b.
type thriftReader struct {
	b   []byte
	pos int
}

func (r *thriftReader) byte() (byte, error) {
	if r.pos >= len(r.b) {
		return 0, errHeader
	}
	c := r.b[r.pos]
	r.pos++
	return c, nil
}

func (r *thriftReader) uvarint() (uint64, error) {
	x, k := binary.Uvarint(r.b[r.pos:])
	if k <= 0 {
		return 0, errHeader
	}
	r.pos += k
	return x, nil
}

// i32 reads a zigzag varint that must fit 32 bits.
func (r *thriftReader) i32() (int32, error) {
	x, err := r.uvarint()
	if err != nil || x > 0xFFFFFFFF {
		return 0, errHeader
	}
	return int32(uint32(x>>1) ^ -uint32(x&1)), nil
}

// field reads a field header after the field last: its id and type; type
// ctStop ends the struct.
func (r *thriftReader) field(last int16) (int16, byte, error) {
	c, err := r.byte()
	if err != nil || c == ctStop {
		return 0, ctStop, err
	}
	id := last + int16(c>>4)
	if c>>4 == 0 {
		x, err := r.uvarint()
		if err != nil || x > 0xFFFF {
			return 0, 0, errHeader
		}
		id = int16(uint16(x>>1) ^ -uint16(x&1))
	}
	return id, c & 0x0F, nil
}

// skip passes over a value of type t.
func (r *thriftReader) skip(t byte, depth int) error {
	if depth > maxThriftDepth {
		return errHeader
	}
	switch t {
	case ctTrue, ctFalse:
		return nil
	case ctByte:
		_, err := r.byte()
		return err
	case ctI16, ctI32, ctI64:
		_, err := r.uvarint()
		return err
	case ctDouble:
		if len(r.b)-r.pos < 8 {
			return errHeader
		}
		r.pos += 8
		return nil
	case ctBinary:
		n, err := r.uvarint()
		if err != nil || n > uint64(len(r.b)-r.pos) {
			return errHeader
		}
		r.pos += int(n)
		return nil
	case ctList, ctSet:
		c, err := r.byte()
		if err != nil {
			return err
		}
		n, et := uint64(c>>4), c&0x0F
		if n == 15 {
			if n, err = r.uvarint(); err != nil {
				return err
			}
		}
		// Every element takes a byte at least, booleans included.
		if n > uint64(len(r.b)-r.pos) {
			return errHeader
		}
		for range n {
			if et == ctTrue || et == ctFalse {
				if _, err := r.byte(); err != nil {
					return err
				}
				continue
			}
			if err := r.skip(et, depth+1); err != nil {
				return err
			}
		}
		return nil
	case ctMap:
		n, err := r.uvarint()
		if err != nil || n > uint64(len(r.b)-r.pos) {
			return errHeader
		}
		if n == 0 {
			return nil
		}
		c, err := r.byte()
		if err != nil {
			return err
		}
		for range n {
			if err := r.skipElem(c>>4, depth+1); err != nil {
				return err
			}
			if err := r.skipElem(c&0x0F, depth+1); err != nil {
				return err
			}
		}
		return nil
	case ctStruct:
		return r.eachField(func(_ int16, ft byte) error { return r.skip(ft, depth+1) })
	}
	return errHeader
}

// eachField reads a struct's fields up to its stop, handing each field's
// id and type to fn, which reads or skips its value.
func (r *thriftReader) eachField(fn func(id int16, t byte) error) error {
	var id int16
	for {
		fid, ft, err := r.field(id)
		if err != nil {
			return err
		}
		if ft == ctStop {
			return nil
		}
		if err := fn(fid, ft); err != nil {
			return err
		}
		id = fid
	}
}

// skipElem skips a collection element of type t, a boolean taking a byte.
func (r *thriftReader) skipElem(t byte, depth int) error {
	if t == ctTrue || t == ctFalse {
		_, err := r.byte()
		return err
	}
	return r.skip(t, depth)
}

// readPageHeader decodes the page header at the start of b and returns
// it and the bytes it takes. A field it reads that comes with another
// type than the format's is refused, not skipped: skipped, it would leave
// the field zero and the page read as something it does not say it is.
func readPageHeader(b []byte) (pageHeader, int, error) {
	// Fields left out read as zero, as parquet-go's decoder reads them.
	r := thriftReader{b: b}
	var h pageHeader
	err := r.eachField(func(id int16, ft byte) error {
		var err error
		switch id {
		case 1, 2, 3:
			if ft != ctI32 {
				return errHeader
			}
			var x int32
			x, err = r.i32()
			switch id {
			case 1:
				h.typ = format.PageType(x)
			case 2:
				h.unc = x
			default:
				h.comp = x
			}
		case 8:
			if ft != ctStruct {
				return errHeader
			}
			err = r.dataPageV2(&h)
		default:
			err = r.skip(ft, 1)
		}
		return err
	})
	if err != nil {
		return h, 0, err
	}
	return h, r.pos, nil
}

// dataPageV2 decodes a DataPageHeaderV2 into h.
func (r *thriftReader) dataPageV2(h *pageHeader) error {
	h.v2, h.compressed = true, true
	return r.eachField(func(id int16, ft byte) error {
		var dst *int32
		switch id {
		case 1:
			dst = &h.numValues
		case 2:
			dst = &h.numNulls
		case 3:
			dst = &h.numRows
		case 5:
			dst = &h.defLen
		case 6:
			dst = &h.repLen
		}
		var err error
		switch {
		case dst != nil || id == 4:
			if ft != ctI32 {
				return errHeader
			}
			if dst == nil {
				var x int32
				x, err = r.i32()
				h.encoding = format.Encoding(x)
				return err
			}
			*dst, err = r.i32()
		case id == 7:
			if ft != ctTrue && ft != ctFalse {
				return errHeader
			}
			h.compressed = ft == ctTrue
		default:
			err = r.skip(ft, 2)
		}
		return err
	})
}
