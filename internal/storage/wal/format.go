package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/s2"

	"github.com/strata-db/strata/internal/vfs"
)

// The on-disk format; doc.go draws it.
const (
	// headerSize is the size of a segment header.
	headerSize = 24
	// recordHeaderSize is the size of a record's framing before its payload.
	recordHeaderSize = 20
	// formatVersion is the segment format this package writes. Version 2
	// added compressed payloads (flagS2), version 3 marks the first record
	// of each batch (flagBatch) so that a preallocated segment's torn last
	// batch can be told from damage (doc.go, invariant 3). Replay reads
	// versions 1 to 3, and Open starts a new segment rather than append to
	// an older one, so a build that reads only older versions refuses the
	// log clearly instead of misreading it.
	formatVersion = 3
	// minFormatVersion is the oldest segment format Replay reads.
	minFormatVersion = 1
	// flagS2 is set in a record's length field when its payload is stored
	// as an S2 block (github.com/klauspost/compress/s2); the low bits are
	// the stored length. Version 1 writers never set it: a length that
	// large exceeds MaxPayload.
	flagS2 = 1 << 31
	// flagBatch is set in a version 3 record's length field when the
	// record is the first of a batch (one write, one fsync). Lengths stay
	// at most MaxPayload (1 << 29), so the bit is free; in versions 1 and 2
	// it is part of the length, which it makes too large.
	flagBatch = 1 << 30
	// compressMin is the smallest payload the Writer tries to compress: a
	// DDL commit or a single-row write gains nothing worth a decode.
	compressMin = 128
	// MaxPayload is the largest payload one record may carry. Larger writes
	// must be split by the caller; Replay treats a larger length as damage.
	MaxPayload = 512 << 20
	// DefaultSegmentSize is the size at which the Writer starts a new
	// segment unless Options say otherwise. Segments are removed whole, so
	// the segment holding a flush's checkpoint stays on disk until the
	// next flush: 4 MiB keeps that small (at 64 MiB it was most of the
	// bytes on disk after the benchmark's ingest) and costs one file
	// creation and directory fsync per 4 MiB of log.
	DefaultSegmentSize = 4 << 20

	segmentPrefix = "wal-"
	segmentSuffix = ".log"
	segmentDigits = 12
	lockName      = "LOCK"
	readChunk     = 1 << 20
)

var magic = [8]byte{'S', 'T', 'R', 'A', 'T', 'A', 'W', 'L'}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrCorrupt is wrapped by every error that reports damage to the log that
// cannot be a torn write at its tail (invariant 4): the error's text names
// the segment file and byte offset.
var ErrCorrupt = errors.New("wal: corrupt log")

// ErrClosed is returned by a Writer after Close.
var ErrClosed = errors.New("wal: writer closed")

// ErrTooLarge is returned for a payload longer than MaxPayload; it does not
// fail the Writer.
var ErrTooLarge = errors.New("wal: payload too large")

// SegmentName returns the file name of segment n.
func SegmentName(n uint64) string {
	s := strconv.FormatUint(n, 10)
	if len(s) < segmentDigits {
		s = strings.Repeat("0", segmentDigits-len(s)) + s
	}
	return segmentPrefix + s + segmentSuffix
}

// parseSegmentName returns the number of a segment file name, or false if
// the name is not one this package writes.
func parseSegmentName(name string) (uint64, bool) {
	if len(name) != len(segmentPrefix)+segmentDigits+len(segmentSuffix) ||
		!strings.HasPrefix(name, segmentPrefix) || !strings.HasSuffix(name, segmentSuffix) {
		return 0, false
	}
	digits := name[len(segmentPrefix) : len(segmentPrefix)+segmentDigits]
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || n == 0 {
		return 0, false
	}
	return n, true
}

// listSegments returns the segment numbers in dir, ascending, and checks
// they are consecutive: a gap means a segment was lost (invariant 5).
func listSegments(fsys vfs.FS, dir string) ([]uint64, error) {
	names, err := fsys.List(dir)
	if err != nil {
		return nil, fmt.Errorf("wal: list %s: %w", dir, err)
	}
	var nums []uint64
	for _, name := range names {
		if n, ok := parseSegmentName(name); ok {
			nums = append(nums, n)
		}
	}
	// List is sorted and the names have fixed width, so nums is ascending.
	for i := 1; i < len(nums); i++ {
		if nums[i] != nums[i-1]+1 {
			return nil, fmt.Errorf("%w: segment %s is missing (have %s and %s)",
				ErrCorrupt, SegmentName(nums[i-1]+1), SegmentName(nums[i-1]), SegmentName(nums[i]))
		}
	}
	return nums, nil
}

func appendHeader(dst []byte, seg uint64) []byte {
	var h [headerSize]byte
	copy(h[0:8], magic[:])
	binary.LittleEndian.PutUint32(h[8:12], formatVersion)
	binary.LittleEndian.PutUint64(h[12:20], seg)
	binary.LittleEndian.PutUint32(h[20:24], crcOf(h[:20]))
	return append(dst, h[:]...)
}

