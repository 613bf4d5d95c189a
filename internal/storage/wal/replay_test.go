package wal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-db/strata/internal/vfs"
)

// writeLog writes commits 1..n in one segment, each its own batch, and
// returns its bytes and the offset just past each record.
func writeLog(t *testing.T, n uint64) (data []byte, ends []int) {
	t.Helper()
	m, dir := newMem(t)
	w := mustOpen(t, m, dir, Options{})
	for c := uint64(1); c <= n; c++ {
		if err := w.Commit(context.Background(), c, payloadFor(c)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := vfs.ReadFile(m, filepath.Join(dir, SegmentName(1)))
	if err != nil {
		t.Fatal(err)
	}
	off := headerSize
	for c := uint64(1); c <= n; c++ {
		off += recordHeaderSize + storedLen(payloadFor(c))
		ends = append(ends, off)
	}
	if off != len(data) {
		t.Fatalf("segment is %d bytes, records end at %d", len(data), off)
	}
	return data, ends
}

// logWith returns a Mem holding a log whose segments have the given bytes.
func logWith(t *testing.T, segs ...[]byte) (*vfs.Mem, string) {
	t.Helper()
	m, dir := newMem(t)
	if err := m.MkdirAll(dir); err != nil {
		t.Fatal(err)
	}
	for i, b := range segs {
		if err := vfs.WriteFile(m, filepath.Join(dir, SegmentName(uint64(i+1))), b); err != nil {
			t.Fatal(err)
		}
	}
	return m, dir
}

func fileSize(t *testing.T, fsys vfs.FS, name string) int64 {
	t.Helper()
	st, err := fsys.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// checkTornCut replays a log whose only segment is data, expecting the
// first want records and validEnd bytes to survive, then checks a Writer
// appends after the cut and a second replay finds nothing more to cut.
func checkTornCut(t *testing.T, data []byte, want uint64, validEnd int) {
	t.Helper()
	checkTornOpen(t, data, want, validEnd)
	m, dir := logWith(t, data)
	logger, logs := newLogger()
	var got []rec
	sum, err := Replay(m, dir, 0, logger, func(c uint64, p []byte) error {
		got = append(got, rec{c, append([]byte(nil), p...)})
		return nil
	})
	if err != nil {
		t.Fatalf("replay of %d bytes: %v", len(data), err)
	}
	checkRecords(t, got, seq(1, want))
	if cut := int64(len(data) - validEnd); sum.CutBytes != cut {
		t.Fatalf("%d bytes: cut %d, want %d", len(data), sum.CutBytes, cut)
	}
	seg := filepath.Join(dir, SegmentName(1))
	if size := fileSize(t, m, seg); size != int64(validEnd) {
		t.Fatalf("%d bytes: segment is %d bytes after the cut, want %d", len(data), size, validEnd)
	}
	if cut := len(data) - validEnd; cut > 0 && !strings.Contains(logs.String(), "cut torn tail") {
		t.Fatalf("the cut was not logged: %q", logs.String())
	}
	w := mustOpen(t, m, dir, Options{})
	if err := w.Commit(context.Background(), want+1, payloadFor(want+1)); err != nil {
		t.Fatal(err)
	}
	w.Close()
	got, sum, err = replayAll(t, m, dir, 0)
	if err != nil || sum.CutBytes != 0 {
		t.Fatalf("second replay: %+v %v", sum, err)
	}
	checkRecords(t, got, seq(1, want+1))
}

func TestTornTailEveryLength(t *testing.T) {
	data, ends := writeLog(t, 6)
	for l := 0; l <= len(data); l++ {
		want, validEnd := uint64(0), 0
		if l >= headerSize {
			validEnd = headerSize
		}
		for i, e := range ends {
			if e <= l {
				want, validEnd = uint64(i+1), e
			}
		}
		checkTornCut(t, data[:l], want, validEnd)
	}
}

// TestZeroTail checks zero bytes after the last record of the last
// segment, the unwritten rest of a preallocated one, end the log without
// being damage: Replay keeps them and logs nothing, Open cuts them quietly
// and appends after the last record.
func TestZeroTail(t *testing.T) {
	data, ends := writeLog(t, 4)
	for k, e := range append([]int{headerSize}, ends...) {
		// 3 MiB + 5 crosses the 1 MiB chunks the tail is read back in.
		for _, zeros := range []int{1, 15, 16, 17, 300, 5000, 3<<20 + 5} {
			tail := append(append([]byte(nil), data[:e]...), make([]byte, zeros)...)
			checkZeroTail(t, tail, uint64(k), e)
		}
	}
	// A segment whose header never reached the disk reads as zeros: the
	// torn start of a new segment, cut.
	checkTornCut(t, make([]byte, 100), 0, 0)
}

func checkZeroTail(t *testing.T, data []byte, want uint64, validEnd int) {
	t.Helper()
	checkTornOpen(t, data, want, validEnd)
	m, dir := logWith(t, data)
	logger, logs := newLogger()
	got, sum, err := replayWith(t, m, dir, logger)
	if err != nil || sum.CutBytes != 0 {
		t.Fatalf("%d bytes: replay %+v %v", len(data), sum, err)
	}
	checkRecords(t, got, seq(1, want))
	seg := filepath.Join(dir, SegmentName(1))
	if size := fileSize(t, m, seg); size != int64(len(data)) {
		t.Fatalf("%d bytes: Replay changed the segment to %d bytes", len(data), size)
	}
	w := mustOpen(t, m, dir, Options{Logger: logger})
	if size := fileSize(t, m, seg); size != int64(validEnd) {
		t.Fatalf("%d bytes: segment is %d bytes after Open, want %d", len(data), size, validEnd)
	}
	w.Close()
	if logs.Len() != 0 {
		t.Fatalf("%d bytes: a zero tail was logged: %q", len(data), logs.String())
	}
}

// TestTornBatch checks damage inside the last batch of the last segment
// followed by more of that batch's records is a torn tail: with a
// preallocated segment a power cut during the batch's fsync may keep a
// later page of it and lose an earlier one. A later batch's first record
// after the damage makes it ErrCorrupt, as does damage in a batch that is
// not the last.
func TestTornBatch(t *testing.T) {
	m, dir := newMem(t)
	w := mustOpen(t, m, dir, Options{})
	ctx := context.Background()
	if err := w.Commit(ctx, 1, payloadFor(1)); err != nil { // batch 1: commit 1
		t.Fatal(err)
	}
	for c := uint64(2); c <= 5; c++ { // batch 2: commits 2 to 5
		if err := w.Append(c, payloadFor(c)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	data, err := vfs.ReadFile(m, filepath.Join(dir, SegmentName(1)))
	if err != nil {
		t.Fatal(err)
	}
	ends := []int{headerSize}
	for c := uint64(1); c <= 5; c++ {
		ends = append(ends, ends[c-1]+recordHeaderSize+storedLen(payloadFor(c)))
	}
	zeros := make([]byte, 4096)
	// Commit 3's page lost, commits 4 and 5 kept, zeros after: torn at 3.
	torn := append(append([]byte(nil), data...), zeros...)
	copy(torn[ends[2]:ends[3]], make([]byte, ends[3]-ends[2]))
	checkTornCut(t, torn, 2, ends[2])
	// Batch 2's first record damaged, the rest kept: torn at commit 2.
	torn = append(append([]byte(nil), data...), zeros...)
	torn[ends[1]+recordHeaderSize] ^= 1
	checkTornCut(t, torn, 1, ends[1])
	// Damage in batch 1, followed by batch 2's first record: corrupt.
	bad := append(append([]byte(nil), data...), zeros...)
	bad[headerSize+recordHeaderSize] ^= 1
	checkCorruptBoth(t, bad, headerSize)

	// A later batch whose first record has an empty payload and ends
	// where the zeros begin (its payload checksum is 0) still counts.
	seg := appendHeader(nil, 1)
	seg = appendRecord(seg, 1, payloadFor(1), false, true)
	seg = appendRecord(seg, 300, nil, false, true) // payloadFor(300) is empty
	seg[headerSize+recordHeaderSize] ^= 1
	checkCorruptBoth(t, append(seg, zeros...), headerSize)

	// Damage in the last batch followed by one of its records whose
	// checksums match but whose block does not decode: corrupt for Open
	// (which does not decode records) as for Replay.
	bad = append([]byte(nil), data[:ends[3]]...)
	bad = appendRecord(bad, 4, []byte{0x80, 0x10, 0x00, 'x'}, true, false)
	copy(bad[ends[2]:ends[3]], make([]byte, ends[3]-ends[2]))
	checkCorruptBoth(t, append(bad, zeros...), ends[2])
}

// checkCorruptBoth checks a log whose only segment is data is ErrCorrupt
// at off for Replay and for Open, and that neither changed it.
func checkCorruptBoth(t *testing.T, data []byte, off int) {
	t.Helper()
	m, dir := logWith(t, data)
	_, _, err := replayAll(t, m, dir, 0)
	wantCorrupt(t, err, 1, off)
	_, err = Open(m, dir, Options{Logger: discard()})
	wantCorrupt(t, err, 1, off)
	if size := fileSize(t, m, filepath.Join(dir, SegmentName(1))); size != int64(len(data)) {
		t.Fatalf("a corrupt segment was changed to %d bytes", size)
	}
}

func TestTornTailBadChecksumAtEnd(t *testing.T) {
	data, ends := writeLog(t, 5)
	for _, at := range []int{ends[3] + 2, ends[3] + 9, len(data) - 1} { // length, commit, payload
		torn := append([]byte(nil), data...)
		torn[at] ^= 0x40
		checkTornCut(t, torn, 4, ends[3])
	}
	// A torn write that left the last record's bytes and then garbage of a
	// shorter, already-checked length still cuts at the damaged record.
	torn := append(append([]byte(nil), data[:ends[4]-3]...), 1, 2, 3)
	checkTornCut(t, torn, 4, ends[3])
}

func wantCorrupt(t *testing.T, err error, segment uint64, off int) {
	t.Helper()
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("want ErrCorrupt, got %v", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, SegmentName(segment)) || !strings.Contains(msg, fmt.Sprintf("offset %d:", off)) {
		t.Fatalf("error %q does not name %s offset %d", msg, SegmentName(segment), off)
	}
}

func TestMidLogCorruption(t *testing.T) {
	data, ends := writeLog(t, 5)
	for _, at := range []int{ends[1] + 1, ends[1] + 12, ends[2] - 1} { // record 3: length, header checksum, payload
		bad := append([]byte(nil), data...)
		bad[at] ^= 0x01
		m, dir := logWith(t, bad)
		n := 0
		_, err := Replay(m, dir, 0, discard(), func(uint64, []byte) error { n++; return nil })
		wantCorrupt(t, err, 1, ends[1])
		if size := fileSize(t, m, filepath.Join(dir, SegmentName(1))); size != int64(len(bad)) {
			t.Fatalf("a corrupt segment was truncated to %d", size)
		}
		if _, err := Open(m, dir, Options{Logger: discard()}); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Open of a corrupt log: %v", err)
		}
	}
	// Damage in the header.
	bad := append([]byte(nil), data...)
	bad[3] ^= 0x01
	m, dir := logWith(t, bad)
	_, _, err := replayAll(t, m, dir, 0)
	wantCorrupt(t, err, 1, 0)
}

// rotatedLog writes enough commits for several small segments and returns
// the Mem, the directory and the number of segments.
func rotatedLog(t *testing.T) (*vfs.Mem, string, int) {
	t.Helper()
	m, dir := newMem(t)
	w := mustOpen(t, m, dir, Options{SegmentSize: 1024})
	for c := uint64(1); c <= 40; c++ {
		if err := w.Commit(context.Background(), c, payloadFor(c)); err != nil {
			t.Fatal(err)
		}
	}
	n := w.Stats().Segments
	w.Close()
	if n < 3 {
		t.Fatalf("only %d segments", n)
	}
	return m, dir, n
}

func TestCorruptionInSealedSegment(t *testing.T) {
	// A sealed segment cut short: its tail is not the log's tail.
	m, dir, _ := rotatedLog(t)
	name := filepath.Join(dir, SegmentName(1))
	data, _ := vfs.ReadFile(m, name)
	vfs.WriteFile(m, name, data[:len(data)-5])
	_, _, err := replayAll(t, m, dir, 0)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), SegmentName(1)) || !strings.Contains(err.Error(), "sealed") {
		t.Fatalf("truncated sealed segment: %v", err)
	}

	// A zeroed header in a sealed segment.
	m, dir, _ = rotatedLog(t)
	name = filepath.Join(dir, SegmentName(2))
	data, _ = vfs.ReadFile(m, name)
	copy(data, make([]byte, headerSize))
	vfs.WriteFile(m, name, data)
	_, _, err = replayAll(t, m, dir, 0)
	wantCorrupt(t, err, 2, 0)

	// A segment whose header names another number.
	m, dir, _ = rotatedLog(t)
	two, _ := vfs.ReadFile(m, filepath.Join(dir, SegmentName(2)))
	vfs.WriteFile(m, filepath.Join(dir, SegmentName(1)), two)
	_, _, err = replayAll(t, m, dir, 0)
	wantCorrupt(t, err, 1, 0)

	// A missing segment.
	m, dir, _ = rotatedLog(t)
	m.Remove(filepath.Join(dir, SegmentName(2)))
	_, _, err = replayAll(t, m, dir, 0)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), SegmentName(2)+" is missing") {
		t.Fatalf("missing segment: %v", err)
	}
	if _, err := Open(m, dir, Options{Logger: discard()}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Open with a missing segment: %v", err)
	}
}

