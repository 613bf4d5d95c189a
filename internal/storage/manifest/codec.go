package manifest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// Record encoding.
//
// Every value the manifest stores is one record:
//
//	+---------+-------+-------+-----+
//	| format  | field | field | ... |
//	| 1 byte  |       |       |     |
//	+---------+-------+-------+-----+
//
//	field := key:uvarint value
//	key   := number<<3 | wire
//	wire 0: value is a uvarint
//	wire 2: value is uvarint length, then that many bytes
//
// The wire types are protobuf's, so the bytes can be read with any protobuf
// decoder in a pinch. Fields with a zero value are omitted and decode as
// zero. A reader skips fields whose number it does not know, so a newer
// writer may add fields without breaking an older reader. The format byte
// changes only for an incompatible change; a reader refuses a format it
// does not know rather than misread it.

const (
	recordFormat = 1

	wireVarint = 0
	wireBytes  = 2
)

// ErrCorrupt is returned (wrapped) when stored bytes do not decode or the
// stored structures disagree. Test for it with errors.Is.
var ErrCorrupt = errors.New("manifest: corrupt")

func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// encoder appends fields to a record.
type encoder struct{ b []byte }

func newEncoder(capacity int) encoder {
	b := make([]byte, 1, capacity)
	b[0] = recordFormat
	return encoder{b: b}
}

func (e *encoder) uint(field int, v uint64) {
	if v == 0 {
		return
	}
	e.b = binary.AppendUvarint(e.b, uint64(field)<<3|wireVarint)
	e.b = binary.AppendUvarint(e.b, v)
}

func (e *encoder) int(field int, v int64) {
	// zigzag, so small negative numbers stay short.
	e.uint(field, uint64(v<<1)^uint64(v>>63))
}

func (e *encoder) bytes(field int, v []byte) {
	if len(v) == 0 {
		return
	}
	e.b = binary.AppendUvarint(e.b, uint64(field)<<3|wireBytes)
	e.b = binary.AppendUvarint(e.b, uint64(len(v)))
	e.b = append(e.b, v...)
}

func (e *encoder) string(field int, v string) {
	if len(v) == 0 {
		return
	}
	e.b = binary.AppendUvarint(e.b, uint64(field)<<3|wireBytes)
	e.b = binary.AppendUvarint(e.b, uint64(len(v)))
	e.b = append(e.b, v...)
}

// time stores t as seconds (field) and nanoseconds (field+1) since the Unix
// epoch, which covers every time.Time, unlike UnixNano. The zero time is
// omitted and decodes as the zero time.
func (e *encoder) time(field int, t time.Time) {
	if t.IsZero() {
		return
	}
	e.int(field, t.Unix())
	e.uint(field+1, uint64(t.Nanosecond()))
	if t.Unix() == 0 && t.Nanosecond() == 0 {
		// The epoch itself would encode as nothing and read back as the
		// zero time; mark it present.
		e.uint(field+2, 1)
	}
}

// decoder walks the fields of one record.
type decoder struct {
	b   []byte
	pos int
	// current field
	field int
	wire  int
	num   uint64
	data  []byte
	err   error
}

func newDecoder(b []byte, what string) (decoder, error) {
	if len(b) == 0 {
		return decoder{}, corruptf("%s: empty record", what)
	}
	if b[0] != recordFormat {
		return decoder{}, corruptf("%s: record format %d, this build reads %d", what, b[0], recordFormat)
	}
	return decoder{b: b, pos: 1}, nil
}

// next advances to the next field; it returns false at the end or on error
// (then d.err is set).
func (d *decoder) next() bool {
	if d.pos >= len(d.b) || d.err != nil {
		return false
	}
	key, n := binary.Uvarint(d.b[d.pos:])
	if n <= 0 {
		d.err = corruptf("bad field key at byte %d", d.pos)
		return false
	}
	d.pos += n
	if key>>3 > 1<<20 {
		d.err = corruptf("field number %d out of range", key>>3)
		return false
	}
	d.field, d.wire = int(key>>3), int(key&7)
	switch d.wire {
	case wireVarint:
		v, n := binary.Uvarint(d.b[d.pos:])
		if n <= 0 {
			d.err = corruptf("bad varint for field %d", d.field)
			return false
		}
		d.pos += n
		d.num, d.data = v, nil
	case wireBytes:
		l, n := binary.Uvarint(d.b[d.pos:])
		if n <= 0 || l > uint64(len(d.b)-d.pos-n) {
			d.err = corruptf("bad length for field %d", d.field)
			return false
		}
		d.pos += n
		d.data = d.b[d.pos : d.pos+int(l) : d.pos+int(l)]
		d.pos += int(l)
		d.num = 0
	default:
		d.err = corruptf("unknown wire type %d for field %d", d.wire, d.field)
		return false
	}
	return true
}