// appendRecord frames one record onto dst; stored is the payload as it
// goes to disk, an S2 block when s2 is set; first marks the first record
// of a batch.
func appendRecord(dst []byte, commit uint64, stored []byte, s2, first bool) []byte {
	start := len(dst)
	dst = append(dst, make([]byte, recordHeaderSize)...)
	h := dst[start:]
	length := uint32(len(stored))
	if s2 {
		length |= flagS2
	}
	if first {
		length |= flagBatch
	}
	binary.LittleEndian.PutUint32(h[0:4], length)
	binary.LittleEndian.PutUint64(h[4:12], commit)
	binary.LittleEndian.PutUint32(h[12:16], crcOf(h[0:12]))
	binary.LittleEndian.PutUint32(h[16:20], crcOf(stored))
	return append(dst, stored...)
}

// encoders pools the scratch buffers payloads are compressed into before
// they are framed, so an append allocates nothing in steady state.
var encoders = sync.Pool{New: func() any { return new([]byte) }}

// compress returns the bytes to store for payload: an S2 block in *buf
// (grown as needed) when that is smaller, else payload itself. S2 was
// chosen over zstd for the commit path: on the benchmark's 1000-row
// commits it halves the payload (2.0×; zstd level 1: 2.7×) at a quarter
// of zstd's CPU, about 160 µs per 137 KB commit, under 1 % of a commit's
// cost (docs/benchmarks.md, "Bytes on disk").
func compress(buf *[]byte, payload []byte) (stored []byte, s2ed bool) {
	if len(payload) < compressMin {
		return payload, false
	}
	n := s2.MaxEncodedLen(len(payload))
	if n < 0 {
		return payload, false
	}
	if cap(*buf) < n {
		*buf = make([]byte, n)
	}
	enc := s2.Encode((*buf)[:n], payload)
	if len(enc) >= len(payload) {
		return payload, false
	}
	return enc, true
}