func TestUnknownVersion(t *testing.T) {
	data, _ := writeLog(t, 2)
	h := appendHeader(nil, 1)
	h[8] = 9
	// Re-seal the header checksum so only the version is wrong.
	copy(h[20:24], le32(crcOf(h[:20])))
	copy(data, h)
	m, dir := logWith(t, data)
	_, _, err := replayAll(t, m, dir, 0)
	if err == nil || errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "format version 9") {
		t.Fatalf("unknown version: %v", err)
	}
	if !bytes.HasPrefix(data, []byte("STRATAWL")) {
		t.Fatal("magic changed")
	}
}

func le32(v uint32) []byte { return []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)} }

// checkTornOpen opens a Writer straight on a torn log, without a Replay
// first: Open must cut the tail itself, or the next record would sit behind
// the damage and the log would read as corrupt.
func checkTornOpen(t *testing.T, data []byte, want uint64, validEnd int) {
	t.Helper()
	m, dir := logWith(t, data)
	w := mustOpen(t, m, dir, Options{})
	if err := w.Commit(context.Background(), want+1, payloadFor(want+1)); err != nil {
		t.Fatal(err)
	}
	w.Close()
	got, sum, err := replayAll(t, m, dir, 0)
	if err != nil || sum.CutBytes != 0 {
		t.Fatalf("%d bytes, opened without replay: %+v %v", len(data), sum, err)
	}
	checkRecords(t, got, seq(1, want+1))
	if validEnd >= headerSize {
		if size := fileSize(t, m, filepath.Join(dir, SegmentName(1))); size != int64(validEnd+recordHeaderSize+storedLen(payloadFor(want+1))) {
			t.Fatalf("%d bytes: segment is %d bytes after one more record", len(data), size)
		}
	}
}
