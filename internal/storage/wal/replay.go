package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"

	"github.com/strata-db/strata/internal/vfs"
)

// Summary describes what Replay found.
type Summary struct {
	// Segments is the number of segment files read.
	Segments int
	// Records is the number of records passed to the callback.
	Records int
	// Skipped is the number of records at or before the after commit.
	Skipped int
	// LastCommit is the largest commit of any record in the log, skipped
	// or not; zero for an empty log. The engine continues numbering after
	// it (SPEC R5.1: a commit number is never reused).
	LastCommit uint64
	// CutBytes is how many bytes of torn tail were removed from the last
	// segment; in a preallocated one they include its unwritten zeros.
	CutBytes int64
}

// Replay reads every segment of the log in dir in order and calls fn for
// each record whose commit is greater than after, in log order. The payload
// slice is valid only during the call; fn must copy what it keeps. An error
// from fn stops the replay and is returned wrapped.
//
// A torn tail of the last segment (invariant 3) is cut: the file is
// truncated after its last valid record, synced, and the cut is logged
// through logger (slog.Default() if nil). Any other damage returns an error
// that wraps ErrCorrupt and names the segment file and byte offset.
//
// Replay takes the log's lock for its duration, so it fails with an error
// wrapping vfs.ErrLocked while a Writer has the log open. A missing dir is
// an empty log.
func Replay(fsys vfs.FS, dir string, after uint64, logger *slog.Logger, fn func(commit uint64, payload []byte) error) (Summary, error) {
	var sum Summary
	if _, err := fsys.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return sum, nil
	}
	if logger == nil {
		logger = slog.Default()
	}
	lock, err := fsys.Lock(filepath.Join(dir, lockName))
	if err != nil {
		return sum, fmt.Errorf("wal: replay %s: %w", dir, err)
	}
	defer lock.Close()
	nums, err := listSegments(fsys, dir)
	if err != nil {
		return sum, err
	}
	for i, n := range nums {
		last := i == len(nums)-1
		sc, err := replaySegment(fsys, dir, n, last, after, logger, &sum, fn)
		if err != nil {
			return sum, err
		}
		sum.Segments++
		if sc.torn != "" {
			sum.CutBytes += sc.size - sc.end
		}
		sum.LastCommit = max(sum.LastCommit, sc.maxCommit)
	}
	return sum, nil
}

func replaySegment(fsys vfs.FS, dir string, n uint64, last bool, after uint64, logger *slog.Logger,
	sum *Summary, fn func(uint64, []byte) error) (segmentScan, error) {
	path := filepath.Join(dir, SegmentName(n))
	open := fsys.Open
	if last {
		open = fsys.OpenReadWrite // the tail may need cutting
	}
	f, err := open(path)
	if err != nil {
		return segmentScan{}, fmt.Errorf("wal: replay: %w", err)
	}
	defer f.Close()
	sc, err := scanSegment(f, SegmentName(n), n, last, true, func(commit uint64, payload []byte) error {
		if commit <= after {
			sum.Skipped++
			return nil
		}
		sum.Records++
		if err := fn(commit, payload); err != nil {
			return fmt.Errorf("wal: replay %s commit %d: %w", SegmentName(n), commit, err)
		}
		return nil
	})
	if err != nil {
		return sc, err
	}
	if sc.torn != "" {
		if err := cutTail(f, SegmentName(n), sc, logger); err != nil {
			return sc, err
		}
	}
	return sc, nil
}

// segmentScan is what scanning one segment found.
type segmentScan struct {
	size      int64  // file size when scanned
	end       int64  // offset just past the last valid record (or header)
	maxCommit uint64 // largest commit among valid records
	records   int
	torn      string // why the bytes past end are a torn tail; empty if none
	// zeroTail says the bytes past end are all zero: the unwritten rest
	// of a preallocated segment, not damage (torn is empty).
	zeroTail bool
	version  uint32 // the segment header's format version; 0 without a header
}