func crcOf(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// segReader serves byte ranges of a segment from a chunk buffer, so a scan
// issues one ReadAt per MiB rather than two per record.
type segReader struct {
	f    vfs.File
	size int64
	buf  []byte
	base int64
	// decode says whether readRecord decompresses payloads (Replay) or
	// only checks their framing and checksums (Open, RemoveBefore); dec
	// is the buffer it decompresses into.
	decode bool
	dec    []byte
	// version is the segment's format version: a version 1 segment
	// holds no compressed records.
	version uint32
	// first says whether the record readRecord last found good (or
	// damaged) is marked as the first of its batch (version 3).
	first bool
	// zeros is where the segment's trailing run of zero bytes starts (the
	// file's size if it ends in a nonzero byte); -1 until zeroTail
	// computes it.
	zeros int64
}

// zeroTail returns the offset from which the rest of the segment is all
// zero bytes: the unwritten part of a preallocated segment. It reads the
// file backwards once and remembers the answer.
func (r *segReader) zeroTail() (int64, error) {
	if r.zeros >= 0 {
		return r.zeros, nil
	}
	end := r.size
	for end > 0 {
		start := max(end-readChunk, 0)
		b, err := r.bytes(start, int(end-start))
		if err != nil {
			return 0, err
		}
		i := len(b) - 1
		for i >= 0 && b[i] == 0 {
			i--
		}
		if i >= 0 {
			end = start + int64(i) + 1
			break
		}
		end = start
	}
	r.zeros = end
	return end, nil
}

// bytes returns the n bytes at off, which must lie within the file. The
// slice is valid until the next call.
func (r *segReader) bytes(off int64, n int) ([]byte, error) {
	if off >= r.base && off+int64(n) <= r.base+int64(len(r.buf)) {
		return r.buf[off-r.base : off-r.base+int64(n)], nil
	}
	want := int64(max(n, readChunk))
	want = min(want, r.size-off)
	if int64(cap(r.buf)) < want {
		r.buf = make([]byte, want)
	}
	r.buf = r.buf[:want]
	k, err := r.f.ReadAt(r.buf, off)
	if int64(k) < want {
		r.buf = r.buf[:0]
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	r.base = off
	return r.buf[:n], nil
}

// recordState classifies the bytes at an offset.
type recordState uint8

const (
	recordOK        recordState = iota
	recordShort                 // the framing or payload runs past the end of the file
	recordBadHeader             // the header checksum does not match
	recordBadCRC                // the header is good but the payload checksum is not
	recordBadBlock              // checksums match but the compressed payload does not decode
	recordBadFlag               // checksums match but the record is compressed in a version 1 segment
)

var recordStateNames = [...]string{"ok", "short record", "header checksum mismatch", "payload checksum mismatch", "compressed payload does not decode",
	"compressed record in a version 1 segment, whose writers never compressed"}

// damaged reports whether s is damage wherever it occurs: the record's
// checksums match, so its bytes are what was written and it is not a torn
// write.
func (s recordState) damaged() bool { return s == recordBadBlock || s == recordBadFlag }

func (s recordState) String() string { return recordStateNames[s] }

// readRecord reads the record at off. For recordOK it returns the commit
// and payload (valid until the next read), and the payload length whenever
// the header is good.
func (r *segReader) readRecord(off int64) (st recordState, length int, commit uint64, payload []byte, err error) {
	if r.size-off < recordHeaderSize {
		return recordShort, 0, 0, nil, nil
	}
	h, err := r.bytes(off, recordHeaderSize)
	if err != nil {
		return 0, 0, 0, nil, err
	}
	if crcOf(h[0:12]) != binary.LittleEndian.Uint32(h[12:16]) {
		return recordBadHeader, 0, 0, nil, nil
	}
	field := binary.LittleEndian.Uint32(h[0:4])
	length = int(field &^ flagS2)
	r.first = false
	if r.version >= 3 {
		length = int(field &^ (flagS2 | flagBatch))
		r.first = field&flagBatch != 0
	}
	commit = binary.LittleEndian.Uint64(h[4:12])
	want := binary.LittleEndian.Uint32(h[16:20])
	if length > MaxPayload || r.size-off-recordHeaderSize < int64(length) {
		// The writer never frames more than MaxPayload, so a good header
		// with a longer length cannot occur; treat it as short.
		return recordShort, length, 0, nil, nil
	}
	all, err := r.bytes(off, recordHeaderSize+length)
	if err != nil {
		return 0, 0, 0, nil, err
	}
	payload = all[recordHeaderSize:]
	if crcOf(payload) != want {
		return recordBadCRC, length, 0, nil, nil
	}
	if field&flagS2 != 0 && r.version < 2 {
		return recordBadFlag, length, 0, nil, nil
	}
	if field&flagS2 != 0 {
		// The checksum matched, so these are the bytes the writer wrote:
		// a block that does not decode is damage, never a torn write.
		n, err := s2.DecodedLen(payload)
		if err != nil || n > MaxPayload {
			return recordBadBlock, length, 0, nil, nil
		}
		if !r.decode {
			return recordOK, length, commit, nil, nil
		}
		// The block states its decoded length, up to MaxPayload, and a
		// corrupt one can state 512 MiB in a few bytes: s2Valid proves the
		// block's elements produce exactly that many bytes before any of
		// it is allocated.
		if !s2Valid(payload, n) {
			return recordBadBlock, length, 0, nil, nil
		}
		if cap(r.dec) < n {
			r.dec = make([]byte, n)
		}
		if payload, err = s2.Decode(r.dec[:n], payload); err != nil {
			return recordBadBlock, length, 0, nil, nil
		}
	}
	return recordOK, length, commit, payload, nil
}

// s2Valid reports whether the S2 block b, whose header states n decoded
// bytes, decodes to exactly n bytes: it walks the block's elements as
// s2.Decode does (klauspost/compress/s2, decode_other.go), checking every
// length and offset, but writes nothing, so a block that claims more
// than its elements produce costs no allocation. A record that passes
// holds n bytes of output the writer could have written (n ≤ MaxPayload).
func s2Valid(b []byte, n int) bool {
	_, k := binary.Uvarint(b)
	if k <= 0 {
		return false
	}
	src := b[k:]
	d, s, offset := 0, 0, 0
	for s < len(src) {
		var length int
		switch src[s] & 3 {
		case 0: // literal
			x := int(src[s] >> 2)
			s++
			if x >= 60 {
				w := x - 59 // 1 to 4 bytes of length
				if s+w > len(src) {
					return false
				}
				x = 0
				for i := w - 1; i >= 0; i-- {
					x = x<<8 | int(src[s+i])
				}
				s += w
			}
			length = x + 1
			if length > n-d || length > len(src)-s {
				return false
			}
			d += length
			s += length
			continue
		case 1: // copy with a 1-byte offset, or a repeat
			if s+2 > len(src) {
				return false
			}
			toffset := int(src[s])&0xe0<<3 | int(src[s+1])
			length = int(src[s]) >> 2 & 7
			s += 2
			if toffset == 0 {
				extra := [8]int{5: 1, 6: 2, 7: 3}[length]
				if s+extra > len(src) {
					return false
				}
				switch length {
				case 5:
					length = int(src[s]) + 4
				case 6:
					length = int(binary.LittleEndian.Uint16(src[s:])) + 1<<8
				case 7:
					length = (int(src[s+2])<<16 | int(src[s+1])<<8 | int(src[s])) + 1<<16
				}
				s += extra
			} else {
				offset = toffset
			}
			length += 4
		case 2: // copy with a 2-byte offset
			if s+3 > len(src) {
				return false
			}
			offset = int(binary.LittleEndian.Uint16(src[s+1:]))
			length = 1 + int(src[s])>>2
			s += 3
		default: // copy with a 4-byte offset
			if s+5 > len(src) {
				return false
			}
			offset = int(binary.LittleEndian.Uint32(src[s+1:]))
			length = 1 + int(src[s])>>2
			s += 5
		}
		if offset <= 0 || d < offset || length > n-d {
			return false
		}
		d += length
	}
	return d == n
}