// want checks the current field's wire type; a known field with the wrong
// wire type is corruption, not something to skip.
func (d *decoder) want(wire int) bool {
	if d.wire != wire {
		d.err = corruptf("field %d has wire type %d, want %d", d.field, d.wire, wire)
		return false
	}
	return true
}

func (d *decoder) uint() uint64 {
	d.want(wireVarint)
	return d.num
}

func (d *decoder) int() int64 {
	v := d.uint()
	return int64(v>>1) ^ -int64(v&1)
}

func (d *decoder) uintN(bits int) uint64 {
	v := d.uint()
	if bits < 64 && v>>bits != 0 {
		d.err = corruptf("field %d value %d overflows %d bits", d.field, v, bits)
	}
	return v
}

// bytes returns a copy: records alias bbolt's mmap, which is gone when the
// transaction ends.
func (d *decoder) bytes() []byte {
	if !d.want(wireBytes) {
		return nil
	}
	return append([]byte(nil), d.data...)
}

// raw returns the current bytes field without copying; it aliases the
// record.
func (d *decoder) raw() []byte {
	if !d.want(wireBytes) {
		return nil
	}
	return d.data
}

// stringIn returns the current bytes field as a string, shared through in
// when in is not nil.
func (d *decoder) stringIn(in *interner) string {
	if !d.want(wireBytes) {
		return ""
	}
	if in == nil {
		return string(d.data)
	}
	return in.get(d.data)
}

// interner hands out one copy of each string it has seen, up to a bound,
// so that the many parts and commits Open loads share their few distinct
// locations and table names.
type interner struct{ m map[string]string }

const internMax = 1 << 14

func (in *interner) get(b []byte) string {
	if s, ok := in.m[string(b)]; ok { // no allocation: the compiler sees the lookup
		return s
	}
	s := string(b)
	if in.m == nil {
		in.m = map[string]string{}
	}
	if len(in.m) < internMax {
		in.m[s] = s
	}
	return s
}

func (d *decoder) string() string {
	if !d.want(wireBytes) {
		return ""
	}
	return string(d.data)
}

// timeParts accumulates the fields written by encoder.time.
type timeParts struct {
	sec     int64
	nsec    uint64
	present bool
}

func (tp *timeParts) time() time.Time {
	if !tp.present {
		return time.Time{}
	}
	return time.Unix(tp.sec, int64(tp.nsec)).UTC()
}

// decodeTime handles field base, base+1, base+2 of a time; it reports
// whether the current field was one of them.
func (d *decoder) decodeTime(base int, tp *timeParts) bool {
	switch d.field {
	case base:
		tp.sec, tp.present = d.int(), true
	case base + 1:
		tp.nsec, tp.present = d.uintN(30), true
		if tp.nsec >= 1e9 {
			d.err = corruptf("nanoseconds %d out of range", tp.nsec)
		}
	case base + 2:
		d.uint()
		tp.present = true
	default:
		return false
	}
	return true
}

func (d *decoder) finish(what string) error {
	if d.err != nil {
		return fmt.Errorf("%s: %w", what, d.err)
	}
	return nil
}

// Field numbers are part of the file format: never renumber or reuse one;
// a new field takes the next free number.

// Part fields.
const (
	partTable       = 1
	partShard       = 2
	partID          = 3
	partLevel       = 4
	partKind        = 5
	partRows        = 6
	partBytes       = 7
	partMinCommit   = 8
	partMaxCommit   = 9
	partMinKey      = 10
	partMaxKey      = 11
	partFile        = 12
	partLocation    = 13
	partCreatedAt   = 14 // and 15, 16 (encoder.time)
	partEpochFrom   = 17
	partEpochTo     = 18
	partExpiresFrom = 19
)