func corruptf(name string, off int64, format string, args ...any) error {
	return fmt.Errorf("%w: segment %s offset %d: %s", ErrCorrupt, name, off, fmt.Sprintf(format, args...))
}

// scanSegment validates segment num read from f and calls fn for each
// valid record. In the last segment damage that can only be a torn write is
// reported in torn (and not passed to fn); everything else is ErrCorrupt.
// With decode false, compressed payloads are checked (checksum, length)
// but not decompressed, and fn gets nil for them.
func scanSegment(f vfs.File, name string, num uint64, last, decode bool, fn func(commit uint64, payload []byte) error) (segmentScan, error) {
	st, err := f.Stat()
	if err != nil {
		return segmentScan{}, fmt.Errorf("wal: stat %s: %w", name, err)
	}
	sc := segmentScan{size: st.Size()}
	r := &segReader{f: f, size: sc.size, decode: decode, zeros: -1}
	if sc.size < headerSize {
		if last && sc.size == 0 {
			return sc, nil // created, nothing written yet
		}
		if last {
			sc.torn = "short segment header"
			return sc, nil
		}
		return sc, corruptf(name, 0, "segment is %d bytes, shorter than its header", sc.size)
	}
	h, err := r.bytes(0, headerSize)
	if err != nil {
		return sc, fmt.Errorf("wal: read %s: %w", name, err)
	}
	if err := checkHeader(h, name, num); err != nil {
		if last && bytes.Count(h, []byte{0}) == headerSize {
			sc.torn = "zeroed segment header"
			return sc, nil
		}
		if last {
			// A preallocated segment whose header write failed or was
			// torn holds nothing after it: nothing was ever written
			// there, let alone synced.
			zeros, zerr := r.zeroTail()
			if zerr != nil {
				return sc, fmt.Errorf("wal: read %s: %w", name, zerr)
			}
			if zeros <= headerSize {
				sc.torn = "torn segment header with nothing after it"
				return sc, nil
			}
		}
		return sc, err
	}
	sc.version = binary.LittleEndian.Uint32(h[8:12])
	r.version = sc.version
	off := int64(headerSize)
	for off < sc.size {
		state, length, commit, payload, err := r.readRecord(off)
		if err != nil {
			return sc, fmt.Errorf("wal: read %s: %w", name, err)
		}
		if state.damaged() {
			// Its checksums match: not a torn write, wherever it is.
			return sc, corruptf(name, off, "%s (stored length %d)", state, length)
		}
		if state != recordOK {
			if !last {
				return sc, corruptf(name, off, "%s (claimed length %d) in a sealed segment", state, length)
			}
			if sc.version >= 3 {
				return sc, r.batchTail(&sc, name, off, state, length)
			}
			follow, err := r.validRecordAfter(off)
			if err != nil {
				return sc, fmt.Errorf("wal: read %s: %w", name, err)
			}
			if follow >= 0 {
				return sc, corruptf(name, off, "%s (claimed length %d) followed by a valid record at offset %d", state, length, follow)
			}
			sc.end = off
			sc.torn = state.String()
			return sc, nil
		}
		if err := fn(commit, payload); err != nil {
			return sc, err
		}
		sc.records++
		sc.maxCommit = max(sc.maxCommit, commit)
		off += recordHeaderSize + int64(length)
	}
	sc.end = off
	return sc, nil
}

func checkHeader(h []byte, name string, num uint64) error {
	if !bytes.Equal(h[0:8], magic[:]) {
		return corruptf(name, 0, "bad magic %q", h[0:8])
	}
	if got, want := binary.LittleEndian.Uint32(h[20:24]), crcOf(h[:20]); got != want {
		return corruptf(name, 0, "header checksum mismatch")
	}
	if v := binary.LittleEndian.Uint32(h[8:12]); v < minFormatVersion || v > formatVersion {
		return fmt.Errorf("wal: segment %s: format version %d, this build reads versions %d to %d", name, v, minFormatVersion, formatVersion)
	}
	if n := binary.LittleEndian.Uint64(h[12:20]); n != num {
		return corruptf(name, 0, "header says segment %d", n)
	}
	return nil
}