func encodePart(p *Part) []byte {
	e := newEncoder(64 + len(p.MinKey) + len(p.MaxKey) + len(p.File) + len(p.Location))
	e.uint(partTable, p.Table)
	e.uint(partShard, uint64(p.Shard))
	e.uint(partID, p.ID)
	e.uint(partLevel, uint64(p.Level))
	e.uint(partKind, uint64(p.Kind))
	e.uint(partRows, p.Rows)
	e.uint(partBytes, p.Bytes)
	e.uint(partMinCommit, p.MinCommit)
	e.uint(partMaxCommit, p.MaxCommit)
	e.bytes(partMinKey, p.MinKey)
	e.bytes(partMaxKey, p.MaxKey)
	e.string(partFile, p.File)
	e.string(partLocation, p.Location)
	e.time(partCreatedAt, p.CreatedAt)
	if p.Kind == KindAsOf {
		// Only index parts carry an epoch: older records stay byte-identical.
		e.uint(partEpochFrom, p.EpochFrom)
		e.uint(partEpochTo, p.EpochTo)
	}
	if p.ExpiresFrom != 0 {
		e.uint(partExpiresFrom, p.ExpiresFrom)
	}
	return e.b
}

// decodePart decodes a part record. in may be nil; when set, repeated
// strings (locations) share one copy across parts.
func decodePart(b []byte, in *interner) (Part, error) {
	var p Part
	d, err := newDecoder(b, "part")
	if err != nil {
		return p, err
	}
	var created timeParts
	var minKey, maxKey []byte // alias b until copied below
	for d.next() {
		switch d.field {
		case partTable:
			p.Table = d.uint()
		case partShard:
			p.Shard = uint32(d.uintN(32))
		case partID:
			p.ID = d.uint()
		case partLevel:
			p.Level = uint8(d.uintN(8))
		case partKind:
			p.Kind = Kind(d.uintN(8))
		case partRows:
			p.Rows = d.uint()
		case partBytes:
			p.Bytes = d.uint()
		case partMinCommit:
			p.MinCommit = d.uint()
		case partMaxCommit:
			p.MaxCommit = d.uint()
		case partMinKey:
			minKey = d.raw()
		case partMaxKey:
			maxKey = d.raw()
		case partFile:
			p.File = d.string()
		case partLocation:
			p.Location = d.stringIn(in)
		case partEpochFrom:
			p.EpochFrom = d.uint()
		case partEpochTo:
			p.EpochTo = d.uint()
		case partExpiresFrom:
			p.ExpiresFrom = d.uint()
		default:
			d.decodeTime(partCreatedAt, &created)
		}
	}
	p.CreatedAt = created.time()
	// One allocation holds both keys: Open decodes every part, and the
	// garbage collector scans every pointer.
	if n := len(minKey) + len(maxKey); n > 0 {
		buf := make([]byte, n)
		copy(buf, minKey)
		copy(buf[len(minKey):], maxKey)
		if len(minKey) > 0 {
			p.MinKey = buf[:len(minKey):len(minKey)]
		}
		if len(maxKey) > 0 {
			p.MaxKey = buf[len(minKey):]
		}
	}
	return p, d.finish("part")
}

// Shard fields.
const (
	fShardTable = 1
	fShardShard = 2
	fShardLo    = 3
	fShardHi    = 4
	fShardState = 5
)

func encodeShard(s *Shard) []byte {
	e := newEncoder(32)
	e.uint(fShardTable, s.Table)
	e.uint(fShardShard, uint64(s.Shard))
	e.uint(fShardLo, s.Range.Lo)
	e.uint(fShardHi, s.Range.Hi)
	e.uint(fShardState, uint64(s.State))
	return e.b
}

func decodeShard(b []byte) (Shard, error) {
	var s Shard
	d, err := newDecoder(b, "shard")
	if err != nil {
		return s, err
	}
	for d.next() {
		switch d.field {
		case fShardTable:
			s.Table = d.uint()
		case fShardShard:
			s.Shard = uint32(d.uintN(32))
		case fShardLo:
			s.Range.Lo = d.uint()
		case fShardHi:
			s.Range.Hi = d.uint()
		case fShardState:
			s.State = State(d.uintN(8))
		}
	}
	return s, d.finish("shard")
}

// Commit fields.
const (
	commitSeq    = 1
	commitKind   = 2
	commitTables = 3
	commitRows   = 4
	commitAt     = 5 // and 6, 7 (encoder.time)
)

func encodeCommit(c *Commit) []byte {
	n := 32 + len(c.Kind)
	for _, t := range c.Tables {
		n += len(t) + 2
	}
	e := newEncoder(n)
	e.uint(commitSeq, c.Seq)
	e.string(commitKind, c.Kind)
	for _, t := range c.Tables {
		// Repeated field; an empty name would vanish, so Apply rejects it.
		e.string(commitTables, t)
	}
	e.uint(commitRows, c.Rows)
	e.time(commitAt, c.At)
	return e.b
}

// decodeCommit decodes a commit record; in (may be nil) shares table names.
func decodeCommit(b []byte, in *interner) (Commit, error) {
	var c Commit
	d, err := newDecoder(b, "commit")
	if err != nil {
		return c, err
	}
	var at timeParts
	for d.next() {
		switch d.field {
		case commitSeq:
			c.Seq = d.uint()
		case commitKind:
			c.Kind = d.string()
		case commitTables:
			c.Tables = append(c.Tables, d.stringIn(in))
		case commitRows:
			c.Rows = d.uint()
		default:
			d.decodeTime(commitAt, &at)
		}
	}
	c.At = at.time()
	return c, d.finish("commit")
}

// Fields of the small records: a counter or checkpoint value, the
// catalog, a transformation checkpoint.
const (
	valueUint = 1

	catalogCommit = 1
	catalogData   = 2

	transformProcessed = 1
	transformState     = 2
)

func encodeUint(v uint64) []byte {
	e := newEncoder(12)
	e.uint(valueUint, v)
	return e.b
}

func decodeUint(b []byte, what string) (uint64, error) {
	d, err := newDecoder(b, what)
	if err != nil {
		return 0, err
	}
	var v uint64
	for d.next() {
		if d.field == valueUint {
			v = d.uint()
		}
	}
	return v, d.finish(what)
}

func encodeCatalog(c *CatalogUpdate) []byte {
	e := newEncoder(16 + len(c.Data))
	e.uint(catalogCommit, c.Commit)
	e.bytes(catalogData, c.Data)
	return e.b
}

func decodeCatalog(b []byte) (CatalogUpdate, error) {
	var c CatalogUpdate
	d, err := newDecoder(b, "catalog")
	if err != nil {
		return c, err
	}
	for d.next() {
		switch d.field {
		case catalogCommit:
			c.Commit = d.uint()
		case catalogData:
			c.Data = d.bytes()
		}
	}
	return c, d.finish("catalog")
}

// encodeTransform stores Processed and State; the name is the key.
func encodeTransform(t *Transform) []byte {
	e := newEncoder(16 + len(t.State))
	e.uint(transformProcessed, t.Processed)
	e.bytes(transformState, t.State)
	return e.b
}

func decodeTransform(name string, b []byte) (Transform, error) {
	t := Transform{Name: name}
	d, err := newDecoder(b, "transform "+name)
	if err != nil {
		return t, err
	}
	for d.next() {
		switch d.field {
		case transformProcessed:
			t.Processed = d.uint()
		case transformState:
			t.State = d.bytes()
		}
	}
	return t, d.finish("transform " + name)
}

// Keys. Multi-part keys are big-endian so bbolt's byte order is numeric
// order: parts sort by (table, shard, id), commits by seq.

func shardKey(table uint64, shard uint32) []byte {
	k := make([]byte, 12)
	binary.BigEndian.PutUint64(k, table)
	binary.BigEndian.PutUint32(k[8:], shard)
	return k
}

func partKey(table uint64, shard uint32, id uint64) []byte {
	k := make([]byte, 20)
	binary.BigEndian.PutUint64(k, table)
	binary.BigEndian.PutUint32(k[8:], shard)
	binary.BigEndian.PutUint64(k[12:], id)
	return k
}

func seqKey(seq uint64) []byte {
	k := make([]byte, 8)
	binary.BigEndian.PutUint64(k, seq)
	return k
}