// validRecordAfter looks for a valid record starting anywhere after the
// damaged one at off and returns its offset, or -1. Every offset is tried,
// because a damaged length field says nothing about where the next record
// starts; the header checksum makes each try cost a 12-byte CRC, and only
// a matching header costs a payload CRC. A torn write leaves nothing valid
// after the damage; anything else does (invariant 4).
func (r *segReader) validRecordAfter(off int64) (int64, error) {
	for p := off + 1; p+recordHeaderSize <= r.size; p++ {
		h, err := r.bytes(p, recordHeaderSize)
		if err != nil {
			return 0, err
		}
		if crcOf(h[0:12]) != binary.LittleEndian.Uint32(h[12:16]) {
			continue
		}
		state, _, _, _, err := r.readRecord(p)
		if err != nil {
			return 0, err
		}
		// A record whose checksums match but whose payload does not
		// decode (or is compressed where it cannot be) was written whole: it proves the damage is not a torn
		// tail as surely as a good one (and is ErrCorrupt itself), so
		// Replay and Open answer alike.
		if state == recordOK || state.damaged() {
			return p, nil
		}
	}
	return -1, nil
}

// batchTail classifies what follows the bad record at off in the last
// segment of format version 3, which the Writer may have preallocated
// with zeros. Only zero bytes after off are the segment's unwritten
// rest: the log ends at off, nothing is cut (sc.zeroTail). Otherwise the
// bytes from off are the torn last batch only if no later batch begins
// after them. The Writer writes a batch only after the one before it is
// synced, so a batch's first record (flagBatch) after the damage proves
// the damaged batch was complete on disk: ErrCorrupt. Records without the
// flag may follow: a preallocated file has no size update to order its
// pages, and a power cut during the last batch's fsync can keep a later
// page of that batch and lose an earlier one.
func (r *segReader) batchTail(sc *segmentScan, name string, off int64, state recordState, length int) error {
	zeros, err := r.zeroTail()
	if err != nil {
		return fmt.Errorf("wal: read %s: %w", name, err)
	}
	sc.end = off
	if off >= zeros {
		sc.zeroTail = true
		return nil
	}
	// Open reads without decoding; a record whose checksums match but
	// whose block does not decode must be ErrCorrupt here for Open as
	// for Replay, so blocks are decoded from now on.
	r.decode = true
	for p := off + 1; p < zeros && p+recordHeaderSize <= r.size; p++ {
		h, err := r.bytes(p, recordHeaderSize)
		if err != nil {
			return fmt.Errorf("wal: read %s: %w", name, err)
		}
		if crcOf(h[0:12]) != binary.LittleEndian.Uint32(h[12:16]) {
			continue
		}
		st, n, _, _, err := r.readRecord(p)
		if err != nil {
			return fmt.Errorf("wal: read %s: %w", name, err)
		}
		switch {
		case st.damaged():
			return corruptf(name, off, "%s (claimed length %d) followed by a record written whole at offset %d", state, length, p)
		case st == recordOK && r.first:
			return corruptf(name, off, "%s (claimed length %d) followed by a later batch at offset %d", state, length, p)
		case st == recordOK:
			p += recordHeaderSize + int64(n) - 1 // a later part of the torn batch
		}
	}
	sc.torn = state.String()
	return nil
}

func cutTail(f vfs.File, name string, sc segmentScan, logger *slog.Logger) error {
	if err := f.Truncate(sc.end); err != nil {
		return fmt.Errorf("wal: cut torn tail of %s: %w", name, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("wal: cut torn tail of %s: %w", name, err)
	}
	logger.Warn("wal: cut torn tail", "segment", name, "offset", sc.end, "bytes", sc.size-sc.end, "reason", sc.torn)
	return nil
}
